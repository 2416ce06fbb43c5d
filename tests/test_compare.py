import numpy as np
import pytest

import ldr
from ldr.objectives import LDA, PCA, WDA
from ldr.solvers import SCF


def test_compare_solvers_on_lda_agree_and_beat_the_heuristic():
    X, y = ldr.datasets.make_lda(8, r=2, n_per_class=150, seed=4)
    cmp = ldr.compare(LDA(X, y, 2), ["trust-region", "gradient", "ism"], starts=2, random_state=0,
                      tol=1e-9)
    assert len(cmp.rows) == 6 and all(row["converged"] for row in cmp.rows)
    assert {row["answer"] for row in cmp.rows} == {"A"}  # one answer: the global optimum
    assert all(row["improvement"] > 0 for row in cmp.rows)
    assert "trust-region" in cmp.table() and "A" in str(cmp)


def test_compare_shows_which_fixed_point_each_start_reached():
    X, y = ldr.datasets.make_wda(240, seed=0)
    obj = WDA(X, y, 2, reg=0.1)
    cmp = ldr.compare(obj, [SCF()], starts=6, random_state=3, xtol=1e-6)
    answers = {row["answer"] for row in cmp.rows}
    assert "A" in answers
    # answers are distinct subspaces, labelled from the lowest cost up
    for a in cmp.answers:
        for b in cmp.answers:
            if a != b:
                i, j = list(cmp.answers).index(a), list(cmp.answers).index(b)
                assert cmp.answer_distances[i, j] > 1e-4
    costs = {row["answer"]: row["cost"] for row in cmp.rows}
    assert sorted(costs, key=costs.get) == sorted(costs)


def test_compare_plot_and_bad_starts(pca_data):
    import matplotlib

    matplotlib.use("Agg")
    cmp = ldr.compare(PCA(pca_data, 2), ["trust-region"], starts=["heuristic", "random"])
    assert cmp.plot() is not None
    assert cmp.rows[0]["improvement"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="starts"):
        ldr.compare(PCA(pca_data, 2), starts=0)
    np.testing.assert_equal(len(cmp.answers), 1)


def test_compare_tables_summary_and_certificates(pca_data):
    obj = PCA(pca_data, 2)
    cmp = ldr.compare(obj, ["trust-region", "gradient"], n_starts=2, random_state=1, tol=1e-9,
                      tol_scale=1.0)
    assert cmp.meta["starts"] == ["rand0", "rand1"]
    for row in cmp.rows:  # certificate of a local minimum at the PCA optimum
        assert row["grad_norm"] < 1e-8 and row["hess_min"] > 0
        assert row["sin_to_A"] < 1e-6
    summary = {s["solver"]: s for s in cmp.summary()}
    assert summary["gradient"]["converged"] == "2/2" and summary["gradient"]["at_A"] == "2/2"
    assert summary["trust-region"]["best_cost"] == pytest.approx(obj.cost(obj.heuristic()))
    md = cmp.to_markdown()
    assert md.startswith("| solver | start | cost |") and md.count("\n| ") == 4
    assert "| trust-region |" in cmp.to_markdown(per="solver")
    df = cmp.to_pandas()
    assert list(df["solver"]) == ["trust-region"] * 2 + ["gradient"] * 2
    assert np.allclose(df["cost"], [row["cost"] for row in cmp.rows])
    assert len(cmp.to_pandas(per="solver")) == 2
    with pytest.raises(ValueError, match="per"):
        cmp.table(per="start")


def test_compare_plot_shows_median_and_spread_per_solver(pca_data):
    import matplotlib

    matplotlib.use("Agg")
    cmp = ldr.compare(PCA(pca_data, 2), ["trust-region", "gradient"], n_starts=3, tol=1e-10)
    axes = cmp.plot()
    lines = axes[1].get_lines()
    assert [ln.get_label() for ln in lines] == ["trust-region (median of 3)",
                                               "gradient (median of 3)"]
    # the median gap of every solver reaches rounding level
    assert all(ln.get_ydata()[-1] < 1e-8 for ln in lines)
    assert len(axes[0].collections) == 2  # one spread band per solver


def test_compare_plot_puts_each_iterate_at_its_recorded_iteration(pca_data):
    """A run whose trace skips iterations (a solver run as one step records its start and
    its end) is drawn at its iteration numbers, not at its positions in the trace."""
    import matplotlib

    matplotlib.use("Agg")
    cmp = ldr.compare(PCA(pca_data, 2), ["gradient"], n_starts=1, tol=1e-10)
    res = next(iter(cmp.results.values()))
    n = res.n_iter
    res.trace.rows = [res.trace.rows[0], res.trace.rows[-1]]  # start and end only
    line = cmp.plot()[1].get_lines()[0]
    assert line.get_xdata()[-1] == n
    gap = line.get_ydata()
    assert gap[n - 1] == gap[0] > gap[n]  # held at the start's gap until the recorded end


def test_answers_are_compared_as_fits_the_manifold():
    """sin θ on Grassmann, ‖ΔM‖₂ on Stiefel (each the manifold's own step measure), the
    relative cost difference as soon as a factor is Euclidean."""
    from ldr.driver.answers import answer_distance, distance_kind
    from ldr.manifolds import Euclidean, Grassmann, Product, Stiefel

    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    R = np.array([[0.0, -1.0], [1.0, 0.0]])  # a rotation inside the span
    grass, stief = Grassmann(5, 2), Stiefel(5, 2)
    assert distance_kind(grass) == "sin" and distance_kind(stief) == "norm"
    assert answer_distance(grass, (Q, 1.0), (Q @ R, 2.0)) < 1e-12  # the same subspace
    assert answer_distance(stief, (Q, 1.0), (Q @ R, 2.0)) == pytest.approx(np.sqrt(2))
    # at one cost, a rotated basis of the same span is the same answer on Stiefel (costs
    # invariant to M → MQ: LDA's ratio, CCA's joint rotation), another span is not
    assert answer_distance(stief, (Q, 1.0), (Q @ R, 1.0)) < 1e-12
    Q2 = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    assert answer_distance(stief, (Q, 1.0), (Q2, 1.0)) > 0.1
    batch = Stiefel(5, 2, k=3)
    stack = np.stack([Q, Q2, Q])
    assert answer_distance(batch, (stack, 1.0), (stack @ R, 1.0)) < 1e-12
    eucl = Product(Euclidean(5, 2), Euclidean(5, 1))
    assert distance_kind(eucl) == "cost" and distance_kind(
        Product(Stiefel(5, 2), Euclidean(3, 1))) == "cost"
    W = rng.standard_normal((5, 2))
    assert answer_distance(eucl, ((W, W[:, :1]), 4.0), ((-W, W[:, :1]), 4.0)) == 0.0
    assert answer_distance(eucl, ((W, W[:, :1]), 4.0), ((W, W[:, :1]), 5.0)) == \
        pytest.approx(0.2)


def test_runs_at_one_optimum_on_stiefel_share_a_letter():
    """LDA's ratio declared on Stiefel is invariant to M → MQ: runs from different random
    starts reach rotated bases of the same optimal span and must be one answer."""
    X, y = ldr.datasets.load("wine")
    cmp = ldr.compare(LDA(X, y, 2, manifold="stiefel"), ["trust-region"], starts=3,
                      certify=False)
    assert {row["answer"] for row in cmp.rows} == {"A"}


def test_a_start_given_twice_is_two_runs():
    X, y = ldr.datasets.load("wine")
    cmp = ldr.compare(LDA(X, y, 2), ["trust-region"], starts=["heuristic", "heuristic", None],
                      certify=False)
    assert [row["start"] for row in cmp.rows] == ["heuristic", "heuristic#2", "None"]
    assert len(cmp.results) == 3 and {row["answer"] for row in cmp.rows} == {"A"}


def test_verdict_and_legend():
    X, y = ldr.datasets.load("wine")
    cmp = ldr.compare(LDA(X, y, 2), ["trust-region", SCF()], starts=1)
    verdicts = {row["solver"]: row["verdict"] for row in cmp.rows}
    assert verdicts == {"trust-region": "global min", "scf": "not global"}
    from ldr.driver.answers import verdict

    assert verdict(False) == "NOT conv." and verdict(True) == "converged"
    for wide in (False, True):
        legend = cmp.legend(wide=wide)
        for table in ("run", "solver"):
            header = cmp.table(table, wide=wide, notes=False).split("\n")[0]
            for name in [h for h in header.split("  ") if h.strip()]:
                assert f"\n  {name.strip()}  " in legend, name
    narrow = cmp.table()
    assert max(map(len, narrow.split("\n"))) <= 80 and "reason" not in narrow
    assert "reason" in cmp.table(wide=True)


# --- issue 23 -------------------------------------------------------------------------
def test_a_solver_that_cannot_run_the_objective_is_skipped_with_a_note():
    """ISM needs a Φ-oracle, SCF a pencil: on PPCA (neither) they are skipped, the others
    run, and the table says why (it used to abort the whole comparison)."""
    from ldr.objectives import PPCA

    X, _ = ldr.datasets.load("wine")
    events = []
    cmp = ldr.compare(PPCA(X, 2), ["ism", "trust-region", ["scf", "trust-region"]], starts=1,
                      progress=lambda event, info: events.append((event, info)))
    assert [row["solver"] for row in cmp.rows] == ["trust-region"]
    assert set(cmp.meta["skipped"]) == {"ism", "scf → trust-region"}
    assert "phi" in cmp.meta["skipped"]["ism"] and "pencil" in cmp.meta["skipped"][
        "scf → trust-region"]
    text = " ".join(cmp.table().split())
    assert "skipped ism: solver 'ism' needs the objective to define phi" in text
    assert [e for e, _ in events].count("skipped") == 2
    with pytest.raises(ValueError, match="needs the objective to define phi"):
        ldr.solve(PPCA(X, 2), "ism")  # ldr.solve itself still refuses


def test_nca_at_its_plateau_is_not_called_a_saddle():
    """NCA's supremum lies at ‖L‖ → ∞: a converged run sits on a plateau where every
    Hessian eigenvalue is ≈ 0 (λmin ≈ −1e-8 against a gradient scale of 77); it used to be
    "saddle" on every run."""
    from ldr.objectives import NCA

    X, y = ldr.datasets.load("iris")
    cmp = ldr.compare(NCA(X, y, 2), ["trust-region"], starts=2)
    assert all(row["converged"] for row in cmp.rows)
    assert {row["verdict"] for row in cmp.rows} == {"plateau"}
    assert all(row["hess_min"] < 0 for row in cmp.rows)  # negative at rounding level
    legend = " ".join(cmp.legend().split())
    assert "plateau: gradient ≈ 0 and every Hessian eigenvalue within √gtol" in legend
    assert "saddle:" not in legend  # only the verdicts in the table are explained
    # the cost-distance entry speaks of this manifold, not of PPCA's and FA's symmetries
    assert "on R^{4×2}, with a Euclidean factor" in legend
    assert "PPCA" not in legend and "FA" not in legend


def test_a_real_saddle_is_still_a_saddle(pca_data):
    """PCA at the span of eigenvectors 1, 2 and 4: a critical point with a clearly negative
    curvature (the gap λ3 − λ4), not flat."""
    obj = PCA(pca_data, 3)
    w, V = np.linalg.eigh(obj.C)
    saddle = V[:, [-1, -2, -4]]
    cmp = ldr.compare(obj, ["trust-region"], starts=[saddle], max_iter=1, tol=1e-6)
    cert = ldr.certificate(obj, saddle)
    assert cert.second_order == "negative"
    assert cert.hess_min == pytest.approx(-2 * (w[-3] - w[-4]), rel=1e-6)
    from ldr.driver.answers import verdict

    assert verdict(True, cert) == "not global"  # PCA's global test first
    import dataclasses

    assert verdict(True, dataclasses.replace(cert, global_gap=None)) == "saddle"
    assert cmp.rows[0]["converged"] and cmp.rows[0]["verdict"] == "not global"


@pytest.mark.parametrize("hess_min, hess_max, grad_scale, word", [
    (-9.3e-9, 3.4e-5, 77.0, "plateau"),     # NCA on iris: everything ≈ 0
    (-1e-6, 40.0, 3.8, "flat"),             # a negative curvature 2.5e-8 of the largest
    (-0.2, 40.0, 3.8, "negative"),          # a saddle
    (1e-3, 40.0, 3.8, "positive"),
    (-1e-12, 40.0, 3.8, "positive"),        # rounding: psd's relative tolerance 1e-8
    (float("nan"), float("nan"), 3.8, "unknown"),
])
def test_second_order_reading_of_the_spectrum(hess_min, hess_max, grad_scale, word):
    from ldr.core.result import Certificate
    from ldr.driver.answers import SECOND_ORDER

    cert = Certificate(grad_norm=1e-9, hess_min=hess_min, hess_max=hess_max, dim=8,
                       tol=1e-8, hess_tol=1e-8, method="dense eigh", grad_scale=grad_scale)
    assert cert.second_order == word
    assert SECOND_ORDER[word] in ("local min", "local min (flat)", "plateau", "saddle",
                                  "converged")


def test_conclusion_without_a_heuristic_says_so():
    import autograd.numpy as anp

    D = np.diag(np.arange(1.0, 7.0))

    @ldr.objective(shape=(6, 2), manifold="stiefel")
    def brockett(M):
        return anp.trace(M.T @ D @ M @ np.diag([1.0, 2.0]))

    cmp = ldr.compare(brockett, ["trust-region"], starts=2)
    text = cmp.conclusion()
    assert text.startswith(f"Best answer: A, cost {cmp.best_cost:.10g} (trust-region from "
                           "rand")
    assert "reached by 2 of 2 runs: a certified local minimum (no global test is known" in text
    assert text.endswith("The method has no eigenvector heuristic to compare with.")
    assert cmp.best_cost == pytest.approx(2 * 1 + 1 * 2, rel=1e-8)  # weights on λ1, λ2
