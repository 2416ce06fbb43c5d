"""scikit-learn's NCA tests, as behaviours of ldr's :class:`~ldr.estimators.NCA`.

Follows ``sklearn/neighbors/tests/test_nca.py`` of scikit-learn 1.9.1 (the behaviours it
checks, in ldr's own code and names: ``start`` for ``init``, ``solver_params={"callback": f}``
for ``callback``).  Every test of that file has a counterpart here except:

* ``test_finite_differences`` checks scikit-learn's private ``_loss_grad_lbfgs``; here the
  same property (the gradient against finite differences) is checked on ldr's objective with
  :func:`ldr.check`.
* ``test_verbose``'s lines for the PCA and LDA starts ("Finding principal components...
  done in"): ldr prints no line for computing its start; the per-iteration table and the
  closing line are checked (ldr's table has a gradient-norm column, and its last line gives
  the driver's reason before the time).
* ``test_callback`` and ``test_expected_transformation_shape``: scikit-learn calls
  ``callback(transformation, n_iter)`` with the flattened map; ldr's callback is
  :func:`ldr.solve`'s, ``callback(state) -> bool``, given the iterate as ldr's point
  (n_features × n_components, ``state.M``) and the run's iteration count ``state.iteration``.
  The behaviours checked: called after every iteration, with a running count, with an
  iterate of the map's size.
* ``test_params_validation``, ``test_transformation_dimensions``, ``test_n_components``,
  ``test_init_transformation``, ``test_warm_start_validation``: the same errors (ValueError)
  in ldr's words; each message is checked for what it names.
* ``test_auto_init``: ``start="auto"`` follows scikit-learn's rule (LDA, else PCA, else the
  identity), but takes PCA and the identity in units of the data's RMS scale c, so that the
  start of c·X is the start of X; asked for by name, ``"pca"`` and ``"identity"`` are
  scikit-learn's maps.  Checked: the rule picks the same start, equal to the named one (LDA)
  or to it divided by c (PCA, the identity).
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import pairwise_distances

import ldr
from ldr.estimators import NCA
from ldr.objectives import NCA as NCAObjective

IRIS_X, IRIS_Y = load_iris(return_X_y=True)


def test_simple_example():
    """Opposite-label points are neighbours in the input; after the fit each point's
    nearest neighbour is its classmate."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 0.0], [2.0, 1.0]])
    y = np.array([1, 0, 1, 0])
    nca = NCA(n_components=2, start="identity").fit(X, y)
    Z = nca.transform(X)
    np.testing.assert_array_equal(pairwise_distances(Z).argsort()[:, 1], [2, 3, 0, 1])


def test_toy_example_collapse_points():
    """Two classmates and a third point midway: the optimum maps all three to one point,
    where Σ_i p_i = 1/2 + 1/2 = 1 (its supremum)."""
    rng = np.random.RandomState(42)
    two = rng.randn(2, 5)
    X = np.vstack([two, two.mean(axis=0)[None, :]])
    y = [0, 0, 1]
    with warnings.catch_warnings():  # the step rule ends it at the rounding floor, where the
        warnings.simplefilter("ignore", ConvergenceWarning)  # gradient's scale is ~1e-14
        nca = NCA().fit(X, y)
    Z = nca.transform(X)
    assert np.max(np.abs(Z - Z[0])) <= 1e-3 * np.max(np.abs(X))
    assert abs(nca.objective_value_ - 1.0) < 1e-6


def test_finite_differences():
    X, y = make_classification(random_state=0)
    for r in (1, 5, X.shape[1]):
        report = ldr.check(NCAObjective(X, y, r), random_state=r)
        assert report, str(report)


def test_params_validation():
    X = np.arange(12, dtype=float).reshape(4, 3)
    y = [1, 1, 2, 2]
    start = np.random.RandomState(42).rand(5, 3)
    with pytest.raises(ValueError, match="start"):
        NCA(start=start).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        NCA(n_components=10).fit(X, y)


def test_transformation_dimensions():
    X = np.arange(12, dtype=float).reshape(4, 3)
    y = [1, 1, 2, 2]
    with pytest.raises(ValueError, match=r"\(3, 3\)"):  # names the shape it expects
        NCA(start=np.array([[1.0, 2.0], [3.0, 4.0]])).fit(X, y)
    with pytest.raises(ValueError, match="start"):
        NCA(start=np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).fit(X, y)
    NCA(start=np.arange(9, dtype=float).reshape(3, 3)).fit(X, y)


def test_n_components():
    X = np.arange(12, dtype=float).reshape(4, 3)
    y = [1, 1, 2, 2]
    start = np.random.RandomState(42).rand(2, 3)
    with pytest.raises(ValueError, match=r"\(3, 3\)"):  # n_components = 3 ≠ start's 2 rows
        NCA(start=start, n_components=3).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        NCA(start=start, n_components=5).fit(X, y)
    assert NCA(n_components=2, start="identity").fit(X, y).components_.shape == (2, 3)


def test_init_transformation():
    X, y = make_blobs(n_samples=30, centers=6, n_features=5, random_state=0)
    for start in ("identity", "random", "auto", "pca", "lda"):
        nca = NCA(start=start).fit(X, y)
        assert nca.components_.shape == (5, 5)
        assert nca.result_.converged, (start, nca.result_.reason)
    rng = np.random.RandomState(42)
    NCA(start=rng.rand(5, 5)).fit(X, y)
    with pytest.raises(ValueError, match="n_features"):
        NCA(start=rng.rand(5, 6)).fit(X, y)
    with pytest.raises(ValueError, match="start"):
        NCA(start=rng.rand(6, 5)).fit(X, y)
    with pytest.raises(ValueError, match="start"):
        NCA(start=rng.rand(5, 5), n_components=3).fit(X, y)


@pytest.mark.parametrize("n_samples", [3, 5, 7, 11])
@pytest.mark.parametrize("n_features", [3, 5, 7, 11])
@pytest.mark.parametrize("n_classes", [5, 7, 11])
@pytest.mark.parametrize("n_components", [3, 5, 7, 11])
def test_auto_init(n_samples, n_features, n_classes, n_components):
    if n_classes >= n_samples or n_components > n_features:
        return  # impossible or refused (test_params_validation), as in scikit-learn's test
    rng = np.random.RandomState(42)
    X = rng.randn(n_samples, n_features)
    y = np.tile(range(n_classes), n_samples // n_classes + 1)[:n_samples]
    auto = NCAObjective(X, y, n_components, start="auto")
    if n_components <= min(n_classes - 1, n_features):
        named, scale = "lda", 1.0
    elif n_components < min(n_features, n_samples):
        named, scale = "pca", auto.unit_
    else:
        named, scale = "identity", auto.unit_
    other = NCAObjective(X, y, n_components, start=named)
    np.testing.assert_allclose(auto.components(auto.heuristic()) * scale,
                               other.components(other.heuristic()), atol=1e-10)


def test_warm_start_validation():
    X, y = make_classification(n_samples=30, n_features=5, n_classes=4, n_redundant=0,
                               n_informative=5, random_state=0)
    nca = NCA(warm_start=True, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nca.fit(X, y)
    X4, y4 = make_classification(n_samples=30, n_features=4, n_classes=4, n_redundant=0,
                                 n_informative=4, random_state=0)
    with pytest.raises(ValueError, match="features"):
        nca.fit(X4, y4)


def test_warm_start_effectiveness():
    """A one-iteration refit moves a warm-started map less than a cold-started one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warm = NCA(warm_start=True).fit(IRIS_X, IRIS_Y)
        before_warm = warm.components_.copy()
        warm.set_params(max_iter=1).fit(IRIS_X, IRIS_Y)
        cold = NCA(warm_start=False).fit(IRIS_X, IRIS_Y)
        before_cold = cold.components_.copy()
        cold.set_params(max_iter=1).fit(IRIS_X, IRIS_Y)
    diff_warm = np.sum(np.abs(warm.components_ - before_warm))
    diff_cold = np.sum(np.abs(cold.components_ - before_cold))
    assert diff_warm < 3.0
    assert diff_cold > diff_warm


@pytest.mark.parametrize("start", ["pca", "lda", "identity", "random", "array"])
def test_verbose(start, capsys):
    X, y = make_blobs(n_samples=30, centers=6, n_features=5, random_state=0)
    given = np.random.RandomState(42).randn(5, 5) if start == "array" else start
    nca = NCA(verbose=1, start=given).fit(X, y)
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "[NCA]"
    header = re.split(r" {2,}", lines[1].removeprefix("[NCA]").strip())
    assert header == ["Iteration", "Objective Value", "Gradient norm", "Time(s)"]
    assert re.fullmatch(r"\[NCA\] -+", lines[2])
    rows = lines[3:-2]
    assert len(rows) == nca.n_iter_ + 1  # the start and every iteration
    for i, line in enumerate(rows):
        m = re.fullmatch(r"\[NCA\] +(\d+) +(-?\d\.\d{6}e[+-]\d+) +(\d\.\d{6}e[+-]\d+) +"
                         r"(\d+\.\d{2})", line)
        assert m, line
        assert int(m.group(1)) == i
    # the last row is the fitted cost
    assert float(m.group(2)) == pytest.approx(nca.cost_, rel=1e-6)
    assert re.fullmatch(r"\[NCA\] .+ after \d+ iterations; training took +\d+\.\d{2}s\.",
                        lines[-2])
    assert lines[-1] == ""


def test_no_verbose(capsys):
    NCA().fit(IRIS_X, IRIS_Y)
    assert capsys.readouterr().out == ""


def test_verbose_is_checked():
    with pytest.raises(ValueError, match="verbose"):
        NCA(verbose=-1).fit(IRIS_X, IRIS_Y)


def test_singleton_class():
    X = IRIS_X.copy()
    y = IRIS_Y.copy()
    (one,) = np.where(y == 1)
    y[one] = 2
    y[one[0]] = 1  # one singleton class
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        NCA(max_iter=30).fit(X, y)
        (i1,) = np.where(y == 1)
        (i2,) = np.where(y == 2)
        y[i1] = 0
        y[i1[0]] = 1
        y[i2] = 0
        y[i2[0]] = 2  # one non-singleton class
        NCA(max_iter=30).fit(X, y)
    rows = [np.where(y == c)[0][0] for c in (0, 1, 2)]  # only singleton classes
    Xs = X[rows]
    nca = NCA(start="identity", max_iter=30).fit(Xs, y[rows])
    np.testing.assert_array_equal(Xs, nca.transform(Xs))


def test_one_class():
    """One class: every neighbour is a classmate, Σ_i p_i = n for every map, and the fit
    returns its start (the identity asked for: transform(X) is X)."""
    X = IRIS_X[IRIS_Y == 0]
    y = IRIS_Y[IRIS_Y == 0]
    nca = NCA(max_iter=30, n_components=X.shape[1], start="identity").fit(X, y)
    np.testing.assert_array_equal(X, nca.transform(X))
    assert nca.result_.converged and nca.n_iter_ == 0
    assert nca.objective_value_ == pytest.approx(X.shape[0])
    auto = NCA(n_components=2).fit(X, y)  # the default start, PCA in units of the data
    assert auto.result_.converged and auto.n_iter_ == 0


def test_callback():
    """The callback runs after every iteration (and at the start), with the run's running
    count, and may stop the fit."""
    seen = []

    def record(state):
        seen.append((state.iteration, state.M.shape))
        return False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nca = NCA(max_iter=10, solver_params={"callback": record}).fit(IRIS_X, IRIS_Y)
    assert [i for i, _ in seen] == list(range(nca.n_iter_ + 1))
    assert all(shape == (4, 4) for _, shape in seen)
    stop = NCA(solver_params={"callback": lambda state: state.iteration >= 3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        stop.fit(IRIS_X, IRIS_Y)
    assert stop.n_iter_ == 3 and "callback" in stop.result_.reason


def test_expected_transformation_shape():
    """The iterate the callback sees has the map's size (n_features × n_components)."""
    shapes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        NCA(n_components=2, max_iter=5,
            solver_params={"callback": lambda s: shapes.append(s.M.shape)}).fit(IRIS_X, IRIS_Y)
    assert set(shapes) == {(IRIS_X.shape[1], 2)}


def test_convergence_warning():
    with pytest.warns(ConvergenceWarning, match=re.escape("NCA: the solver")):
        NCA(max_iter=2, verbose=1).fit(IRIS_X, IRIS_Y)


@pytest.mark.parametrize("param, value", [("n_components", np.int32(3)),
                                          ("max_iter", np.int32(100)),
                                          ("tol", np.float32(0.0001))])
def test_parameters_valid_types(param, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        NCA(**{param: value}).fit(IRIS_X, IRIS_Y)


@pytest.mark.parametrize("n_components", [None, 2])
def test_nca_feature_names_out(n_components):
    est = NCA(n_components=n_components).fit(IRIS_X, IRIS_Y)
    expected = IRIS_X.shape[1] if n_components is None else n_components
    np.testing.assert_array_equal(est.get_feature_names_out(),
                                  np.array([f"nca{i}" for i in range(expected)], dtype=object))


def test_clone_keeps_verbose():
    assert clone(NCA(verbose=2)).verbose == 2
