"""SCF, the WDA objective and estimators (small sizes; the full study is benchmarks/)."""

import warnings

import numpy as np
import pytest
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import KNeighborsClassifier

import ldr
from ldr.estimators import WassersteinDA, WDAClustering
from ldr.objectives import LDA, WDA, QuotientOfTraces
from ldr.objectives.transport import pair_plan, sinkhorn_log
from ldr.solvers import SCF
from ldr.solvers.scf import top_generalized


@pytest.fixture(scope="module")
def wda_small():
    return ldr.datasets.make_wda(240, seed=0)


def test_lda_by_scf_is_scikit_learns_eigen_lda():
    X, y = ldr.datasets.make_lda(8, r=3, n_per_class=200, seed=2)
    obj = LDA(X, y, 3)
    res = ldr.solve(obj, "scf", start="random", random_state=0, xtol=1e-12)
    assert res.converged and res.n_iter == 1  # a constant pencil: one step is the answer
    sk = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    basis = np.linalg.qr(sk.scalings_[:, :3])[0]
    assert ldr.manifolds.sin_largest_angle(res.M, basis) < 1e-8


@pytest.mark.parametrize("cache_bytes", [1e9, 2000.0])  # a stored kernel; row blocks
def test_sinkhorn_plans_equal_autograds_log_domain_reference_and_do_not_overflow(cache_bytes):
    # the plans of transport.PairKernel (potentials, stored re-centred kernel or row blocks)
    # against the autograd-traceable log-domain reference, down to a reg where K underflows
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((30, 2)), rng.standard_normal((25, 2)) + 1.0
    M = ((A[:, None] - B[None]) ** 2).sum(-1)
    for reg in [5.0, 1.0, 0.1, 1e-3]:
        T, T_log = pair_plan(A, B, reg, 10, cache_bytes), sinkhorn_log(M, reg, 10)
        assert np.all(np.isfinite(T))
        np.testing.assert_allclose(T, T_log, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(T.sum(axis=1), 1 / 30, rtol=1e-12)  # last update: rows


@pytest.mark.parametrize("reg", [5.0, 0.1, 0.01, 0.003])
def test_wda_scatter_from_scalings_equals_the_explicit_sum(wda_small, reg):
    # the pencil forms neither M nor T; the reference does both, from explicit differences
    # and log-domain Sinkhorn, and sums T_ij (x_i − x_j)(x_i − x_j)ᵀ term by term
    X, y = wda_small
    obj = WDA(X, y, 2, reg=reg)
    P = np.linalg.qr(np.random.default_rng(3).standard_normal((10, 2)))[0]
    ref = {"b": 0.0, "w": 0.0}
    plans = obj.plans(P)
    for a in range(3):
        for b in range(a, 3):
            D = obj.groups[a][:, None, :] - obj.groups[b][None, :, :]
            T = sinkhorn_log(((D @ P) ** 2).sum(-1), reg, 10)
            np.testing.assert_allclose(plans[a, b], T, rtol=1e-9, atol=1e-15)
            ref["w" if a == b else "b"] += np.einsum("ij,ijk,ijl->kl", T, D, D)
    Cb, Cw = obj.scatter(P)
    np.testing.assert_allclose(Cb, ref["b"], rtol=1e-9)
    np.testing.assert_allclose(Cw, ref["w"], rtol=1e-9)


def test_wda_trace_ratio_gradient_passes_check(wda_small):
    X, y = wda_small
    obj = WDA(X[:90], y[:90], 2, reg=1.0)
    report = ldr.check(obj, random_state=0)
    assert report.ok, str(report)
    # the cost equals the trace ratio of the pencil's scatter matrices at T(P)
    P = obj.heuristic()
    Cb, Cw = obj.scatter(P)
    assert obj.ratio(P) == pytest.approx(np.trace(P.T @ Cb @ P) / np.trace(P.T @ Cw @ P))


@pytest.mark.parametrize("reg", [0.1, 1.0, 5.0])
def test_wda_hand_derivatives_equal_autograds(wda_small, reg):
    # egrad/ehvp are written by hand through the Sinkhorn iterations; autograd of the same
    # cost (the Objective defaults) is the reference
    X, y = wda_small
    obj = WDA(X, y, 2, reg=reg)
    rng = np.random.default_rng(1)
    P = np.linalg.qr(rng.standard_normal((10, 2)))[0]
    V = rng.standard_normal((10, 2))
    g, h = ldr.Objective.egrad(obj, P), ldr.Objective.ehvp(obj, P, V)
    # stored reference kernels, and row blocks of 1-2 rows (a budget of a few hundred bytes)
    for o in (obj, WDA(X, y, 2, reg=reg, memory_budget=800)):
        np.testing.assert_allclose(o.egrad(P), g, rtol=1e-10, atol=1e-12 * np.abs(g).max())
        np.testing.assert_allclose(o.ehvp(P, V), h, rtol=1e-9, atol=1e-11 * np.abs(h).max())


@pytest.mark.parametrize("reg", [0.01, 0.003])
def test_wda_derivatives_stay_finite_where_scalings_would_overflow(wda_small, reg):
    # small reg: Sinkhorn's forward pass is finite in scaling form but its reverse pass
    # (which multiplies by u², v²) overflows at some P (reg 0.01, seed 2 gave NaN before the
    # scalings were bounded); there the log domain takes over
    X, y = wda_small
    obj = WDA(X, y, 2, reg=reg)
    for seed in range(4):
        rng = np.random.default_rng(seed)
        P = np.linalg.qr(rng.standard_normal((10, 2)))[0]
        V = rng.standard_normal((10, 2))
        g = obj.egrad(P)
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(obj.ehvp(P, V)))
        t = 1e-6
        fd = (obj.cost(P + t * V) - obj.cost(P - t * V)) / (2 * t)
        assert np.sum(g * V) == pytest.approx(fd, rel=1e-5)


@pytest.mark.parametrize("acceleration", ["diis", "anderson", "none"])
def test_scf_converges_to_fixed_points_from_random_starts(wda_small, acceleration):
    X, y = wda_small
    obj = WDA(X, y, 2, reg=1.0)
    for seed in range(4):
        res = ldr.solve(obj, SCF(acceleration=acceleration), start="random", random_state=seed,
                        xtol=1e-6)
        assert res.converged and "fixed-point residual" in res.reason, res.reason
        A, B = obj.pencil(res.M)
        nxt, _ = top_generalized(A, B, 2)
        # the returned point itself is a fixed point to xtol (not just the last step short)
        assert ldr.manifolds.sin_largest_angle(nxt, res.M) <= 1e-6
        assert np.all(np.isfinite(res.trace["eta"][1:]))


@pytest.mark.parametrize("acceleration", ["diis", "anderson"])
def test_acceleration_needs_fewer_iterations_and_reaches_the_same_fixed_point(wda_small,
                                                                             acceleration):
    X, y = wda_small
    obj = WDA(X, y, 2, reg=1.0)
    plain = [ldr.solve(obj, SCF(acceleration="none"), start="random", random_state=s, xtol=1e-8)
             for s in range(3)]
    fast = [ldr.solve(obj, SCF(acceleration=acceleration), start="random", random_state=s,
                      xtol=1e-8)
            for s in range(3)]
    assert all(r.converged for r in plain + fast)
    assert np.median([r.n_iter for r in fast]) <= 0.75 * np.median([r.n_iter for r in plain])
    for a, b in zip(plain, fast):
        assert ldr.manifolds.sin_largest_angle(a.M, b.M) < 1e-6


def test_scf_detects_a_two_cycle():
    # a pencil that swaps its dominant direction with the current subspace: a 2-cycle
    class Swap(QuotientOfTraces):
        def pencil(self, M):
            A = np.diag([1.0, 0.0, -1.0]) if abs(M[0, 0]) < 0.5 else np.diag([0.0, 1.0, -1.0])
            return A, np.eye(3)

    obj = Swap(np.eye(3), np.eye(3), 1)
    res = ldr.solve(obj, SCF(acceleration="none"), start=np.array([[1.0], [0.0], [0.0]]))
    assert not res.converged and "2-cycle" in res.reason


def test_non_positive_definite_b_is_regularized_with_a_warning():
    class Singular(QuotientOfTraces):
        def pencil(self, M):
            return np.diag([3.0, 2.0, 1.0]), np.diag([1.0, 1.0, 0.0])

    obj = Singular(np.eye(3), np.eye(3), 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ldr.solve(obj, "scf", start=np.eye(3)[:, :1], max_iter=2)
    assert any("not positive definite" in str(w.message) and "regularized" in str(w.message)
               for w in caught)


def test_wda_estimator_classifies_the_circles_for_every_reg():
    X, y = ldr.datasets.make_wda(1000, seed=0)  # the setting: 1000 train, 1000 test
    Xt, yt = ldr.datasets.make_wda(1000, seed=1)
    for reg in [0.1, 1.0, 5.0]:
        est = WassersteinDA(n_components=2, reg=reg).fit(X, y)
        knn = KNeighborsClassifier(10).fit(est.transform(X), y)
        assert knn.score(est.transform(Xt), yt) >= 0.95
        again = WassersteinDA(n_components=2, reg=reg).fit(X, y)
        np.testing.assert_array_equal(est.M_, again.M_)


def test_wda_clustering_finds_the_informative_subspace():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    labels = np.repeat([0, 1, 2], 60)
    X = np.column_stack([centers[labels] + rng.standard_normal((180, 2)),
                         2.0 * rng.standard_normal((180, 4))])
    est = WDAClustering(n_clusters=3, n_components=2, reg=1.0).fit(X)
    assert adjusted_rand_score(labels, est.labels_) >= 0.9
    assert np.linalg.norm(est.M_[:2]) > 0.95 * np.sqrt(2)


def test_bad_wda_input(wda_small):
    X, y = wda_small
    with pytest.raises(ValueError, match="at least two classes"):
        WDA(X, np.zeros(len(y)), 2)
    y1 = y.copy()
    y1[0] = 7
    with pytest.raises(ValueError, match="at least two samples"):
        WDA(X, y1, 2)
    for reg in [0.0, -1.0, np.nan]:
        with pytest.raises(ValueError, match="reg"):
            WDA(X, y, 2, reg=reg)
    with pytest.raises(ValueError, match="r: the subspace dimension"):
        WDA(X, y, 10)
    with pytest.warns(FutureWarning, match=r"WDA\(p=...\) is deprecated"):
        assert WDA(X, y, p=2).shape == WDA(X, y, r=2).shape
    with pytest.raises(ValueError, match="y: has"):
        WDA(X, y[:-1], 2)
    with pytest.raises(ValueError, match="start"):
        WassersteinDA(start="pca").fit(X, y)
    with pytest.raises(ValueError, match="acceleration"):
        SCF(acceleration="broyden")
    X_copy = X.copy()
    WDA(X, y, 2)
    np.testing.assert_array_equal(X, X_copy)  # POT's wda centers X in place; we do not


def test_best_of_starts_ranks_scf_answers_by_the_ratio_trace(wda_small):
    X, y = wda_small
    est = WassersteinDA(n_components=2, reg=1.0, start="best", n_starts=3).fit(X, y)
    obj = WDA(X, y, 2, reg=1.0)
    scores = [obj.ratio_trace(res.M) for res in est.results_]
    assert len(scores) == 6 and obj.ratio_trace(est.M_) == pytest.approx(max(scores))
    # at an SCF fixed point the ratio trace is the sum of the top-p generalized eigenvalues
    A, B = obj.pencil(est.M_)
    _, w = top_generalized(A, B, 2)
    assert obj.ratio_trace(est.M_) == pytest.approx(w[:2].sum(), rel=1e-4)


def test_wda_on_identical_rows_is_an_error_naming_X():
    # soak counterexample: seven identical rows gave an IndexError from the span's rank test
    X = np.tile([[1.257302210933933, -1.321048632913019]], (7, 1))
    with pytest.raises(ValueError) as err:
        WassersteinDA(1).fit(X, [0, 0, 0, 0, 0, 0, 1])
    assert err.value.param == "X"


def test_wda_clustering_with_reg_far_below_the_squared_distances_names_reg():
    # soak counterexample: a feature at scale 1e3 with reg = 1 made every within-cluster plan
    # the identity, C_w = 0, and the pencil's eigenproblem failed (LinAlgError, IndexError)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((10, 5)) * [1, 1, 1, 1000, 1]
    for reg in (1.0, 0.1):
        with pytest.raises(ValueError) as err:
            WDAClustering(1, reg=reg, max_iter=50, max_outer=2).fit(X)
        assert err.value.param == "reg" and "squared distances" in str(err.value)
    # a reg of the order of the squared distances fits (two alternation rounds: unconverged)
    with pytest.warns(ConvergenceWarning, match="max_outer=2"):
        model = WDAClustering(1, reg=1e6, max_iter=50, max_outer=2).fit(X)
    assert np.all(np.isfinite(model.transform(X)))


def test_top_generalized_with_b_singular_to_rounding():
    # soak: a scatter B that LAPACK's Cholesky refuses made eigh(A, B) fail (LinAlgError) or
    # return no vectors (IndexError downstream); B floored at d·eps·λ_max answers instead
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    A = A + A.T
    q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    B = q @ np.diag([1.0, 1.0, 1.0, 0.0]) @ q.T  # singular: Cholesky refuses it
    M, w = top_generalized(A, B, 2)
    assert M.shape == (4, 2) and np.allclose(M.T @ M, np.eye(2)) and np.all(np.isfinite(w))
    # B's null direction has an unbounded ratio vᵀAv/vᵀBv: the top eigenvector (where A is
    # positive along it)
    v = q[:, 3]
    if v @ A @ v > 0:
        assert np.linalg.norm(v - M @ (M.T @ v)) < 1e-6


def test_wda_reg_error_names_the_reg_asked_for_not_the_coarse_one():
    X = np.array([[3.11, -2.65, 3668.27], [6.08, -5.57, 6417.29], [7.28, -4.09, 5351.96],
                  [1.72, -3.14, 3069.17], [0.66, -2.74, 1781.94], [-0.73, -0.54, -316.30],
                  [3.40, -1.48, 2899.31], [4.35, -3.18, 3379.36], [6.88, -4.94, 5312.20],
                  [5.05, -5.49, 6275.89], [-1.01, -0.21, -159.23]])
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0])
    with pytest.raises(ValueError) as err:
        ldr.solve(WDA(X, y, 1, reg=1.0), max_iter=100)
    assert err.value.param == "reg" and str(err.value).startswith("reg: 1 is too small")


def test_wda_clustering_fits_a_split_with_no_within_cluster_spread():
    """k-means splits the rows on a binary feature: along it every cluster is one point, the
    within-cluster scatter is singular and WDA's objective refuses it at p = 1 (the WDA step
    of the alternation did, before).  At p = 2 the trace ratio is bounded and the WDA step
    keeps that direction; at p = 1 the step is the null direction itself, and either way the
    clustering says how many there were."""
    rng = np.random.default_rng(0)
    b = np.repeat([0.0, 1.0], 30)
    X = np.column_stack([5 * b, rng.standard_normal((60, 3))])
    codes = b.astype(int)
    with pytest.raises(ValueError, match="S_w is singular"):
        WDA(X, codes, 1)  # m = 1 >= r: the ratio is unbounded along the binary axis
    assert WDA(X, codes, 2).n_null_directions == 1  # m < r: bounded
    model = WDAClustering(2, n_clusters=2).fit(X)
    assert model.converged_ and model.n_null_directions_ == 1
    assert [h["null_directions"] for h in model.history_] == [1] * model.n_outer_
    assert abs(model.M_[0, 0]) == pytest.approx(1.0)  # the binary feature's axis
    np.testing.assert_allclose(model.M_.T @ model.M_, np.eye(2), atol=1e-10)
    assert adjusted_rand_score(codes, model.labels_) == 1.0
    one = WDAClustering(1, n_clusters=2).fit(X)  # m = 1 >= p: the null direction alone
    assert one.step_result_.solver == "null-space" and abs(one.M_[0, 0]) == pytest.approx(1.0)


def test_ridge_is_the_pencils_and_eps_its_deprecated_name(wda_small):
    """``ridge`` is the objective's ε (C_w + ε·tr(C_w)/d·I): the estimator's answer is SCF's
    on ``WDA(..., eps=ridge)`` from the same (continuation) start; ``eps=`` gives the same
    fit with a FutureWarning, and a bad value is an error naming the name given."""
    from ldr.core.errors import ParameterError

    X, y = wda_small
    est = WassersteinDA(2, ridge=1e-2).fit(X, y)
    ref = ldr.solve(WDA(X, y, 2, ridge=1e-2), "scf", xtol=1e-6)
    assert ldr.manifolds.sin_largest_angle(est.M_, ref.M) < 1e-6
    with pytest.warns(FutureWarning, match="'eps' is deprecated.*pass ridge="):
        old = WassersteinDA(2, eps=1e-2).fit(X, y)
    np.testing.assert_array_equal(old.M_, est.M_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        new = WDAClustering(2, ridge=1e-2, max_outer=2).fit(X)
        with pytest.warns(FutureWarning, match="'eps' is deprecated.*pass ridge="):
            old = WDAClustering(2, eps=1e-2, max_outer=2).fit(X)
    np.testing.assert_array_equal(old.M_, new.M_)
    for cls, args in ((WassersteinDA, (X, y)), (WDAClustering, (X,))):
        for name in ("ridge", "eps"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                with pytest.raises(ParameterError) as err:
                    cls(2, **{name: -1.0}).fit(*args)
            assert err.value.param == name


def test_wda_clustering_result_is_the_alternations_record():
    """``result_`` records the alternation (its rounds, convergence and rows), and
    ``step_result_`` the WDA step that gave ``M_``; the map is (X − mean_) M_."""
    X, _ = ldr.datasets.make_wda(200, seed=0)
    model = WDAClustering(n_clusters=3).fit(X)
    res = model.result_
    assert model.converged_ and res.converged and "outer_tol" in res.reason
    assert res.n_iter == model.n_iter_ == model.n_outer_ == len(model.history_)
    assert list(res.trace) == model.history_
    np.testing.assert_array_equal(res.M, model.M_)
    step = model.step_result_
    assert res.cost == step.cost == model.cost_
    assert ldr.manifolds.sin_largest_angle(step.M, model.M_) < 1e-12
    assert model.history_[-1]["ratio"] == pytest.approx(-step.cost)
    np.testing.assert_allclose(model.transform(X), (X - X.mean(axis=0)) @ model.M_,
                               atol=1e-12)


def test_wda_clustering_default_dimension_is_n_clusters_minus_one():
    X, y = ldr.datasets.make_wda(200, seed=0)
    assert WDAClustering(n_clusters=3).fit(X).n_components_ == 2
    assert WDAClustering(n_clusters=2).fit(X).n_components_ == 1
    assert WDAClustering(n_clusters=40).fit(X[:, :3]).n_components_ == 2  # ≤ n_features − 1
