"""scikit-learn's other array API estimator checks — ``check_array_api_mixed_inputs`` (X in
one namespace or device, y in another: the estimator follows X) and
``check_array_api_same_namespace`` (``transform`` refuses an input of another namespace than
the fit's, naming the method) — for every ldr estimator whose tags say it supports the array
API, at its defaults, on the namespaces and devices this machine has (NumPy, array-api-strict,
PyTorch on the CPU, PyTorch on CUDA where present).  Run by tests/test_array_api.py in a fresh
interpreter with ``SCIPY_ARRAY_API=1``; collected alone, it skips.  (``check_array_api_input``
runs in the other ``array_api_*_cases.py`` files, with variants and value comparisons.)  And
every estimator, tagged or not, fits such an input under ``array_api_dispatch``.
"""

import os

import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported (tests/test_array_api.py "
                "runs this file so)", allow_module_level=True)

from _array_namespaces import (  # noqa: E402
    ARRAY_API_CHECK,
    NAMESPACES,
    array_api_check_combinations,
    as_namespace,
    check_name,
)
from sklearn.utils.estimator_checks import estimator_checks_generator  # noqa: E402

import ldr.estimators as est  # noqa: E402

#: the estimators at their defaults, but for two whose defaults have no answer on the checks'
#: data (make_classification(30, 10): rank 8): PCA keeps all 10 components, and its
#: ``score`` then refuses a singular covariance (scikit-learn's returns inf or a rounding
#: artefact); FactorAnalysis with 9 (or 2) factors is a Heywood case there (noise variances
#: go to 0, the fit does not converge: array_api_second_order_cases.py)
SPECIAL = {"PCA": est.PCA(2), "FactorAnalysis": None}
TAGGED = [SPECIAL.get(name, getattr(est, name)()) for name in est.__all__
          if name != "LinearDR" and getattr(est, name)().__sklearn_tags__().array_api_support]
TAGGED = [e for e in TAGGED if e is not None]
#: the namespaces and devices this machine has
HERE = {(namespace, device) for namespace, device, _ in array_api_check_combinations()}


def _runnable(check) -> bool:
    """Whether every namespace and device a check's keywords name is one of :data:`HERE`."""
    keywords = getattr(check, "keywords", {})
    places = [(keywords[k].xp, keywords[k].device)
              for k in ("X_ns_and_device", "other_ns_and_device") if k in keywords]
    if "array_namespace" in keywords:
        places.append((keywords["array_namespace"], keywords.get("device_name")))
    # array-api-strict's devices are named differently by the two kinds of checks
    return all(place in HERE or place[0] == "array_api_strict" for place in places)


def _checks():
    for estimator in TAGGED:
        for _, check in estimator_checks_generator(estimator, legacy=True, mark=None):
            name = check_name(check)
            if name.startswith("check_array_api_") and name != ARRAY_API_CHECK \
                    and _runnable(check):
                yield pytest.param(estimator, check,
                                   id=f"{type(estimator).__name__}-{name}-"
                                      f"{sorted(map(str, check.keywords.values()))}")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator, check", list(_checks()))
def test_scikit_learns_array_api_checks(estimator, check):
    check(estimator)


TWO_VIEW = ("CCA", "OrthogonalCCA", "ReducedRankRegression")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("name", [n for n in est.__all__ if n != "LinearDR"])
def test_every_estimator_fits_an_array_of_another_namespace_under_dispatch(name, namespace):
    # every estimator is tagged and answers in the input's namespace (module docstring of
    # ldr.estimators.base); an untagged one would read it as NumPy and answer in NumPy
    # — five of them once raised TypeError here (scikit-learn's validation asked PyTorch for
    # a NumPy dtype)
    import numpy as np
    import sklearn
    from array_api_compat import array_namespace
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X = ((X - X.mean(0)) / X.std(0))[::3]
    y = y[::3]
    estimator = getattr(est, name)()
    Xs = as_namespace(namespace, X)
    with sklearn.config_context(array_api_dispatch=True):
        if name in TWO_VIEW:
            estimator.fit(Xs[:, :8], as_namespace(namespace, X[:, 8:]))
            out = (estimator.transform(Xs[:, :8]) if hasattr(estimator, "transform")
                   else estimator.predict(Xs[:, :8]))
        else:
            estimator.fit(Xs, as_namespace(namespace, y.astype(float)))
            out = estimator.transform(Xs)
    out = out[0] if isinstance(out, tuple) else out
    if estimator.__sklearn_tags__().array_api_support:
        assert array_namespace(out) is array_namespace(Xs)
    else:
        assert isinstance(out, np.ndarray)
