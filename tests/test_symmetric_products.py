"""ldr.core.symmetric_products: one product per symmetric matrix a JAX function closes over.

The rewritten function equals the original to rounding on costs that use a symmetric matrix
in every way the algebra covers (a trace, a sum of a product, transposes, two matrices, a
product manifold) and in ways it must leave alone (a non-symmetric matrix, a non-linear use,
a small matrix), and XLA's flop count of the README's sparse-PCA Hessian-vector product and
gradient falls to one d×d-by-d×r product (from two) — in the JAX backend where an objective
asks for it (``merge_symmetric=True``), and only there.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)

import ldr  # noqa: E402
from ldr.core.symmetric_products import MIN_SIZE, merged  # noqa: E402

D, R = 60, 4


def _spd(seed, d=D):
    X = np.random.default_rng(seed).standard_normal((3 * d, d))
    return jnp.asarray(X.T @ X / (3 * d))


C, C2 = _spd(0), _spd(1)
A = jnp.asarray(np.random.default_rng(2).standard_normal((D, D)))  # not symmetric
S = _spd(3, d=MIN_SIZE - 1)  # symmetric, below the size at which products are merged

COSTS = {
    "trace": lambda M: -jnp.trace(M.T @ C @ M),
    "sum of product": lambda M: -jnp.sum(M * (C @ M)),
    "transposed": lambda M: jnp.trace(M.T @ C.T @ M) + jnp.sum((M.T @ C) ** 2),
    "two matrices": lambda M: jnp.trace(M.T @ C @ M) / jnp.trace(M.T @ C2 @ M),
    "sparse PCA": lambda M: -jnp.trace(M.T @ C @ M) + 0.1 * jnp.sum(jnp.sqrt(M**2 + 1e-6)),
    "non-linear use": lambda M: jnp.sum(jnp.sin(C @ M)) + jnp.trace(M.T @ C @ C @ M),
    "not symmetric": lambda M: jnp.trace(M.T @ A @ M),
    "small": lambda M: jnp.trace(M[:MIN_SIZE - 1].T @ S @ M[:MIN_SIZE - 1]),
}


def _point(seed):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(np.linalg.qr(rng.standard_normal((D, R)))[0]),
            jnp.asarray(rng.standard_normal((D, R))))


def _hvp(cost):
    grad = jax.grad(cost)
    return grad, lambda M, V: jax.jvp(grad, (M,), (V,))[1]


@pytest.mark.parametrize("name", list(COSTS))
def test_the_merged_gradient_and_product_equal_autodiffs(name):
    grad, hvp = _hvp(COSTS[name])
    M, V = _point(4)
    for fn, args in ((grad, (M,)), (hvp, (M, V))):
        expected = np.asarray(jax.jit(fn)(*args))
        got = np.asarray(jax.jit(merged(fn))(*args))
        np.testing.assert_allclose(got, expected, rtol=1e-12,
                                   atol=1e-12 * np.max(np.abs(expected)))


def test_a_product_manifold_pytree():
    def cost(M):
        U, W = M
        return -jnp.trace(U.T @ C @ U) - jnp.trace(W.T @ C2 @ W) + jnp.sum(U * W)

    grad, hvp = _hvp(cost)
    (U, V1), (W, V2) = _point(5), _point(6)
    for fn, args in ((grad, ((U, W),)), (hvp, ((U, W), (V1, V2)))):
        expected = jax.jit(fn)(*args)
        got = jax.jit(merged(fn))(*args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12)


def _flops(fn, *args) -> float:
    analysis = jax.jit(fn).lower(*args).compile().cost_analysis()
    return (analysis[0] if isinstance(analysis, list) else analysis)["flops"]


def test_the_readme_sparse_pca_needs_one_gemm_per_product():
    # the README's cost at d × r = 200 × 5: autodiff's gradient and Hessian-vector product
    # each multiply by C and by Cᵀ (4 d² r flops); merged, by C once (2 d² r, plus the
    # elementwise terms and the small products that carry the trace's r × r factors)
    d, r = 200, 5
    X = np.random.default_rng(0).standard_normal((400, d))
    Cd = jnp.asarray(X.T @ X / 400)
    grad, hvp = _hvp(lambda M: -jnp.trace(M.T @ Cd @ M)
                     + 0.1 * jnp.sum(jnp.sqrt(M**2 + 1e-6)))
    rng = np.random.default_rng(1)
    M, V = jnp.asarray(rng.standard_normal((d, r))), jnp.asarray(rng.standard_normal((d, r)))
    gemm = 2 * d * d * r
    for fn, args in ((grad, (M,)), (hvp, (M, V))):
        assert _flops(fn, *args) >= 1.9 * gemm  # two products before (what this is about)
        assert _flops(merged(fn), *args) <= 1.1 * gemm


def test_the_jax_backend_uses_it_on_request_and_passes_ldrs_check():
    d, r = 120, 3
    X = np.random.default_rng(0).standard_normal((360, d))
    Cd = jnp.asarray(X.T @ X / 360)

    def cost(M):
        return -jnp.trace(M.T @ Cd @ M) + 0.1 * jnp.sum(jnp.sqrt(M**2 + 1e-6))

    sparse_pca = ldr.objective(cost, shape=(d, r), backend="jax", merge_symmetric=True)
    plain = ldr.objective(cost, shape=(d, r), backend="jax")

    M = np.linalg.qr(np.random.default_rng(1).standard_normal((d, r)))[0]
    V = np.random.default_rng(2).standard_normal((d, r))
    exact = -2 * np.asarray(Cd) @ V + 0.1 * 1e-6 * V / (M**2 + 1e-6) ** 1.5
    np.testing.assert_allclose(sparse_pca.ehvp(M, V), exact, rtol=1e-10, atol=1e-10)
    report = ldr.check(sparse_pca)
    assert report.ok, str(report)
    np.testing.assert_allclose(sparse_pca.ehvp(M, V), plain.ehvp(M, V), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(sparse_pca.egrad(M), plain.egrad(M), rtol=1e-12, atol=1e-12)
    Mj = jnp.asarray(M)
    Vj = jnp.asarray(V)
    compiled = sparse_pca.derivatives().compiled  # what the solvers' NumPy calls run
    assert _flops(compiled["ehvp"], Mj, Vj) <= 1.2 * (2 * d * d * r)
    assert _flops(compiled["egrad"], Mj) <= 1.2 * (2 * d * d * r)
    default = plain.derivatives().compiled  # without the option: autodiff's two products
    assert _flops(default["ehvp"], Mj, Vj) >= 1.9 * (2 * d * d * r)


def test_merge_symmetric_is_an_option_of_jax_and_torch_objectives_only():
    from ldr.core.errors import ParameterError

    with pytest.raises(ParameterError, match="only backend=.jax. and backend=.torch. merge") \
            as info:
        ldr.objective(lambda M: 0.0, shape=(3, 1), merge_symmetric=True)
    assert info.value.param == "merge_symmetric"
    with pytest.raises(ParameterError, match="True or False") as info:
        ldr.objective(lambda M: jnp.sum(M), shape=(3, 1), backend="jax", merge_symmetric=1)
    assert info.value.param == "merge_symmetric"
