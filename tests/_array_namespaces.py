"""What the array-namespace tests share (``tests/test_namespaces.py``,
``tests/test_wda_namespace.py``): which namespaces are installed, the parametrization over
them, and NumPy test data converted into one (float64 unless a dtype is given)."""

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
