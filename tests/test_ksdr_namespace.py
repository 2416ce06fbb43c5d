"""KernelSDR in the namespace of the data: ``ldr.objectives.KernelSDR`` on a PyTorch tensor or
an array-api-strict array keeps its rows and the responses' factors there and computes its
kernel, Cholesky factorization and solves (:func:`ldr.core.linalg.cholesky_solve`), cost,
gradient, Hessian-vector products, Φ and the gKDR start there, and ``ldr.solve`` iterates
there.  Float64 values equal NumPy's to 1e-9 (relative to the largest entry); only d×d
arrays, points and the rows the kernel widths' medians are read from reach the host."""

import numpy as np
import pytest
from _array_namespaces import HAS_TORCH, NAMESPACES, host_copies
from _array_namespaces import as_namespace as _as

import ldr
from ldr.core.linalg import cholesky, cholesky_solve
from ldr.data import arrays
from ldr.manifolds import orthonormalize, sin_largest_angle
from ldr.objectives.ksdr import KernelSDR

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    b = np.array([1.0, 1.0, 0.0, 0.0, 0.0]) / np.sqrt(2)
    y_real = np.sin(2 * X @ b) + 0.05 * rng.standard_normal(120)
    y_classes = (X @ b > 0).astype(int) + (X[:, 2] > 0.5)
    M = orthonormalize(rng.standard_normal((5, 2)))
    V = rng.standard_normal(M.shape)
    return X, {"continuous": y_real, "classes": y_classes}, M, V


def _rel(a, ref) -> float:
    return float(np.max(np.abs(np.asarray(arrays.to_host(a), dtype=float) - ref))
                 / np.max(np.abs(ref)))


@pytest.mark.parametrize("kind", ["continuous", "classes"])
@pytest.mark.parametrize("name", NAMESPACES)
def test_float64_oracles_in_the_namespace_equal_numpys(data, name, kind):
    X, ys, M, V = data
    ref, obj = KernelSDR(X, ys[kind], 2), KernelSDR(_as(name, X), ys[kind], 2)
    assert arrays.foreign(obj.X) is arrays.foreign(_as(name, X))
    assert obj.sigma == pytest.approx(ref.sigma, rel=1e-12)
    Ma, Va = _as(name, M), _as(name, V)
    assert obj.cost(Ma) == pytest.approx(ref.cost(M), rel=1e-10)
    for got, want in ((obj.egrad(Ma), ref.egrad(M)), (obj.ehvp(Ma, Va), ref.ehvp(M, V)),
                      (obj.phi(Ma), ref.phi(M))):
        assert arrays.foreign(got) is arrays.foreign(Ma)
        assert _rel(got, want) <= 1e-9
    assert _rel(obj.gkdr_matrix(), ref.gkdr_matrix()) <= 1e-9


@pytest.mark.parametrize("name", [None, *NAMESPACES])
def test_cholesky_solves_against_a_general_solve(name):
    """:func:`cholesky` of A + shift·I and :func:`cholesky_solve` against ``numpy.linalg``."""
    rng = np.random.default_rng(2)
    B0 = rng.standard_normal((30, 30))
    A = B0 @ B0.T / 30
    R = rng.standard_normal((30, 3))
    want = np.linalg.solve(A + 0.5 * np.eye(30), R)
    Aa, Ra = (A, R) if name is None else (_as(name, A), _as(name, R))
    L = cholesky(Aa, 0.5)
    got = cholesky_solve(L, Ra)
    assert _rel(got, want) <= 1e-12
    np.testing.assert_array_equal(np.asarray(arrays.to_host(Aa)), A)  # A not written over


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_fit_in_the_namespace_equals_numpys(data, name):
    X, ys, _, _ = data
    Xa = _as(name, X)
    ref = ldr.solve(KernelSDR(X, ys["continuous"], 1), "trust-region", start="heuristic")
    res = ldr.solve(KernelSDR(Xa, ys["continuous"], 1), "trust-region", start="heuristic")
    assert arrays.foreign(res.M) is arrays.foreign(Xa)
    assert res.converged and ref.converged, res.reason
    assert res.cost == pytest.approx(ref.cost, rel=1e-9)
    assert sin_largest_angle(np.asarray(arrays.to_host(res.M)), ref.M) <= 1e-7


@needs_torch
def test_building_and_solving_move_no_data_sized_array_to_the_host(monkeypatch):
    """Only d×d arrays, points and the median's seeded rows (at most 2000) are read back;
    the spy sees a conversion, so the test can fail."""
    import torch

    rng = np.random.default_rng(1)
    X = rng.standard_normal((2500, 4))
    y = np.sin(X[:, 0] + X[:, 1]) + 0.1 * rng.standard_normal(2500)
    seen = host_copies(monkeypatch)
    obj = KernelSDR(torch.as_tensor(X), y, 1)
    res = ldr.solve(obj, "trust-region", start="heuristic", max_iter=3)
    assert isinstance(res.M, torch.Tensor)
    big = [s for s in seen if max(s, default=0) > 2000 or (int(np.prod(s)) > 4 * 4
                                                           and s != (2000, 4))]
    assert not big, f"arrays moved to the host: {big}"
    arrays.to_host(obj.X)
    assert seen[-1] == (2500, 4)
