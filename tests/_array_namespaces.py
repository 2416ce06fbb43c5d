"""What the array-namespace tests share (``tests/test_namespaces.py``,
``tests/test_wda_namespace.py``, ``tests/test_hsic_namespace.py``, the ``array_api_*_cases``
files): which namespaces are installed, the parametrization over them, NumPy test data
converted into one (float64 unless a dtype is given), a spy on PyTorch's conversions to
NumPy (:func:`host_copies`) for the tests that no data-sized array reaches the host, and the
two halves of scikit-learn's estimator checks: :func:`parametrize_with_checks_here` (this
session, without ``check_array_api_input``) and :func:`array_api_check_combinations` (that
check's namespaces, devices and dtypes, run by ``tests/test_array_api.py`` in a fresh
interpreter with ``SCIPY_ARRAY_API=1``)."""

import importlib.util
import os

import numpy as np
import pytest

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_STRICT = importlib.util.find_spec("array_api_strict") is not None

NAMESPACES = [
    pytest.param("array_api_strict", marks=pytest.mark.skipif(
        not HAS_STRICT, reason="array-api-strict is not installed (it is in the [test] extra)")),
    pytest.param("torch", marks=pytest.mark.skipif(
        not HAS_TORCH, reason="torch is not installed (pip install 'ldr-manifold[torch]')")),
]


def as_namespace(name, a, dtype=None):
    """``a`` as an array of the namespace ``name`` ("torch" or "array_api_strict")."""
    if name == "torch":
        import torch

        return torch.as_tensor(np.ascontiguousarray(a),
                               dtype=torch.float64 if dtype is None else dtype)
    import array_api_strict as xs

    return xs.asarray(a)


def same_space(a, ref) -> None:
    """Assert that ``a`` is in the namespace and on the device of ``ref``."""
    import array_api_compat

    assert array_api_compat.array_namespace(a) is array_api_compat.array_namespace(ref)
    assert array_api_compat.device(a) == array_api_compat.device(ref)


def labels_in(name, y):
    """The integer labels y in the namespace ``name`` ("torch" or "array_api_strict")."""
    if name == "torch":
        import torch

        return torch.as_tensor(y)
    import array_api_strict as xs

    return xs.asarray(y)


def host_copies(monkeypatch, dtypes: bool = False) -> list:
    """Spy on PyTorch's conversions to NumPy (``Tensor.numpy``, ``Tensor.__array__``) for the
    rest of the test: returns the list to which each converted tensor's shape is appended
    (with ``dtypes``, the pair (shape, dtype))."""
    import torch

    seen = []
    numpy, array = torch.Tensor.numpy, torch.Tensor.__array__

    def record(tensor):
        seen.append((tuple(tensor.shape), tensor.dtype) if dtypes else tuple(tensor.shape))

    def spy_numpy(self, *args, **kwargs):
        record(self)
        return numpy(self, *args, **kwargs)

    def spy_array(self, *args, **kwargs):
        record(self)
        return array(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "numpy", spy_numpy)
    monkeypatch.setattr(torch.Tensor, "__array__", spy_array)
    return seen


#: scikit-learn's array API checks skip unless ``SCIPY_ARRAY_API=1`` was set before SciPy
#: was imported, which a test session cannot do for itself without changing the SciPy
#: mode of every NumPy test; they run in ``tests/test_array_api.py``'s fresh interpreter (this
#: one, with its variants, in the ``array_api_*_cases.py`` files)
ARRAY_API_CHECK = "check_array_api_input"


def check_name(check) -> str:
    """The name of a scikit-learn estimator check (a function or a partial of one)."""
    return getattr(getattr(check, "func", check), "__name__", "")


def parametrize_with_checks_here(estimators, **kwargs):
    """scikit-learn's ``parametrize_with_checks`` without its array API checks
    (``check_array_api_input``, ``check_array_api_mixed_inputs``,
    ``check_array_api_same_namespace``) when this session lacks ``SCIPY_ARRAY_API=1`` — each
    would only skip ("SCIPY_ARRAY_API is not set"); they run in the fresh interpreter of
    ``tests/test_array_api.py`` on :func:`array_api_check_combinations` (asserted there for
    every estimator whose tags say it supports the array API)."""
    from sklearn.utils.estimator_checks import parametrize_with_checks

    mark = parametrize_with_checks(estimators, **kwargs)
    if os.environ.get("SCIPY_ARRAY_API") == "1":
        return mark
    kept = [p for p in mark.args[1] if not check_name(
        (p.values if hasattr(p, "values") else p)[1]).startswith("check_array_api_")]
    return pytest.mark.parametrize(mark.args[0], kept, **mark.kwargs)


def array_api_check_combinations():
    """The (namespace, device, dtype) triples of scikit-learn's array API checks that this
    machine can run: NumPy, array-api-strict (both of its devices), PyTorch on the CPU, and
    PyTorch on CUDA where a device is present; CuPy, dpnp, XPU and MPS are left out."""
    from sklearn.utils._array_api import yield_namespace_device_dtype_combinations

    cuda = HAS_TORCH and _torch_cuda()
    for namespace, device, dtype in yield_namespace_device_dtype_combinations(
            include_numpy_namespaces=True):
        if (namespace in ("numpy", "array_api_strict")
                or (namespace == "torch" and HAS_TORCH and device in ("cpu", None))
                or (namespace == "torch" and device == "cuda" and cuda)):
            yield namespace, device, dtype


def _torch_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())
