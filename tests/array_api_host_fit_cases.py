"""scikit-learn's array API convention for the estimators whose fit runs on the host —
UndercompleteICA and the generic LinearDR (run by tests/test_array_api.py in a
fresh interpreter with ``SCIPY_ARRAY_API=1``, which scikit-learn's dispatch requires before
SciPy is imported; collected alone, it skips).

Under ``array_api_dispatch=True`` an array-api-strict or PyTorch (CPU) input is copied to the
host, the fit runs there as NumPy's does, and
every fitted array — numeric ``classes_`` included — comes back in the input's
namespace and on its device, equal to the NumPy fit's to 1e-10 (the same run: in fact to the
last bit).  ``transform`` (and ICA's ``inverse_transform``) computes the linear map in the
input's namespace, equal to NumPy's to 1e-10, and a spy on PyTorch's conversions sees no
data-sized array reach the host there; the generic LinearDR, whose objective's ``transform``
may be any function of the rows, computes it on a host copy and answers in the namespace.
An input of another namespace than the fit's is refused, naming the method; without the
setting a tensor in gives NumPy out, the same numbers as before.
"""

import importlib.util
import os
import warnings

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("needs SCIPY_ARRAY_API=1 before SciPy is imported (tests/test_array_api.py "
                "runs this file so)", allow_module_level=True)

import array_api_compat  # noqa: E402
import sklearn  # noqa: E402
from _array_namespaces import (  # noqa: E402
    NAMESPACES,
    array_api_check_combinations,
    host_copies,
)
from _array_namespaces import as_namespace as _as  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

import ldr  # noqa: E402
from ldr.data import arrays  # noqa: E402
from ldr.estimators import LinearDR, UndercompleteICA  # noqa: E402

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: (estimator, whether its fit reads y); small fits on 60 wine rows
CASES = {
    "UndercompleteICA": (lambda: UndercompleteICA(2), False),
    "LinearDR(lda)": (lambda: LinearDR("lda", 2, objective_params={"shrinkage": 0.01}), True),
    # a product manifold: M_ is the pair (W, log σ²), transform the posterior mean
    "LinearDR(ppca)": (lambda: LinearDR("ppca", 2), False),
}
#: fitted attributes that are not data-derived arrays
NOT_ARRAYS = {"result_", "objective_", "results_", "kernel_", "history_", "priors_"}


@pytest.fixture(scope="module")
def wine():
    X, y = ldr.datasets.load("wine")
    # contiguous, as the host copy of an input is: the same bytes give the same run (a strided
    # view's BLAS sums differ in the last bit, and ICA's and PPCA's M_ are defined up to
    # signs and rotations that such a bit may flip)
    return np.ascontiguousarray(X[::3]), y[::3]


def _labels(name, y):
    """y as an integer array of the namespace (class labels stay labels)."""
    if name == "torch":
        import torch

        return torch.as_tensor(y)
    return _as(name, y)


def _host(a):
    if isinstance(a, tuple):
        return tuple(_host(v) for v in a)
    return np.asarray(arrays.to_host(a))


def _same_space(a, ref):
    for v in (a if isinstance(a, tuple) else (a,)):
        assert array_api_compat.array_namespace(v) is array_api_compat.array_namespace(ref)
        assert array_api_compat.device(v) == array_api_compat.device(ref)


def _close(a, b, tol=1e-10):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _close(u, v, tol)
        return
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                               rtol=tol, atol=tol)


def _arrays(est) -> dict:
    """The fitted public attributes that are arrays (or tuples of arrays) of numbers."""
    def numeric(v):
        return isinstance(v, np.ndarray) and v.dtype.kind in "biuf"
    return {k: v for k, v in vars(est).items()
            if k.endswith("_") and not k.startswith("_") and k not in NOT_ARRAYS
            and (numeric(v) or isinstance(v, tuple) and v and all(map(numeric, v)))}


def _fit(make, needs_y, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the same run either way
        return make().fit(X, y) if needs_y else make().fit(X)


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("case", list(CASES))
def test_the_answers_are_in_the_inputs_namespace_and_equal_numpys(wine, case, name):
    make, needs_y = CASES[case]
    X, y = wine
    ref = _fit(make, needs_y, X, y)
    Xa, ya = _as(name, X), _labels(name, y)
    with sklearn.config_context(array_api_dispatch=True):
        est = _fit(make, needs_y, Xa, ya)
        outputs = {"transform": (est.transform(Xa), ref.transform(X))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            outputs["fit_transform"] = (make().fit_transform(Xa, ya if needs_y else None),
                                        ref.transform(X))
        if hasattr(est, "inverse_transform"):
            Z = outputs["transform"][0]
            outputs["inverse_transform"] = (est.inverse_transform(Z),
                                            ref.inverse_transform(ref.transform(X)))
    expected = _arrays(ref)
    assert {"M_", "mean_"} & set(expected), expected  # (so that the loop below sees some)
    assert set(_arrays(est)) == set()  # none is left in NumPy
    for attr, value in expected.items():
        _same_space(getattr(est, attr), Xa)
        _close(_host(getattr(est, attr)), value)
    for out, value in outputs.values():
        _same_space(out, Xa)
        _close(_host(out), value)
    assert est.result_.cost == pytest.approx(ref.result_.cost, rel=1e-12, abs=1e-14)
    assert sklearn.base.clone(est).__sklearn_tags__().array_api_support


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_an_input_of_another_namespace_than_the_fits_is_refused(wine, case):
    make, needs_y = CASES[case]
    X, y = wine
    with sklearn.config_context(array_api_dispatch=True):
        est = _fit(make, needs_y, _as("torch", X), _labels("torch", y))
        for other in (X, _as("array_api_strict", X)):
            with pytest.raises(ValueError, match=rf"{type(est).__name__}\.transform\(\) must "
                                                 "use the same namespace"):
                est.transform(other)
        if hasattr(est, "inverse_transform"):
            with pytest.raises(ValueError, match=r"inverse_transform\(\) must use the same"):
                est.inverse_transform(np.zeros((3, 2)))


@needs_torch
@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("LinearDR")])
def test_transform_runs_in_the_namespace(wine, case, monkeypatch):
    """The fit copies the rows to the host; ``transform`` (and ICA's ``inverse_transform``)
    then moves nothing with as many rows as the data there: the linear map runs on the
    tensors (every conversion of a tensor to NumPy is recorded)."""
    make, needs_y = CASES[case]
    X, y = wine
    Xt = _as("torch", X)
    with sklearn.config_context(array_api_dispatch=True):
        est = _fit(make, needs_y, Xt, _labels("torch", y))
        seen = host_copies(monkeypatch)
        Z = est.transform(Xt)
        if hasattr(est, "inverse_transform"):
            est.inverse_transform(Z)
    assert not [s for s in seen if max(s, default=0) >= X.shape[0]], seen
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == X.shape


@needs_torch
@pytest.mark.parametrize("case", list(CASES))
def test_without_dispatch_a_tensor_gives_numpy_as_before(wine, case):
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    ref = _fit(make, needs_y, X, y)
    est = _fit(make, needs_y, torch.as_tensor(X), torch.as_tensor(y))
    Z = est.transform(torch.as_tensor(X))
    assert isinstance(Z, np.ndarray)
    np.testing.assert_array_equal(Z, ref.transform(X))
    for attr, value in _arrays(ref).items():
        for v, e in zip(*((getattr(est, attr), value) if isinstance(value, tuple)
                          else ((getattr(est, attr),), (value,)))):
            assert isinstance(v, np.ndarray)
            np.testing.assert_array_equal(v, e)


@needs_torch
@pytest.mark.parametrize("case", ["UndercompleteICA", "LinearDR(lda)"])
def test_float32_tensors_give_float32_answers_as_numpys_float32_fit(wine, case):
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    X32 = X.astype(np.float32)
    ref = _fit(make, needs_y, X32, y)
    with sklearn.config_context(array_api_dispatch=True):
        est = _fit(make, needs_y, torch.as_tensor(X32), torch.as_tensor(y))
        Z = est.transform(torch.as_tensor(X32))
    assert Z.dtype == est.M_.dtype == torch.float32
    # the same host fit; the map applied in float64 on each side, rounded to float32
    np.testing.assert_allclose(Z.numpy(), ref.transform(X32), rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
@pytest.mark.parametrize("case", ["UndercompleteICA"])
def test_cuda_tensors_give_cuda_answers(wine, case):
    import torch

    make, needs_y = CASES[case]
    X, y = wine
    Xc, yc = torch.as_tensor(X, device="cuda"), torch.as_tensor(y, device="cuda")
    with sklearn.config_context(array_api_dispatch=True):
        est = _fit(make, needs_y, Xc, yc)
        Z = est.transform(Xc)
    assert est.M_.device.type == Z.device.type == "cuda"
    np.testing.assert_allclose(Z.cpu().numpy(), _fit(make, needs_y, X, y).transform(X),
                               atol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("namespace, device, dtype", list(array_api_check_combinations()))
@pytest.mark.parametrize("estimator", [UndercompleteICA(2)], ids=lambda e: type(e).__name__)
def test_scikit_learns_array_api_check(estimator, namespace, device, dtype):
    """scikit-learn's own ``check_array_api_input``, values compared with NumPy's — for
    UndercompleteICA in float32 too: the check's data have rank 8 in 10 features, which
    UndercompleteICA now reads at float32's precision (it whitened float32's rounding in the
    two null directions up to unmixing entries of 7e7, whose NumPy float32 transform had no
    correct digit)."""
    from sklearn.utils.estimator_checks import check_array_api_input

    check_array_api_input(type(estimator).__name__, estimator, namespace, device_name=device,
                          dtype_name=dtype, check_values=True)
