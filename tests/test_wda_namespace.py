"""WDA and SCF in the namespace of the data (issue 24): ``ldr.objectives.WDA`` on a PyTorch
tensor or an array-api-strict array computes its plans, cost, gradient, complex-step
Hessian-vector products and pencil there (:mod:`ldr.objectives.transport`), and SCF and
the default chain iterate there.

Float64 values equal NumPy's to 1e-10 (relative to the largest entry), with the reference
kernel stored and by row blocks, exact and with mini-batches.  Float32 tensors compute in
float32 (the complex step in complex64): values within 1e-5 of float64's (relative; the data
rounded to float32 and ε = 1.2e-7 amplified by the ten Sinkhorn iterations), and the SCF
subspace, at ``xtol=1e-5`` (float32's fixed-point residual stagnates near 1e-6), within 1e-4.
"""

import numpy as np
import pytest
from _array_namespaces import HAS_TORCH, NAMESPACES, host_copies
from _array_namespaces import as_namespace as _as

import ldr
from ldr.data import arrays
from ldr.manifolds import orthonormalize, sin_largest_angle
from ldr.objectives import WDA

#: PyTorch on one thread for these small operations (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("one_torch_thread")

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")

#: cached reference kernel, row blocks (a pair's kernel over the budget), mini-batches, a
#: small reg (the log domain's re-centring), POT's normalization
OPTIONS = [{}, {"memory_budget": 2e4}, {"batch_size": 30}, {"reg": 0.02}, {"normalize_at": 0}]


@pytest.fixture(scope="module")
def data():
    X, y = ldr.datasets.make_wda(240, seed=3, noise_dims=6)
    rng = np.random.default_rng(0)
    P = orthonormalize(rng.standard_normal((X.shape[1], 2)))
    V = rng.standard_normal(P.shape)
    return X, y, P, V


def _rel(a, ref) -> float:
    return float(np.max(np.abs(np.asarray(arrays.to_host(a), dtype=float) - ref))
                 / np.max(np.abs(ref)))


def _kwargs(options, P):
    return {k: (P if k == "normalize_at" else v) for k, v in options.items()}


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "cached")
@pytest.mark.parametrize("name", NAMESPACES)
def test_float64_oracles_in_the_namespace_equal_numpys(data, name, options):
    X, y, P, V = data
    kw = _kwargs(options, P)
    ref, obj = WDA(X, y, 2, **kw), WDA(_as(name, X), y, 2, **kw)
    assert arrays.foreign(obj.groups[0]) is arrays.foreign(_as(name, X))
    if "memory_budget" in kw:  # the blocked path is the one exercised
        assert not obj.exact or obj.groups[0].shape[0] ** 2 * 8 > obj._cache_bytes
    Pa, Va = _as(name, P), _as(name, V)
    assert obj.cost(Pa) == pytest.approx(ref.cost(P), rel=1e-10)
    g = obj.egrad(Pa)
    assert arrays.foreign(g) is arrays.foreign(Pa)
    assert _rel(g, ref.egrad(P)) <= 1e-10
    assert _rel(obj.ehvp(Pa, Va), ref.ehvp(P, V)) <= 1e-10
    for A, A0 in zip(obj.pencil(Pa), ref.pencil(P)):
        assert arrays.foreign(A) is arrays.foreign(Pa)
        assert _rel(A, A0) <= 1e-10


@pytest.mark.parametrize("name", NAMESPACES)
def test_the_plans_in_the_namespace_equal_numpys(data, name):
    X, y, P, _ = data
    ref = WDA(X, y, 2).plans(P)
    out = WDA(_as(name, X), y, 2).plans(_as(name, P))
    for key, T in ref.items():
        assert arrays.foreign(out[key]) is not None
        assert _rel(out[key], T) <= 1e-10


@pytest.mark.parametrize(("name", "solver"), [
    pytest.param("torch", "scf", marks=needs_torch, id="torch-scf"),
    pytest.param("torch", None, marks=needs_torch, id="torch-default-chain"),
    pytest.param("torch", ldr.solvers.SCF(acceleration="anderson"), marks=needs_torch,
                 id="torch-scf-anderson"),
    pytest.param("array_api_strict", "scf", marks=NAMESPACES[1].marks, id="strict-scf")])
def test_float64_fits_in_the_namespace_equal_numpys(data, name, solver):
    X, y, _, _ = data
    Xa = _as(name, X)
    ref = ldr.solve(WDA(X, y, 2), solver)
    res = ldr.solve(WDA(Xa, y, 2), solver)
    assert arrays.foreign(res.M) is arrays.foreign(Xa) and res.M.dtype == Xa.dtype
    assert res.converged and ref.converged, res.reason
    assert res.n_iter == ref.n_iter
    assert res.cost == pytest.approx(ref.cost, rel=1e-10)
    assert sin_largest_angle(np.asarray(arrays.to_host(res.M)), ref.M) <= 1e-10


@needs_torch
def test_float32_tensors_compute_in_float32_within_the_documented_tolerance(data):
    import torch

    X, y, P, V = data
    ref = WDA(X, y, 2)
    obj = WDA(torch.as_tensor(X, dtype=torch.float32), y, 2)
    P32, V32 = torch.as_tensor(P, dtype=torch.float32), torch.as_tensor(V, dtype=torch.float32)
    assert obj.cost(P32) == pytest.approx(ref.cost(P), rel=1e-5)
    g, h = obj.egrad(P32), obj.ehvp(P32, V32)
    assert g.dtype == torch.float32 and h.dtype == torch.float32
    assert _rel(g, ref.egrad(P)) <= 1e-5
    assert _rel(h, ref.ehvp(P, V)) <= 1e-5
    fit, fit32 = ldr.solve(ref, "scf"), ldr.solve(obj, "scf", xtol=1e-5)
    assert fit32.converged and fit32.M.dtype == torch.float32, fit32.reason
    assert sin_largest_angle(fit32.M.double().numpy(), fit.M) <= 1e-4


@needs_torch
def test_the_loop_moves_no_data_sized_array_to_the_host(monkeypatch):
    """Every conversion of a tensor to NumPy during the fits is recorded: none may have more
    entries than the d×d pencil (the scalars the stopping rules read go by ``float``)."""
    import torch

    X, y = ldr.datasets.make_wda(120, seed=3, noise_dims=6)
    n_small = min(np.bincount(y))
    d = X.shape[1]
    objs = [WDA(torch.as_tensor(X), y, 2), WDA(torch.as_tensor(X), y, 2, memory_budget=2e4)]
    seen = host_copies(monkeypatch)
    for obj, solver in ((objs[0], None), (objs[1], "scf")):  # with trust region; by blocks
        res = ldr.solve(obj, solver)
        assert res.converged and isinstance(res.M, torch.Tensor), res.reason
    big = [s for s in seen if int(np.prod(s)) > d * d or max(s, default=0) >= n_small]
    assert not big, f"arrays moved to the host in the loop: {big}"
    # the spy does see a conversion (so the test can fail)
    arrays.to_host(objs[0].groups[0])
    assert seen[-1] == tuple(objs[0].groups[0].shape)


@needs_torch
def test_building_the_objective_moves_no_data_sized_array_to_the_host(monkeypatch):
    """The constructor checks, centers and splits the rows on their device (``class_rows``):
    only the d×d scatters, the mean and scalars come to the host — also with mini-batches and
    POT's normalization — and the groups equal NumPy's."""
    import torch

    X, y = ldr.datasets.make_wda(120, seed=3, noise_dims=6)
    d, n_small = X.shape[1], min(np.bincount(y))
    P0 = np.random.default_rng(0).standard_normal((d, 2))
    Xt = torch.as_tensor(X)
    seen = host_copies(monkeypatch)
    objs = [WDA(Xt, y, 2), WDA(Xt, y, 2, batch_size=20, normalize_at=P0)]
    assert not [s for s in seen if int(np.prod(s)) > d * d or max(s, default=0) >= n_small]
    ref = WDA(X, y, 2, batch_size=20, normalize_at=P0)
    for G, G0 in zip(objs[1].groups, ref.groups):
        assert isinstance(G, torch.Tensor) and _rel(G, G0) <= 1e-12
    assert objs[1].pair_reg == pytest.approx(ref.pair_reg, rel=1e-12)
    np.testing.assert_allclose(objs[0]._fda_scatter[0], ref._fda_scatter[0], rtol=1e-12)
    arrays.to_host(Xt)  # the spy does see a conversion (so the test can fail)
    assert seen[-1] == tuple(X.shape)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_TORCH or not __import__("torch").cuda.is_available(),
                    reason="needs CUDA")
def test_cuda_wda_computes_and_fits_on_the_gpu(data):
    import torch

    X, y, P, V = data
    ref = WDA(X, y, 2)
    obj = WDA(torch.as_tensor(X, device="cuda"), y, 2)
    Pc, Vc = torch.as_tensor(P, device="cuda"), torch.as_tensor(V, device="cuda")
    assert obj.cost(Pc) == pytest.approx(ref.cost(P), rel=1e-10)
    g, h = obj.egrad(Pc), obj.ehvp(Pc, Vc)
    assert g.is_cuda and h.is_cuda
    assert _rel(g, ref.egrad(P)) <= 1e-10 and _rel(h, ref.ehvp(P, V)) <= 1e-10
    fit, res = ldr.solve(ref, "scf"), ldr.solve(obj, "scf")
    assert res.converged and res.M.is_cuda, res.reason
    assert sin_largest_angle(res.M.cpu().numpy(), fit.M) <= 1e-10
