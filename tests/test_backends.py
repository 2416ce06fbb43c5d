"""Autodiff backends for custom objectives (``ldr.backends``): the README's custom objective
written for autograd, JAX, PyTorch and by hand (``backend="numpy"``) passes ``ldr.check`` and
solves to the autograd answer within 1e-10, as a function and as a subclass, on a product
manifold, through ``LinearDR``, ``ldr.compare`` and pymanopt; a backend that is unknown or
not installed is a ParameterError about ``backend``.  JAX and PyTorch tests skip without them.
"""

import importlib.util
import warnings

import autograd.numpy as anp
import numpy as np
import pytest

import ldr
from ldr.errors import ParameterError

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
    ref = ldr.solve(sparse_pca(C, "autograd"), "trust-region", seed=0, certify=True)
    res = ldr.solve(obj, "trust-region", seed=0, certify=True)
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
    ref = ldr.solve(sparse_pca(C, "autograd"), seed=0)
    np.testing.assert_allclose(ldr.solve(obj, seed=0).M, ref.M, atol=1e-10)


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
    ref = ldr.solve(ref_obj, "trust-region", seed=0)
    res = ldr.solve(obj, "trust-region", seed=0)
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
        return ldr.solve(sparse_pca(C, name), solver, seed=0)

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
    res = ldr.solve(grad_only, seed=0, certify=True)
    assert res.solver == "lbfgs" and res.converged
    assert res.certificate.method.startswith("not computed")
    ref = ldr.solve(sparse_pca(C, "autograd"), "lbfgs", seed=0)
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
    res = ldr.solve(obj, "trust-region", seed=0)
    ref = ldr.solve(sparse_pca(C, "autograd"), "trust-region", seed=0)
    np.testing.assert_allclose(res.M, ref.M, atol=1e-9)


@pytest.mark.parametrize("backend", [pytest.param("jax", marks=needs["jax"]),
                                     pytest.param("torch", marks=needs["torch"])])
def test_an_objective_pickles_with_cloudpickle_and_is_rebuilt(C, backend):
    cloudpickle = pytest.importorskip("cloudpickle")
    obj = sparse_pca(C, backend)
    M = np.linalg.qr(np.random.default_rng(1).standard_normal((13, 2)))[0]
    G = obj.egrad(M)
    copy = cloudpickle.loads(cloudpickle.dumps(obj))
    assert copy.backend == backend
    np.testing.assert_array_equal(copy.egrad(M), G)
    assert copy.cost(M) == obj.cost(M)
