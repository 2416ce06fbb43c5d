"""MDS in the namespace of the data: ``ldr.objectives.MDS`` on a PyTorch tensor or an
array-api-strict array keeps its rows, landmarks and dissimilarities there and computes its
cost, gradient, Hessian-vector products, Φ and stress there, and ``ldr.solve`` iterates
there.  Float64 values equal NumPy's to 1e-10 (relative to the largest entry) — exact, by
blocks, with landmarks and with sampled rows; only d×d arrays, the mean and the rows the
default smoothing is read from reach the host."""

import numpy as np
import pytest
from _array_namespaces import HAS_TORCH, NAMESPACES, host_copies
from _array_namespaces import as_namespace as _as

import ldr
from ldr.data import arrays
from ldr.manifolds import orthonormalize, sin_largest_angle
from ldr.objectives.mds import MDS, SMOOTHING_ROWS

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: exact with δ stored, by blocks, landmarks, landmarks and sampled rows, another metric
OPTIONS = [{}, {"block_size": 7}, {"landmarks": 40}, {"landmarks": 40, "rows": 90},
           {"metric": "manhattan"}]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 6)) * np.linspace(3.0, 0.3, 6)
    M = orthonormalize(rng.standard_normal((6, 2)))
    V = rng.standard_normal(M.shape)
    return X, M, V


def _rel(a, ref) -> float:
    return float(np.max(np.abs(np.asarray(arrays.to_host(a), dtype=float) - ref))
                 / np.max(np.abs(ref)))


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "stored")
@pytest.mark.parametrize("name", NAMESPACES)
def test_float64_oracles_in_the_namespace_equal_numpys(data, name, options):
    X, M, V = data
    ref, obj = MDS(X, 2, **options), MDS(_as(name, X), 2, **options)
    assert arrays.foreign(obj.X) is arrays.foreign(_as(name, X))
    assert obj.smoothing == pytest.approx(ref.smoothing, rel=1e-12)
    Ma, Va = _as(name, M), _as(name, V)
    assert float(obj.cost(Ma)) == pytest.approx(ref.cost(M), rel=1e-10)
    assert obj.stress(Ma) == pytest.approx(ref.stress(M), rel=1e-10)
    for got, want in ((obj.egrad(Ma), ref.egrad(M)), (obj.ehvp(Ma, Va), ref.ehvp(M, V)),
                      (obj.phi(Ma), ref.phi(M))):
        assert arrays.foreign(got) is arrays.foreign(Ma)
        assert _rel(got, want) <= 1e-10


def test_the_gradient_is_the_costs_derivative_after_the_rewrite(data):
    """The closed forms against central differences (NumPy, landmarks and sampled rows)."""
    X, M, V = data
    obj = MDS(X, 2, landmarks=40, rows=90)
    t = 1e-6
    fd = (obj.cost(M + t * V) - obj.cost(M - t * V)) / (2 * t)
    assert np.sum(obj.egrad(M) * V) == pytest.approx(fd, rel=1e-6)
    fd_g = (obj.egrad(M + t * V) - obj.egrad(M - t * V)) / (2 * t)
    np.testing.assert_allclose(obj.ehvp(M, V), fd_g, rtol=1e-5, atol=1e-6 * np.abs(fd_g).max())


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_fit_in_the_namespace_equals_numpys(data, name):
    X, _, _ = data
    Xa = _as(name, X)
    ref = ldr.solve(MDS(X, 2, landmarks=40, rows=90), "trust-region", start="heuristic")
    res = ldr.solve(MDS(Xa, 2, landmarks=40, rows=90), "trust-region", start="heuristic")
    assert arrays.foreign(res.M) is arrays.foreign(Xa)
    assert res.converged and ref.converged, res.reason
    assert res.cost == pytest.approx(ref.cost, rel=1e-9)
    assert sin_largest_angle(np.asarray(arrays.to_host(res.M)), ref.M) <= 1e-8


@needs_torch
def test_building_and_solving_move_no_data_sized_array_to_the_host(monkeypatch):
    """Only the d×d scatter, the mean, points and the smoothing's seeded rows (at most
    ``SMOOTHING_ROWS``) are read back; the spy sees a conversion, so the test can fail."""
    import torch

    X = np.random.default_rng(1).standard_normal((3000, 5)) * np.linspace(2.0, 0.5, 5)
    seen = host_copies(monkeypatch)
    obj = MDS(torch.as_tensor(X), 2, landmarks=200, rows=2500)
    res = ldr.solve(obj, "trust-region", start="heuristic")
    assert isinstance(res.M, torch.Tensor)
    big = [s for s in seen if max(s, default=0) > SMOOTHING_ROWS or int(np.prod(s)) > 5 * 5
           and max(s) != SMOOTHING_ROWS]
    assert not big, f"arrays moved to the host: {big}"
    arrays.to_host(obj.X)
    assert seen[-1] == (2500, 5)


@needs_torch
def test_float32_tensors_compute_in_float32(data):
    import torch

    X, M, V = data
    ref = MDS(X, 2, landmarks=40)
    obj = MDS(torch.as_tensor(X, dtype=torch.float32), 2, landmarks=40)
    M32 = torch.as_tensor(M, dtype=torch.float32)
    g = obj.egrad(M32)
    assert g.dtype == torch.float32 and _rel(g, ref.egrad(M)) <= 1e-4
    assert float(obj.cost(M32)) == pytest.approx(ref.cost(M), rel=1e-5)
