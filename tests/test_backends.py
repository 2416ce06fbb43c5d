"""Autodiff backends for custom objectives (``ldr.core.backends``).

Every backend's gradient and Hessian-vector product agree with central finite differences of
its own cost and gradient, and with autograd's (the reference), on the README's sparse PCA,
a cost on a product manifold and a float32 point; the README's objective passes
``ldr.check`` and solves to the autograd answer within 1e-10, as a function and as a
subclass, on a product manifold, through ``LinearDR``, ``ldr.compare`` and pymanopt.  JAX
turns on its 64-bit mode and warns about float32 constants, and runs a cost it cannot trace
uncompiled with a warning; PyTorch takes a named device, compiles on request
(``compile=True``) to the eager answer, and differentiates what ``torch.compile`` cannot
capture whole.  Objectives pickle (joblib, Dask) and are rebuilt.  A backend or option that
is unknown, not installed or not the backend's is a ParameterError naming it.  JAX and
PyTorch tests skip without them.
"""

import importlib.util
import warnings

import autograd.numpy as anp
import numpy as np
import pytest

import ldr
from ldr.core.errors import ParameterError

HAS = {name: importlib.util.find_spec(name) is not None for name in ("jax", "torch")}
needs = {name: pytest.mark.skipif(not HAS[name], reason=f"{name} is not installed")
         for name in HAS}
LAM, EPS = 0.1, 1e-6


@pytest.fixture(scope="module")
def C():
    X, _ = ldr.datasets.load("wine")
    return X.T @ X / len(X)


def sparse_pca(C, backend):
    """The README's custom objective, written for ``backend``."""
    if backend == "autograd":
        return ldr.objective(lambda M: -anp.trace(M.T @ C @ M)
                             + LAM * anp.sum(anp.sqrt(M**2 + EPS)), shape=(13, 2))
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # before making arrays: float64 ones
        Cj = jnp.asarray(C)
        return ldr.objective(lambda M: -jnp.trace(M.T @ Cj @ M)
                             + LAM * jnp.sum(jnp.sqrt(M**2 + EPS)), shape=(13, 2),
                             backend="jax")
    if backend == "torch":
        import torch

        Ct = torch.as_tensor(C)
        return ldr.objective(lambda M: -torch.trace(M.T @ Ct @ M)
                             + LAM * torch.sum(torch.sqrt(M**2 + EPS)), shape=(13, 2),
                             backend="torch")
    assert backend == "numpy"
    return ldr.objective(lambda M: -np.trace(M.T @ C @ M) + LAM * np.sum(np.sqrt(M**2 + EPS)),
                         shape=(13, 2), backend="numpy",
                         egrad=lambda M: -2 * C @ M + LAM * M / np.sqrt(M**2 + EPS),
                         ehvp=lambda M, V: -2 * C @ V + LAM * EPS * V / (M**2 + EPS) ** 1.5)


BACKENDS = ["autograd", pytest.param("jax", marks=needs["jax"]),
            pytest.param("torch", marks=needs["torch"]), "numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_readme_objective_passes_check_and_solves_to_autograds_answer(C, backend):
    obj = sparse_pca(C, backend)
    assert obj.backend == backend
    report = ldr.check(obj)
    assert report.ok, str(report)
    assert report["egrad"].error < 1e-9 and report["ehvp"].error < 1e-8
    expected = "hand-written" if backend == "numpy" else backend
    assert f"egrad ({expected})" in report["egrad"].message
    ref = ldr.solve(sparse_pca(C, "autograd"), "trust-region", random_state=0, certify=True)
    res = ldr.solve(obj, "trust-region", random_state=0, certify=True)
    assert res.converged and res.certificate.is_local_min
    assert abs(res.cost - ref.cost) <= 1e-10 * abs(ref.cost)
    np.testing.assert_allclose(res.M, ref.M, atol=1e-10)
    # the oracles agree with autograd's at a random point, not only at the optimum
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((13, 2)))[0]
    V = np.random.default_rng(2).standard_normal((13, 2))
    ag = sparse_pca(C, "autograd")
    assert isinstance(obj.cost(M), float)
    np.testing.assert_allclose(obj.cost(M), ag.cost(M), rtol=1e-13)
    np.testing.assert_allclose(obj.egrad(M), ag.egrad(M), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(obj.ehvp(M, V), ag.ehvp(M, V), rtol=1e-11, atol=1e-12)


@needs["torch"]
def test_a_torch_subclass_declares_its_backend_in_the_class_body(C):
    import torch

    class SparsePCA(ldr.Objective):
        backend = "torch"

        def __init__(self, C, r):
            self.C, self.shape = torch.as_tensor(C), (C.shape[0], r)

        def cost(self, M):
            return -torch.trace(M.T @ self.C @ M) + LAM * torch.sum(torch.sqrt(M**2 + EPS))

    obj = SparsePCA(C, 2)
    assert ldr.check(obj).ok
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((13, 2)))[0]
    native = obj.cost(torch.as_tensor(M))          # the backend's arrays pass through
    assert isinstance(native, torch.Tensor) and isinstance(obj.cost(M), float)
    np.testing.assert_allclose(obj.egrad(M), sparse_pca(C, "autograd").egrad(M), rtol=1e-11)
    ref = ldr.solve(sparse_pca(C, "autograd"), random_state=0)
    np.testing.assert_allclose(ldr.solve(obj, random_state=0).M, ref.M, atol=1e-10)


@needs["jax"]
def test_a_jax_subclass_with_a_hand_written_gradient_uses_it_for_jax_arrays(C):
    import jax.numpy as jnp

    calls = []

    class SparsePCA(ldr.Objective):
        backend = "jax"
        shape = (13, 2)

        def cost(self, M):
            return -jnp.trace(M.T @ C @ M) + LAM * jnp.sum(jnp.sqrt(M**2 + EPS))

        def egrad(self, M):
            calls.append(type(M))
            return -2 * C @ M + LAM * M / jnp.sqrt(M**2 + EPS)

    obj = SparsePCA()
    report = ldr.check(obj)
    assert report.ok and "hand-written" in report["egrad"].message
    assert "jax" in report["ehvp"].message       # jax.jvp of the hand-written gradient
    assert calls                                  # called with (traced) JAX arrays
    assert not any(issubclass(t, np.ndarray) for t in calls)


def _cca_costs(Xa, Xb, backend):
    """A two-factor cost on Stiefel × Stiefel: −tr(MaᵀSabMb), for a product manifold."""
    S = Xa.T @ Xb / len(Xa)
    if backend == "jax":
        import jax.numpy as xp
    elif backend == "torch":
        import torch as xp

        S = xp.as_tensor(S)
    else:
        xp = anp
    return ldr.objective(lambda M: -xp.trace(M[0].T @ S @ M[1]),
                         shape=((Xa.shape[1], 2), (Xb.shape[1], 2)),
                         manifold=("stiefel", "stiefel"), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_backends_products_at_one_point_equal_the_exact_hessian(C, backend):
    """``ehvp_at(M)`` (autograd and PyTorch build the gradient's graph once at M and reuse it
    for each product; benchmarks/bench_backends.py times it) and ``ehvp`` give the exact
    Hessian-vector product −2 C V + λ ε V ⊘ (M² + ε)^{3/2} for several V at one M, and
    ``egrad`` the exact gradient −2 C M + λ M ⊘ √(M² + ε), at a point off the optimum."""
    rng = np.random.default_rng(3)
    M = np.linalg.qr(rng.standard_normal((13, 2)))[0] * 0.3  # entries near ε's scale too
    M[0, 0] = 1e-4
    obj = sparse_pca(C, backend)
    hvp = obj.ehvp_at(M)
    s = M**2 + EPS
    for _ in range(3):
        V = rng.standard_normal((13, 2))
        exact = -2 * (C @ V) + LAM * EPS * V / (s * np.sqrt(s))
        np.testing.assert_allclose(hvp(V), exact, rtol=1e-11, atol=1e-11)
        np.testing.assert_allclose(obj.ehvp(M, V), exact, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(obj.egrad(M), -2 * (C @ M) + LAM * M / np.sqrt(s),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs["jax"]),
                                     pytest.param("torch", marks=needs["torch"])])
def test_a_product_manifold_gives_autograds_answer(backend):
    Xa, Xb = ldr.datasets.make_cca(80, 5, seed=0)
    obj, ref_obj = _cca_costs(Xa, Xb, backend), _cca_costs(Xa, Xb, "autograd")
    assert ldr.check(obj).ok
    ref = ldr.solve(ref_obj, "trust-region", random_state=0)
    res = ldr.solve(obj, "trust-region", random_state=0)
    assert res.converged and abs(res.cost - ref.cost) <= 1e-10 * abs(ref.cost)
    for a, b in zip(res.M, ref.M):
        np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_linear_dr_and_compare_work_the_same_for_every_backend(backend):
    X, y = ldr.datasets.load("wine")
    assert ldr.check(sparse_pca(X[::2].T @ X[::2] / len(X[::2]), backend)).ok  # one fold's
    estimators = {}
    for name in ("autograd", backend):
        est = ldr.estimators.LinearDR(lambda X, y, r, b=name: sparse_pca(X.T @ X / len(X), b),
                                      n_components=2)
        estimators[name] = est.fit(X, y)
    np.testing.assert_allclose(estimators[backend].transform(X),
                               estimators["autograd"].transform(X), atol=1e-9)
    costs = {}
    for name in ("autograd", backend):
        comparison = ldr.compare(sparse_pca(X.T @ X / len(X), name), ["trust-region", "lbfgs"],
                                 n_starts=2, certify=False, progress=False)
        costs[name] = {key: result.cost for key, result in comparison.results.items()}
    assert len(costs[backend]) == 4 and costs[backend].keys() == costs["autograd"].keys()
    for key, cost in costs["autograd"].items():  # run by run, the same answer
        assert abs(costs[backend][key] - cost) < 1e-9 * abs(cost), key


@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs["jax"]),
                                     pytest.param("torch", marks=needs["torch"])])
def test_pymanopt_differentiates_with_its_own_backend_of_the_same_name(C, backend):
    import pymanopt.optimizers

    def run(name):  # a few iterations: pymanopt's JAX backend compiles nothing (slow)
        solver = ldr.solvers.Pymanopt(pymanopt.optimizers.TrustRegions(
            verbosity=0, max_iterations=4), backend="autograd")
        return ldr.solve(sparse_pca(C, name), solver, random_state=0)

    res, ref = run(backend), run("autograd")  # pymanopt's autograd, the same iterates
    assert res.n_iter == ref.n_iter == 4
    assert abs(res.cost - ref.cost) < 1e-10 * abs(ref.cost)
    np.testing.assert_allclose(res.M, ref.M, atol=1e-9)


def test_an_unknown_backend_lists_the_known_ones(C):
    with pytest.raises(ParameterError, match="autograd.*jax.*torch.*numpy") as info:
        ldr.objective(lambda M: 0.0, shape=(3, 1), backend="tensorflow")
    assert info.value.param == "backend"
    with pytest.raises(ParameterError, match="unknown backend 'mxnet'"):
        class Bad(ldr.Objective):  # checked when the class is made
            backend = "mxnet"


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_backend_not_installed_names_the_pip_command(monkeypatch, backend):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == backend else real(name, *a))
    with pytest.raises(ParameterError) as info:
        ldr.objective(lambda M: 0.0, shape=(3, 1), backend=backend)
    assert info.value.param == "backend"
    assert f'pip install "ldr-manifold[{backend}]"' in str(info.value)


def test_the_numpy_backend_differentiates_nothing(C):
    cost = sparse_pca(C, "numpy")
    with pytest.raises(ParameterError, match="egrad=") as info:
        ldr.objective(lambda M: 0.0, shape=(13, 2), backend="numpy")
    assert info.value.param == "egrad"
    # a gradient without a Hessian: L-BFGS by default, the trust region refuses, check says so
    grad_only = ldr.objective(cost.cost, shape=(13, 2), backend="numpy", egrad=cost.egrad)
    report = ldr.check(grad_only)
    assert report.ok and report["ehvp"].kind == "absent"
    res = ldr.solve(grad_only, random_state=0, certify=True)
    assert res.solver == "lbfgs" and res.converged
    assert res.certificate.method.startswith("not computed")
    ref = ldr.solve(sparse_pca(C, "autograd"), "lbfgs", random_state=0)
    assert res.n_iter == ref.n_iter and abs(res.cost - ref.cost) < 1e-10 * abs(ref.cost)
    with pytest.raises(ValueError, match="needs the objective to define ehvp.*numpy"):
        ldr.solve(grad_only, "trust-region")

    class NoGradient(ldr.Objective):
        backend = "numpy"
        shape = (13, 2)

        def cost(self, M):
            return float(np.sum(M))

    with pytest.raises(ParameterError, match="defines no egrad") as info:
        NoGradient().egrad(np.zeros((13, 2)))
    assert info.value.param == "backend"


@needs["jax"]
def test_a_cost_jax_cannot_trace_runs_uncompiled_with_a_warning(C):
    import jax.numpy as jnp

    def cost(M):
        if jnp.sum(M) > 1e9:  # value-dependent Python control flow: jit cannot trace it
            return jnp.sum(M)
        return -jnp.trace(M.T @ C @ M) + LAM * jnp.sum(jnp.sqrt(M**2 + EPS))

    obj = ldr.objective(cost, shape=(13, 2), backend="jax")
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((13, 2)))[0]
    with pytest.warns(UserWarning, match="runs uncompiled"):
        value = obj.cost(M)
    assert value == pytest.approx(sparse_pca(C, "autograd").cost(M), rel=1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ldr.check(obj).ok


@needs["jax"]
def test_a_jax_cost_over_float32_arrays_gets_a_warning(C):
    import jax.numpy as jnp

    C32 = jnp.asarray(C, dtype=jnp.float32)
    obj = ldr.objective(lambda M: -jnp.trace(M.T @ C32 @ M), shape=(13, 2), backend="jax")
    with pytest.warns(UserWarning, match="float32.*jax_enable_x64"):
        obj.cost(np.eye(13, 2))


def test_only_torch_places_points_on_a_device():
    with pytest.raises(ParameterError) as info:
        ldr.objective(lambda M: 0.0, shape=(3, 1), device="cuda")
    assert info.value.param == "device"


def _cuda() -> bool:
    if not HAS["torch"]:
        return False
    import torch

    return torch.cuda.is_available()


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs PyTorch with a CUDA device")
def test_a_torch_objective_on_the_gpu_gives_the_cpus_answer(C):
    import torch

    Ct = torch.as_tensor(C, device="cuda")
    obj = ldr.objective(lambda M: -torch.trace(M.T @ Ct @ M)
                        + LAM * torch.sum(torch.sqrt(M**2 + EPS)), shape=(13, 2),
                        backend="torch", device="cuda")
    assert ldr.check(obj).ok
    res = ldr.solve(obj, "trust-region", random_state=0)
    ref = ldr.solve(sparse_pca(C, "autograd"), "trust-region", random_state=0)
    np.testing.assert_allclose(res.M, ref.M, atol=1e-9)


@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs["jax"]),
                                     pytest.param("torch", marks=needs["torch"])])
def test_an_objective_pickles_with_cloudpickle_and_is_rebuilt(C, backend):
    """joblib and Dask send an objective to their workers by cloudpickle: its derivatives
    travel as what they are built from (the compiled programs do not pickle) and are rebuilt
    there, with the same answers and options."""
    cloudpickle = pytest.importorskip("cloudpickle")
    obj = sparse_pca(C, backend)
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((13, 2)))[0]
    V = np.random.default_rng(2).standard_normal((13, 2))
    G = obj.egrad(M)
    HV = obj.ehvp(M, V)
    copy = cloudpickle.loads(cloudpickle.dumps(obj))
    assert copy.backend == backend
    np.testing.assert_array_equal(copy.egrad(M), G)
    np.testing.assert_array_equal(copy.ehvp(M, V), HV)
    assert copy.cost(M) == obj.cost(M)
    if backend == "torch":
        compiled = ldr.objective(obj.derivatives().raw_cost, shape=(13, 2), backend="torch",
                                 compile=True, device="cpu")
        copy = cloudpickle.loads(cloudpickle.dumps(compiled))
        assert copy.derivatives().compile and copy.derivatives().device == "cpu"
    else:
        merged = ldr.objective(obj.derivatives().raw_cost, shape=(13, 2), backend="jax",
                               merge_symmetric=True)
        copy = cloudpickle.loads(cloudpickle.dumps(merged))
        assert copy.derivatives().merge_symmetric
        np.testing.assert_allclose(copy.ehvp(M, V), HV, rtol=1e-12, atol=1e-12)


# --- derivatives against finite differences and against autograd ---------------------------

def _xp(backend):
    """The array namespace a cost for ``backend`` is written with, and a constant maker."""
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        return jnp, jnp.asarray
    if backend == "torch":
        import torch

        return torch, torch.as_tensor
    return anp, np.asarray


def _fd_costs(backend):
    """Two costs written for ``backend`` with their point shapes: the README's sparse PCA
    (d × r = 30 × 3, a covariance of seeded data) and a non-linear cost on Stiefel × Stiefel
    (a tuple point)."""
    xp, const = _xp(backend)
    rng = np.random.default_rng(7)
    X = rng.standard_normal((90, 30))
    C = const(X.T @ X / 90)
    S = const(rng.standard_normal((30, 20)))

    def sparse(M):
        return -xp.trace(M.T @ C @ M) + LAM * xp.sum(xp.sqrt(M**2 + EPS))

    def product(M):
        A, B = M
        return -xp.trace(A.T @ S @ B) + 0.3 * xp.sum(xp.log1p(A**2)) + 0.1 * xp.sum(B**4)
    return {"sparse PCA": (sparse, (30, 3), "stiefel"),
            "product manifold": (product, ((30, 3), (20, 3)), ("stiefel", "stiefel"))}


def _draw(shape, rng):
    if isinstance(shape[0], tuple):
        return tuple(rng.standard_normal(s) for s in shape)
    return rng.standard_normal(shape)


def _flat(value):
    return np.concatenate([np.ravel(v) for v in value]) if isinstance(value, tuple) \
        else np.ravel(value)


def _step(M, V, t):
    if isinstance(M, tuple):
        return tuple(m + t * v for m, v in zip(M, V))
    return M + t * V


AUTODIFF = ["autograd", pytest.param("jax", marks=needs["jax"]),
            pytest.param("torch", marks=needs["torch"])]


@pytest.mark.parametrize("name", ["sparse PCA", "product manifold"])
@pytest.mark.parametrize("backend", AUTODIFF)
def test_gradient_and_hessian_match_finite_differences_and_autograd(backend, name):
    """⟨egrad(M), V⟩ is the central difference of the cost along V, and ehvp(M, V) that of
    the gradient (errors O(h²), h = 1e-5), at a generic point off the manifold; and every
    oracle equals autograd's to rounding."""
    cost, shape, manifold = _fd_costs(backend)[name]
    ref_cost = _fd_costs("autograd")[name][0]
    obj = ldr.objective(cost, shape=shape, manifold=manifold, backend=backend)
    ref = ldr.objective(ref_cost, shape=shape, manifold=manifold)
    rng = np.random.default_rng(11)
    M = _draw(shape, rng)
    V = _draw(shape, rng)
    h = 1e-5
    G = obj.egrad(M)
    HV = obj.ehvp(M, V)
    slope = (obj.cost(_step(M, V, h)) - obj.cost(_step(M, V, -h))) / (2 * h)
    assert abs(slope - _flat(G) @ _flat(V)) <= 1e-7 * np.linalg.norm(_flat(G)) \
        * np.linalg.norm(_flat(V))
    bend = (_flat(obj.egrad(_step(M, V, h))) - _flat(obj.egrad(_step(M, V, -h)))) / (2 * h)
    assert np.linalg.norm(bend - _flat(HV)) <= 1e-6 * np.linalg.norm(_flat(HV))
    np.testing.assert_allclose(obj.cost(M), ref.cost(M), rtol=1e-13)
    np.testing.assert_allclose(_flat(G), _flat(ref.egrad(M)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_flat(HV), _flat(ref.ehvp(M, V)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_flat(obj.ehvp_at(M)(V)), _flat(HV), rtol=1e-13, atol=1e-13)
    assert all(v.dtype == np.float64 for v in (G if isinstance(G, tuple) else (G,)))


@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs["jax"]),
                                     pytest.param("torch", marks=needs["torch"])])
def test_a_float32_point_is_differentiated_in_float64(backend):
    """The cost receives float64 arrays whatever NumPy type the point comes in: a float32
    point's answers are those at the same point cast to float64 (autograd's there)."""
    cost, shape, _ = _fd_costs(backend)["sparse PCA"]
    obj = ldr.objective(cost, shape=shape, backend=backend)
    ref = ldr.objective(_fd_costs("autograd")["sparse PCA"][0], shape=shape)
    rng = np.random.default_rng(12)
    M32 = rng.standard_normal(shape).astype(np.float32)
    V32 = rng.standard_normal(shape).astype(np.float32)
    M = M32.astype(np.float64)
    V = V32.astype(np.float64)
    G = obj.egrad(M32)
    HV = obj.ehvp(M32, V32)
    assert G.dtype == HV.dtype == np.float64 and isinstance(obj.cost(M32), float)
    np.testing.assert_array_equal(G, obj.egrad(M))
    np.testing.assert_array_equal(HV, obj.ehvp(M, V))
    np.testing.assert_allclose(G, ref.egrad(M), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(HV, ref.ehvp(M, V), rtol=1e-12, atol=1e-12)


@needs["jax"]
def test_a_jax_objective_turns_on_64_bit_mode():
    """Made with 64-bit mode off, a JAX objective turns it on: its answers are float64's
    (float32's would miss autograd's by about 1e-7)."""
    import jax

    jax.config.update("jax_enable_x64", False)
    try:
        obj = ldr.objective(lambda M: jax.numpy.sum(jax.numpy.sin(M) ** 2), shape=(20, 2),
                            backend="jax")
        assert jax.config.jax_enable_x64
        M = np.random.default_rng(13).standard_normal((20, 2))
        G = obj.egrad(M)
        assert G.dtype == np.float64
        np.testing.assert_allclose(G, np.sin(2 * M), rtol=1e-14, atol=1e-15)
    finally:
        jax.config.update("jax_enable_x64", True)


@needs["jax"]
def test_a_cost_on_one_factor_has_a_zero_gradient_on_the_other_jax():
    import jax.numpy as jnp

    obj = ldr.objective(lambda M: jnp.sum(M[0] ** 3), shape=((4, 2), (3, 2)),
                        manifold=("stiefel", "stiefel"), backend="jax")
    M = (np.ones((4, 2)), np.ones((3, 2)))
    ga, gb = obj.egrad(M)
    ha, hb = obj.ehvp(M, M)
    np.testing.assert_array_equal(gb, 0.0)
    np.testing.assert_array_equal(hb, 0.0)
    np.testing.assert_allclose(ga, 3.0)
    np.testing.assert_allclose(ha, 6.0)


# --- PyTorch: devices, compilation, what eager autodiff takes -------------------------------

@needs["torch"]
def test_a_torch_objective_on_a_named_device_gives_the_default_devices_answer(C):
    """``device=`` names where the cost's tensors live (the CPU here, as in CI; the GPU test
    below names CUDA): the points are sent there and the answers brought back as NumPy."""
    import torch

    obj = sparse_pca(C, "torch")
    named = ldr.objective(obj.derivatives().raw_cost, shape=(13, 2), backend="torch",
                          device=torch.device("cpu"))
    by_name = ldr.objective(obj.derivatives().raw_cost, shape=(13, 2), backend="torch",
                            device="cpu")
    rng = np.random.default_rng(14)
    M = rng.standard_normal((13, 2))
    V = rng.standard_normal((13, 2))
    for other in (named, by_name):
        np.testing.assert_array_equal(other.egrad(M), obj.egrad(M))
        np.testing.assert_array_equal(other.ehvp(M, V), obj.ehvp(M, V))
        assert other.cost(M) == obj.cost(M)
    with pytest.raises(ParameterError) as info:
        ldr.objective(obj.derivatives().raw_cost, shape=(13, 2), backend="torch",
                      device="no-such-device")
    assert info.value.param == "device"


@needs["torch"]
def test_compile_is_an_option_of_torch_objectives_only(C):
    with pytest.raises(ParameterError, match="only backend='torch' compiles") as info:
        ldr.objective(lambda M: 0.0, shape=(3, 1), compile=True)
    assert info.value.param == "compile"
    with pytest.raises(ParameterError, match="True or False") as info:
        ldr.objective(sparse_pca(C, "torch").derivatives().raw_cost, shape=(13, 2),
                      backend="torch", compile="yes")
    assert info.value.param == "compile"


@needs["torch"]
def test_a_compiled_torch_objective_gives_the_eager_answer(C):
    """``compile=True`` (an objective's option, or ``compile = True`` in a class body)
    compiles the oracles with ``torch.compile``: the same answers to rounding, also on a
    product point, and the same solve."""
    import torch

    class SparsePCA(ldr.Objective):
        backend = "torch"
        compile = True
        shape = (13, 2)
        Ct = torch.as_tensor(C)

        def cost(self, M):
            return -torch.trace(M.T @ self.Ct @ M) + LAM * torch.sum(torch.sqrt(M**2 + EPS))

    eager = sparse_pca(C, "torch")
    compiled = SparsePCA()
    assert compiled.derivatives().compile and not eager.derivatives().compile
    rng = np.random.default_rng(15)
    for _ in range(2):  # the second call runs the compiled program
        M = rng.standard_normal((13, 2))
        V = rng.standard_normal((13, 2))
        np.testing.assert_allclose(compiled.egrad(M), eager.egrad(M), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(compiled.ehvp(M, V), eager.ehvp(M, V), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(compiled.ehvp_at(M)(V), eager.ehvp(M, V), rtol=1e-12,
                                   atol=1e-13)
    res = ldr.solve(compiled, "trust-region", random_state=0)
    ref = ldr.solve(sparse_pca(C, "autograd"), "trust-region", random_state=0)
    assert abs(res.cost - ref.cost) <= 1e-10 * abs(ref.cost)


@needs["torch"]
def test_value_dependent_control_flow_is_differentiated_eagerly_and_compiled():
    """A branch on a value: each branch's own derivatives, eager and compiled (where
    ``torch.compile`` cannot capture the branch, it compiles the pieces around it)."""
    import torch

    def cost(M):
        return torch.sum(M**2) if M.sum() > 0 else torch.sum(M**3)

    P = np.abs(np.random.default_rng(16).standard_normal((6, 2))) + 0.1
    V = np.random.default_rng(17).standard_normal((6, 2))
    for compile in (False, True):
        obj = ldr.objective(cost, shape=(6, 2), backend="torch", compile=compile)
        np.testing.assert_allclose(obj.egrad(P), 2 * P, atol=1e-14)
        np.testing.assert_allclose(obj.egrad(-P), 3 * P**2, atol=1e-14)
        np.testing.assert_allclose(obj.ehvp(-P, V), -6 * P * V, atol=1e-13)
        np.testing.assert_allclose(obj.ehvp(P, V), 2 * V, atol=1e-13)


@needs["torch"]
def test_a_product_point_given_as_a_list_of_tensors():
    """Native tensors in a list (a product point) give tensors back; a cost on one factor
    has a zero gradient on the other."""
    import torch

    S = torch.as_tensor(np.random.default_rng(4).standard_normal((5, 4)))
    obj = ldr.objective(lambda M: -torch.trace(M[0].T @ S @ M[1]), shape=((5, 2), (4, 2)),
                        manifold=("stiefel", "stiefel"), backend="torch")
    rng = np.random.default_rng(5)
    Ma, Mb, Va, Vb = (torch.as_tensor(rng.standard_normal(s))
                      for s in ((5, 2), (4, 2), (5, 2), (4, 2)))
    ga, gb = obj.egrad([Ma, Mb])
    torch.testing.assert_close(ga, -S @ Mb)
    torch.testing.assert_close(gb, -S.T @ Ma)
    for ha, hb in (obj.ehvp([Ma, Mb], [Va, Vb]), obj.ehvp_at([Ma, Mb])([Va, Vb])):
        torch.testing.assert_close(ha, -S @ Vb)
        torch.testing.assert_close(hb, -S.T @ Va)
    one = ldr.objective(lambda M: torch.sum(M[0] ** 3), shape=((5, 2), (4, 2)),
                        manifold=("stiefel", "stiefel"), backend="torch")
    ga, gb = one.egrad((np.ones((5, 2)), np.ones((4, 2))))
    np.testing.assert_array_equal(gb, 0.0)
    np.testing.assert_allclose(ga, 3.0)


@needs["torch"]
def test_results_never_share_memory_with_the_inputs_or_the_costs_data():
    """A linear cost's gradient is its constant, a quadratic's product is V itself: the
    answers are fresh arrays, so a caller updating one in place changes neither its point
    nor the cost's data."""
    import torch

    A0 = np.random.default_rng(18).standard_normal((8, 3))
    A = torch.as_tensor(A0.copy())
    obj = ldr.objective(lambda M: torch.sum(A * M), shape=(8, 3), backend="torch")
    M = np.random.default_rng(19).standard_normal((8, 3))
    G = obj.egrad(M)
    G += 1.0
    np.testing.assert_array_equal(A.numpy(), A0)
    np.testing.assert_array_equal(obj.egrad(M), A0)
    half = ldr.objective(lambda M: 0.5 * torch.sum(M * M), shape=(8, 3), backend="torch")
    V = M.copy()
    for HV in (half.ehvp(M, V), half.ehvp_at(M)(V)):
        np.testing.assert_array_equal(HV, M)
        HV += 1.0
        np.testing.assert_array_equal(V, M)


@needs["torch"]
def test_a_cost_with_in_place_updates_and_float32_inside():
    """A cost that updates a copy of its data in place is right at every call, and one that
    computes in float32 inside gives float32's answer as float64."""
    import torch

    S = torch.as_tensor(np.random.default_rng(20).standard_normal((3, 3)))

    def cost(M):
        B = S.clone()
        B.add_(1.0)
        return torch.sum((M[:3] @ B) ** 2)
    obj = ldr.objective(cost, shape=(6, 3), backend="torch")
    M = np.random.default_rng(21).standard_normal((6, 3))
    first = obj.egrad(M)
    np.testing.assert_array_equal(first, obj.egrad(M))
    B = S.numpy() + 1.0
    want = np.zeros_like(M)
    want[:3] = 2 * (M[:3] @ B) @ B.T
    np.testing.assert_allclose(first, want, rtol=1e-12)
    C32 = torch.as_tensor(np.diag(np.arange(1.0, 7.0)), dtype=torch.float32)
    low = ldr.objective(lambda M: -torch.trace(M.T.float() @ C32 @ M.float()).double(),
                        shape=(6, 3), backend="torch")
    HV = low.ehvp(M, M)
    assert HV.dtype == np.float64
    np.testing.assert_allclose(HV, -2 * np.diag(np.arange(1.0, 7.0)) @ M, rtol=1e-6)


@needs["torch"]
def test_a_constant_that_requires_a_gradient_and_a_point_that_does():
    """A cost closing over a ``torch.nn.Parameter`` is differentiated in M alone; native
    points that require a gradient (someone differentiating through the oracle) keep
    autograd's graph: the gradient of ⟨egrad(M), W⟩ in M is H W."""
    import torch

    X = np.random.default_rng(22).standard_normal((40, 6))
    C = torch.nn.Parameter(torch.as_tensor(X.T @ X / 40))
    obj = ldr.objective(lambda M: -torch.trace(M.T @ C @ M), shape=(6, 2), backend="torch")
    M = np.random.default_rng(23).standard_normal((6, 2))
    V = np.random.default_rng(24).standard_normal((6, 2))
    Cn = C.detach().numpy()
    np.testing.assert_allclose(obj.egrad(M), -2 * Cn @ M, rtol=1e-12)
    np.testing.assert_allclose(obj.ehvp(M, V), -2 * Cn @ V, rtol=1e-12)
    Mt = torch.as_tensor(M).requires_grad_(True)
    G = obj.egrad(Mt)
    torch.testing.assert_close(G.detach(), torch.as_tensor(-2 * Cn @ M))
    (HW,) = torch.autograd.grad(torch.sum(G * torch.as_tensor(V)), Mt)
    torch.testing.assert_close(HW, torch.as_tensor(-2 * Cn @ V))
