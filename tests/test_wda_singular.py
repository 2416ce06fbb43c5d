"""WDA where the within-class scatter S_w is singular: a column constant within each class.

While fewer than r directions lack within-class spread the trace ratio is bounded, and its
maximizer keeps them (they separate the classes best); with r or more it is unbounded and
the objective refuses the data.  The estimator, the objective through ``ldr.solve`` and
``ldr compare`` behave alike (benchmarks/bench_wda_singular.py measures the accuracy).
"""

import json

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

import ldr
from ldr.cli import commands as cli
from ldr.core.errors import ParameterError, UnboundedObjective
from ldr.estimators import OrthogonalLDA, WassersteinDA
from ldr.objectives import WDA


def singular_table(seed=0, n=300, n_classes=8, d=5, period=4):
    """Gaussian columns, the first shifted by 0.3·class, the last ``class % period``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.standard_normal((n, d))
    X[:, 0] += 0.3 * y
    X[:, -1] = y % period
    return StandardScaler().fit_transform(X), y


def null_share(M, e):
    """‖Mᵀe‖: 1 when the unit vector e lies in span(M) (M orthonormal), 0 when orthogonal."""
    return float(np.linalg.norm(M.T @ e))


def test_the_objective_keeps_the_direction_with_no_within_class_spread():
    """m = 1 < r = 3: the ratio is bounded, the default chain certifies a maximizer that
    all but contains the class-constant axis, and every subspace orthogonal to it (WDA on the other
    four columns, solved to its own optimum) has a smaller trace ratio."""
    X, y = singular_table()
    obj = WDA(X, y, 3)
    assert obj.n_null_directions == 1
    res = ldr.solve(obj)
    assert res.converged and np.isfinite(res.cost)
    e = np.eye(5)[:, 4]
    assert null_share(res.M, e) > 0.99  # the optimum's span need not hold it exactly
    without = WDA(X[:, :4], y, 3)
    assert without.n_null_directions == 0
    assert obj.ratio(res.M) > 1.5 * without.ratio(ldr.solve(without).M)


def test_the_objective_refuses_as_many_null_directions_as_components():
    X, y = singular_table()
    with pytest.raises(ParameterError, match=r"S_w is singular with 1 direction.*pass r > 1") \
            as err:
        WDA(X, y, 1)
    assert err.value.param == "X"
    with pytest.raises(ParameterError, match="pencil") as err:
        WDA(X, y, 2, ridge=0.0)
    assert err.value.param == "ridge"


def test_the_estimator_fits_in_the_whole_space_and_keeps_the_direction():
    X, y = singular_table()
    fit = WassersteinDA(3).fit(X, y)
    assert fit.subspace_ is None and fit.result_.converged
    assert null_share(fit.M_, np.eye(5)[:, 4]) == pytest.approx(1.0, abs=1e-6)
    obj = WDA(X, y, 3)
    scf = ldr.solve(obj, "scf", xtol=1e-6)  # the estimator's default route is SCF's
    assert fit.ratio_ == pytest.approx(obj.ratio(scf.M), rel=1e-6)


def test_a_constant_column_beside_a_class_constant_one_is_dropped_by_the_span():
    """A zero-variance column joins the null space of S_w but carries nothing: the fit runs
    in the span of the data (5 of 6 dimensions) and keeps the class-constant
    axis."""
    X, y = singular_table()
    Xc = np.column_stack([X, np.full(len(X), 2.0)])
    fit = WassersteinDA(3).fit(Xc, y)
    assert fit.subspace_.shape == (6, 5)
    assert np.allclose(fit.M_[5], 0.0, atol=1e-12)
    assert null_share(fit.M_, np.eye(6)[:, 4]) == pytest.approx(1.0, abs=1e-6)
    ref = WassersteinDA(3).fit(X, y)
    assert fit.ratio_ == pytest.approx(ref.ratio_, rel=1e-6)


def test_its_neighbours_classify_as_well_as_orthogonal_lda():
    """The paper's qualitative result on such data: the projection keeps what separates the
    classes.  The former rule (the top principal directions, dropping the class-constant
    one) scored 0.31 here against OrthogonalLDA's 0.70."""
    X, y = singular_table()
    scores = {"wda": [], "olda": []}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        for key, model in (("wda", WassersteinDA(3)), ("olda", OrthogonalLDA(3))):
            model.fit(X[tr], y[tr])
            knn = KNeighborsClassifier(5).fit(model.transform(X[tr]), y[tr])
            scores[key].append(knn.score(model.transform(X[te]), y[te]))
    assert np.mean(scores["wda"]) >= np.mean(scores["olda"]) - 0.05


def test_compare_runs_wda_on_such_a_table(tmp_path, capsys):
    X, y = singular_table()
    data = tmp_path / "singular.npy"
    np.save(data, np.column_stack([X, y]))
    out = tmp_path / "runs.json"
    status = cli.main(["compare", "--method", "wda", "--data", str(data), "--components", "3",
                       "--solvers", "trust-region", "--starts", "0", "--json", str(out)])
    capsys.readouterr()
    assert status == 0
    run = json.loads(out.read_text())["runs"][0]
    obj = WDA(X, y, 3)
    by_hand = ldr.solve(obj, "trust-region", start="heuristic", random_state=0)
    assert run["cost"] == pytest.approx(by_hand.cost, rel=1e-8)
    assert run["cost"] < 0 and np.isfinite(run["cost"])


def test_as_many_null_directions_as_components_give_the_null_space_answer():
    """m ≥ r with enough samples: the trace ratio is unbounded on the null directions, the
    objective refuses the data, and the estimator keeps the r null directions with the
    largest between-class scatter (not the span of S_w, which would drop them)."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 400)
    X = np.column_stack([rng.standard_normal((400, 3)), 5.0 * (y % 2), 1.0 * (y // 2)])
    one = WassersteinDA(1).fit(X, y)
    assert one.result_.solver == "null-space" and one.ratio_ == np.inf
    assert null_share(one.M_, np.eye(5)[:, 3]) == pytest.approx(1.0, abs=1e-4)
    two = WassersteinDA(2).fit(X, y)
    span = np.eye(5)[:, 3:]
    assert np.linalg.norm(two.M_.T @ span) == pytest.approx(np.sqrt(2), abs=1e-10)
    np.testing.assert_allclose(two.transform(X), (X - X.mean(axis=0)) @ two.M_, atol=1e-10)
    with pytest.raises(UnboundedObjective, match="pass r > 2"):
        WDA(X, y, 2)
    assert WassersteinDA(3).fit(X, y).result_.solver == "scf"  # m = 2 < 3: bounded


def test_compare_gives_the_estimators_null_space_answer_where_the_ratio_is_unbounded(
        tmp_path, capsys):
    """m ≥ r: no objective for the solvers, so ``ldr compare --method wda`` prints
    WassersteinDA's answer on the same table (what the estimator fits, the CLI fits)."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 400)
    X = np.column_stack([rng.standard_normal((400, 3)), 5.0 * (y % 2), 1.0 * (y // 2)])
    data = tmp_path / "unbounded.npy"
    np.save(data, np.column_stack([X, y]))
    status = cli.main(["compare", "--method", "wda", "--data", str(data), "--components", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert "no maximum for solvers to compare" in out and "'null-space'" in out
    printed = np.array([[float(v) for v in line.strip(" []").split()]
                        for line in out.split("one row per feature):")[1].strip().splitlines()])
    np.testing.assert_allclose(printed, WassersteinDA(2).fit(X, y).M_, atol=1e-4)


def test_fewer_samples_than_features_still_take_the_principal_directions():
    """n − n_classes < the span's dimension: the null directions are the sample size's, and
    the fit runs on the top n − n_classes principal directions (Fisherfaces), as before."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 20))
    y = np.repeat([0, 1, 2], 4)
    fit = WassersteinDA(2).fit(X, y)
    assert fit.result_.solver != "null-space" and fit.subspace_.shape == (20, 9)
