"""One vocabulary across the estimators: the same names mean the same things everywhere.

Walks every estimator of ``ldr.estimators.__all__`` — its signature and its fitted
attributes — and fails on a divergence: ``n_components`` first; ``solver``, ``start``,
``tol`` (the gradient tolerance), ``max_iter``, ``solver_params`` and ``random_state``
(default 0) in every one; the fitted point is ``M_``; the old names (``W_``, ``P_``,
``init``, ``solver_params["gtol"]``) still work for one release and warn.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import ldr
import ldr.estimators as est
from ldr.estimators._base import SOLVER_PARAMS

SHARED = ("solver", "start", "tol", "max_iter", "solver_params", "random_state")
#: names that mean something else elsewhere, or are gone: they must not come back
FORBIDDEN = ("gtol", "init_", "W0", "P0", "p", "seed")


def _signature(name):
    return inspect.signature(getattr(est, name).__init__).parameters


@pytest.mark.parametrize("name", est.__all__)
def test_every_estimator_speaks_the_shared_vocabulary(name):
    params = _signature(name)
    names = [p for p in params if p != "self"]
    first = names[1] if name == "LinearDR" else names[0]
    assert first == "n_components", f"{name}: n_components is not the first argument"
    missing = [p for p in SHARED if p not in params]
    assert not missing, f"{name} lacks {missing}"
    assert params["random_state"].default == 0, f"{name}: random_state default"
    assert isinstance(params["tol"].default, float) and 0 < params["tol"].default <= 1e-6
    assert params["solver_params"].default is None
    assert not [p for p in FORBIDDEN if p in params], name
    # everything after n_components is keyword-only
    after = names[names.index("n_components") + 1:]
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in after), name
    # a deprecated name keeps a sentinel default so that get_params/clone round-trip
    if "init" in params:
        assert params["init"].default == "deprecated"


@pytest.fixture(scope="module")
def data():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X[::2])
    return X, y[::2]


def _fit(name, X, y):
    Est = getattr(est, name)
    kw = {"n_components": 1}
    if name == "LinearDR":
        return Est("lda", **kw).fit(X, y)
    if name in ("UnsupervisedHSIC", "SemiSupervisedHSIC", "KDAC", "WDAClustering"):
        kw.update(max_outer=2, n_clusters=3)
    if name in ("CCA", "OrthogonalCCA", "ReducedRankRegression"):
        return Est(**kw).fit(X[:, :2], X[:, 2:])
    tags = Est().__sklearn_tags__()
    needs_y = tags.target_tags.required or name in ("SemiSupervisedHSIC", "KDAC")
    return Est(**kw).fit(X, y) if needs_y else Est(**kw).fit(X)


@pytest.mark.parametrize("name", est.__all__)
def test_every_fitted_estimator_names_its_point_M_(name, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small budgets may leave a ConvergenceWarning
        fitted = _fit(name, X, y)
    attrs = vars(fitted)
    assert "M_" in attrs and "n_components_" in attrs and "n_iter_" in attrs, name
    assert not {"W_", "P_"} & set(attrs), f"{name} stores an old name as an attribute"
    for old in ("W_", "P_"):
        if hasattr(type(fitted), old):  # a deprecated alias: same value, with a warning
            with pytest.warns(FutureWarning, match=f"{old} is deprecated"):
                value = getattr(fitted, old)
            np.testing.assert_array_equal(value, fitted.M_)


def test_solver_params_holds_only_the_other_options():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="solver_params: unknown option 'xtoll'; the options "
                                         "are " + ", ".join(SOLVER_PARAMS)):
        est.PCA(2, solver_params={"xtoll": 1e-3}).fit(X)
    with pytest.raises(ValueError, match="solver_params: 'tol' is set by the estimator's own "
                                         "parameter tol="):
        est.PCA(2, solver_params={"tol": 1e-3}).fit(X)
    with pytest.raises(ValueError, match="solver_params: 'M0' is set by the estimator's own "
                                         "parameter start="):
        est.OrthogonalLDA(solver_params={"M0": None}).fit(X, y)
    with pytest.raises(ValueError, match="tol: must be a non-negative number"):
        est.SupervisedHSIC(2, tol=-1.0).fit(X, y)
    # the keys of earlier releases still work for one release, with a FutureWarning
    with pytest.warns(FutureWarning, match=r"solver_params\['gtol'\] is deprecated"):
        old = est.OrthogonalLDA(2, start="random", solver_params={"gtol": 1e-4}).fit(X, y)
    new = est.OrthogonalLDA(2, start="random", tol=1e-4).fit(X, y)
    np.testing.assert_array_equal(old.M_, new.M_)


def test_tol_is_the_gradient_tolerance_everywhere():
    """tol reaches ldr.solve as gtol in every family: a looser tol stops earlier, at a
    gradient norm within it (WassersteinDA with a trace-ratio solver included; its SCF
    tolerance moved to solver_params={"xtol": ...})."""
    X, y = ldr.datasets.make_wda(120, seed=0)
    for make in (lambda tol: est.OrthogonalLDA(2, start="random", tol=tol),
                 lambda tol: est.SupervisedHSIC(2, solver="trust-region", tol=tol),
                 lambda tol: est.WassersteinDA(2, solver="trust-region", scf_first=False,
                                               start="fda", tol=tol)):
        loose, tight = make(1e-3).fit(X, y).result_, make(1e-9).fit(X, y).result_
        assert loose.converged and tight.converged
        assert loose.grad_norm <= 1e-3 * loose.grad_scale
        assert loose.n_iter <= tight.n_iter and tight.grad_norm <= 1e-9 * tight.grad_scale


def test_random_state_means_the_same_everywhere():
    """Default 0: two fits give the same answer, also where randomness enters (random starts,
    k-means); None: fresh entropy."""
    X, y = ldr.datasets.make_wda(90, seed=1)
    for make in (lambda rs: est.PCA(2, start="random", random_state=rs),
                 lambda rs: est.UnsupervisedHSIC(2, n_clusters=3, max_outer=2,
                                                 random_state=rs)):
        with warnings.catch_warnings():  # two alternation rounds: the point is the seed
            warnings.simplefilter("ignore", ConvergenceWarning)
            a, b = make(0).fit(X), make(0).fit(X)
        np.testing.assert_array_equal(a.M_, b.M_)
        assert make(None).random_state is None  # accepted: fresh entropy per fit
