"""One vocabulary on every floor: the same names mean the same things everywhere.

Walks every public signature — ``ldr.solve``, ``ldr.compare``, ``ldr.check``,
``ldr.certificate``, every objective of ``ldr.objectives`` and every estimator of
``ldr.estimators`` — and fails on a divergence:

* the start is ``start``, the seed ``random_state``, the gradient tolerance ``tol`` (and what it
  is relative to, ``tol_scale``), the iteration budget ``max_iter`` (the whole run);
* a word has one meaning: ``reg`` is the entropic regularization of optimal transport (POT's
  name), ``shrinkage`` a covariance's shrinkage towards tr(Σ)/d · I, ``n_neighbors`` a number of
  neighbours, ``lam`` KDAC's λ; a parameter of that name elsewhere is a deprecated alias (default
  ``"deprecated"``) of its new name;
* the names of earlier releases (``M0``, ``seed``, ``gtol``, ``gtol_scale``, ``stage_max_iter``)
  are no parameters; they still work for one release and warn.
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
import ldr.objectives as objectives
from ldr.estimators.base import SOLVE_OPTIONS

SHARED = ("solver", "start", "tol", "max_iter", "solver_params", "verbose", "random_state")
#: names of earlier releases: accepted as keywords with a FutureWarning, never parameters
OLD = ("M0", "seed", "gtol", "gtol_scale", "stage_max_iter")
#: a word with one meaning, and where it has it; elsewhere only as a deprecated alias
ONE_MEANING = {
    "reg": {"WassersteinDA", "WDAClustering", "WDA"},  # entropic regularization (POT's)
    "lam": {"KDAC"},                                     # KDAC's λ
    "eps": set(),                                        # renamed: ridge, smoothing, rcond
    "k": set(),                                          # renamed: n_neighbors
    "init": set(),                                       # renamed: start
    "n_features": set(),                                 # renamed: n_kernel_features
}
FUNCTIONS = {"solve": ldr.solve, "compare": ldr.compare, "check": ldr.check,
             "certificate": ldr.certificate}


def _classes(module):
    return {name: getattr(module, name) for name in module.__all__
            if isinstance(getattr(module, name), type)}


SIGNATURES = {
    **{f"ldr.{name}": inspect.signature(f).parameters for name, f in FUNCTIONS.items()},
    **{f"objectives.{name}": inspect.signature(cls).parameters
       for name, cls in _classes(objectives).items()},
    **{f"estimators.{name}": inspect.signature(cls).parameters
       for name, cls in _classes(est).items()},
}


@pytest.mark.parametrize("where", sorted(SIGNATURES))
def test_one_word_one_meaning(where):
    params = SIGNATURES[where]
    owner = where.split(".")[-1]
    old = [p for p in OLD if p in params]
    assert not old, f"{where} takes {old}: the names of an earlier release"
    for word, owners in ONE_MEANING.items():
        if word in params and owner not in owners:
            assert params[word].default == "deprecated", (
                f"{where}: {word!r} means something else here; rename it and keep {word}= as "
                "a deprecated alias")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_functions_speak_the_estimators_names(name):
    params = SIGNATURES[f"ldr.{name}"]
    wanted = {"solve": ("start", "random_state", "tol", "tol_scale", "max_iter"),
              "compare": ("random_state",), "check": ("random_state",),
              "certificate": ("tol", "tol_scale", "hess_tol")}[name]
    assert not [p for p in wanted if p not in params], name
    # the old names are keywords that warn
    renamed = {"solve": {"M0": None, "seed": 0, "gtol": 1e-8, "gtol_scale": "auto"},
               "compare": {"seed": 0}, "check": {"seed": 0},
               "certificate": {"gtol": 1e-8, "gtol_scale": None}}[name]
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), name
    X, y = load_iris(return_X_y=True)
    obj = ldr.objectives.LDA(X, y, 2)
    call = {"solve": lambda **kw: ldr.solve(obj, "trust-region", max_iter=3, **kw),
            "compare": lambda **kw: ldr.compare(obj, ["trust-region"], n_starts=1,
                                                certify=False, max_iter=3, **kw),
            "check": lambda **kw: ldr.check(obj, **kw),
            "certificate": lambda **kw: ldr.certificate(obj, obj.heuristic(), **kw)}[name]
    for key, value in renamed.items():
        with pytest.warns(FutureWarning, match=f"{key!r} is deprecated"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                call(**{key: value})
    with pytest.raises(TypeError, match="unexpected keyword argument 'tolerance'"):
        call(tolerance=1e-3)


@pytest.mark.parametrize("name", est.__all__)
def test_every_estimator_speaks_the_shared_vocabulary(name):
    params = SIGNATURES[f"estimators.{name}"]
    names = list(params)
    first = names[1] if name == "LinearDR" else names[0]
    assert first == "n_components", f"{name}: n_components is not the first argument"
    missing = [p for p in SHARED if p not in params]
    assert not missing, f"{name} lacks {missing}"
    assert params["random_state"].default == 0, f"{name}: random_state default"
    tol = params["tol"].default
    assert tol is None or (isinstance(tol, float) and 0 < tol <= 1e-6), name
    assert params["solver_params"].default is None
    # everything after n_components is keyword-only
    after = names[names.index("n_components") + 1:]
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in after), name


@pytest.fixture(scope="module")
def data():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X[::2])
    return X, y[::2]


def _fit(name, X, y, **extra):
    Est = getattr(est, name)
    kw = {"n_components": 1, **extra}
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
    assert "map_" in attrs, f"{name} has no fitted map: transform is not the pipeline's"
    assert not {"W_", "P_"} & set(attrs), f"{name} stores an old name as an attribute"
    for old in ("W_", "P_"):
        if hasattr(type(fitted), old):  # a deprecated alias: same value, with a warning
            with pytest.warns(FutureWarning, match=f"{old} is deprecated"):
                value = getattr(fitted, old)
            np.testing.assert_array_equal(value, fitted.M_)


@pytest.mark.parametrize("name", est.__all__)
def test_max_iter_bounds_the_whole_fit_whatever_its_value(name, data):
    """max_iter means one thing: the iterations of the whole fit (a chain's stages summed),
    at the default value as at any other."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for budget in (2, 1000):
            fitted = _fit(name, X, y, max_iter=budget)
            res = fitted.result_
            if res is not None and res.solver != "closed-form":
                assert sum(s.n_iter for s in res.stages) <= budget, (name, budget)


def test_solver_params_holds_only_the_other_options():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="solver_params: unknown option 'xtoll'; the options "
                                         "are " + ", ".join(SOLVE_OPTIONS)):
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
    with pytest.warns(FutureWarning, match=r"solver_params: the parameter 'gtol' is deprecated"):
        old = est.OrthogonalLDA(2, start="random", solver_params={"gtol": 1e-4}).fit(X, y)
    new = est.OrthogonalLDA(2, start="random", tol=1e-4).fit(X, y)
    np.testing.assert_array_equal(old.M_, new.M_)


def test_renamed_estimator_parameters_still_work_and_warn():
    X, y = load_iris(return_X_y=True)
    with pytest.warns(FutureWarning, match="'reg' is deprecated"):
        old = est.OrthogonalLDA(2, reg=0.1).fit(X, y)
    np.testing.assert_array_equal(old.M_, est.OrthogonalLDA(2, shrinkage=0.1).fit(X, y).M_)
    with pytest.warns(FutureWarning, match="'reg' is deprecated"):
        old = est.MAF(2, reg=0.2).fit(X)
    np.testing.assert_array_equal(old.M_, est.MAF(2, shrinkage=0.2).fit(X).M_)


def test_tol_is_the_gradient_tolerance_everywhere():
    """tol reaches ldr.solve as its tol in every family: a looser tol stops earlier, at a
    gradient norm within it (WassersteinDA with a trace-ratio solver included; its SCF
    tolerance is solver_params={"xtol": ...})."""
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
