"""What the array-namespace tests share (``tests/test_namespaces.py``,
``tests/test_wda_namespace.py``, ``tests/test_hsic_namespace.py``, the ``array_api_*_cases``
files): which namespaces are installed, the parametrization over them, NumPy test data
converted into one (float64 unless a dtype is given), and a spy on PyTorch's conversions to
NumPy (:func:`host_copies`) for the tests that no data-sized array reaches the host."""

import importlib.util

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


def host_copies(monkeypatch) -> list:
    """Spy on PyTorch's conversions to NumPy (``Tensor.numpy``, ``Tensor.__array__``) for the
    rest of the test: returns the list to which each converted tensor's shape is appended."""
    import torch

    seen = []
    numpy, array = torch.Tensor.numpy, torch.Tensor.__array__

    def spy_numpy(self, *args, **kwargs):
        seen.append(tuple(self.shape))
        return numpy(self, *args, **kwargs)

    def spy_array(self, *args, **kwargs):
        seen.append(tuple(self.shape))
        return array(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "numpy", spy_numpy)
    monkeypatch.setattr(torch.Tensor, "__array__", spy_array)
    return seen
