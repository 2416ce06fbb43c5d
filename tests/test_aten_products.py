"""ldr.core.aten_products: one product per symmetric matrix a PyTorch function closes over.

The rebuilt gradient and Hessian-vector product equal ``torch.func``'s to rounding on costs
that use a symmetric matrix in every way the algebra covers (a trace, a sum of a product,
transposes, two matrices, a product manifold) and in ways it must leave alone (a
non-symmetric matrix, a non-linear use, a small matrix); the README's sparse-PCA product holds
one d×d-by-d×r product (from two); a function that reads a value into Python or updates a
tensor in place runs as written, with a warning — in the PyTorch backend where an objective
asks for it (``merge_symmetric=True``).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch.func")

import ldr  # noqa: E402
from ldr.core.aten_products import merged, rebuild  # noqa: E402
from ldr.core.symmetric_products import MIN_SIZE  # noqa: E402

D, R = 60, 4


def _spd(seed, d=D):
    X = np.random.default_rng(seed).standard_normal((3 * d, d))
    return torch.as_tensor(X.T @ X / (3 * d))


C, C2 = _spd(0), _spd(1)
A = torch.as_tensor(np.random.default_rng(2).standard_normal((D, D)))  # not symmetric
S = _spd(3, d=MIN_SIZE - 1)  # symmetric, below the size at which products are merged

COSTS = {
    "trace": lambda M: -torch.trace(M.T @ C @ M),
    "sum of product": lambda M: -torch.sum(M * (C @ M)),
    "transposed": lambda M: torch.trace(M.T @ C.T @ M) + torch.sum((M.T @ C) ** 2),
    "two matrices": lambda M: torch.trace(M.T @ C @ M) / torch.trace(M.T @ C2 @ M),
    "sparse PCA": lambda M: -torch.trace(M.T @ C @ M) + 0.1 * torch.sum(torch.sqrt(M**2 + 1e-6)),
    "non-linear use": lambda M: torch.sum(torch.sin(C @ M)) + torch.trace(M.T @ C @ C @ M),
    "not symmetric": lambda M: torch.trace(M.T @ A @ M),
    "small": lambda M: torch.trace(M[:MIN_SIZE - 1].T @ S @ M[:MIN_SIZE - 1]),
}


def _point(seed):
    rng = np.random.default_rng(seed)
    return (torch.as_tensor(np.linalg.qr(rng.standard_normal((D, R)))[0]),
            torch.as_tensor(rng.standard_normal((D, R))))


def _hvp(cost):
    grad = torch.func.grad(cost)
    return grad, lambda M, V: torch.func.vjp(grad, M)[1](V)[0]


def _products_by(module, R):
    """The products in the rebuilt graph with the buffer that holds ``R``."""
    names = {name for name, b in module.named_buffers() if b is R}
    count = 0
    for node in module.graph.nodes:
        if node.op == "call_function" and any(
                getattr(a, "op", None) == "get_attr" and a.target in names for a in node.args):
            count += "matmul" in str(node.target) or "mm" in str(node.target)
    return count


@pytest.mark.parametrize("name", list(COSTS))
def test_the_merged_gradient_and_product_equal_autodiffs(name):
    grad, hvp = _hvp(COSTS[name])
    M, V = _point(4)
    for fn, args in ((grad, (M,)), (hvp, (M, V))):
        with torch.no_grad():
            expected = fn(*args).numpy()
            got = merged(fn)(*args).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12,
                                   atol=1e-12 * np.max(np.abs(expected)))


def test_a_product_manifold_point():
    def cost(M):
        U, W = M
        return -torch.trace(U.T @ C @ U) - torch.trace(W.T @ C2 @ W) + torch.sum(U * W)

    grad, hvp = _hvp(cost)
    (U, V1), (W, V2) = _point(5), _point(6)
    for fn, args in ((grad, ((U, W),)), (hvp, ((U, W), (V1, V2)))):
        with torch.no_grad():
            expected = fn(*args)
            got = merged(fn)(*args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_the_sparse_pca_product_multiplies_by_c_once():
    """torch.func's product multiplies by C twice (C V and Cᵀ V, through the trace); the
    rebuilt one once, and by nothing else of C's size."""
    grad, hvp = _hvp(COSTS["sparse PCA"])
    M, V = _point(7)
    module = rebuild(hvp, M, V)
    assert _products_by(module, C) == 1
    gradient = rebuild(grad, M)
    assert _products_by(gradient, C) == 1


def test_values_read_into_python_run_as_written():
    def cost(M):
        return -torch.trace(M.T @ C @ M) * (2.0 if float(M.sum()) > 0 else 1.0)

    grad, _ = _hvp(cost)
    M, _ = _point(8)
    with pytest.raises(ValueError, match="reads a tensor's value"):
        rebuild(grad, M)
    with pytest.warns(UserWarning, match="cannot be rewritten"), torch.no_grad():
        got = merged(grad)(M)
    np.testing.assert_allclose(got.numpy(), grad(M).numpy(), rtol=1e-13)
    with torch.no_grad():  # and for the other sign, not the traced one
        np.testing.assert_allclose(merged(grad)(-M).numpy(), grad(-M).numpy(), rtol=1e-13)


def test_the_output_is_never_an_input():
    fn = merged(lambda M, V: V)
    M, V = _point(9)
    out = fn(M, V)
    assert torch.equal(out, V) and out.data_ptr() != V.data_ptr()


def test_the_objectives_oracles_match_the_plain_backend():
    """``ldr.objective(..., backend="torch", merge_symmetric=True)``: the same gradient,
    product and trust-region solve as without it; JAX and PyTorch take the option, the
    others refuse it."""
    Cn = C.numpy()

    def make(merge):
        return ldr.objective(lambda M: -torch.trace(M.T @ C @ M)
                             + 0.1 * torch.sum(torch.sqrt(M**2 + 1e-2)), shape=(D, R),
                             backend="torch", merge_symmetric=merge)
    plain, fast = make(False), make(True)
    M, V = (t.numpy() for t in _point(10))
    np.testing.assert_allclose(fast.egrad(M), plain.egrad(M), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast.ehvp(M, V), plain.ehvp(M, V), rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(fast.ehvp_at(M)(V), plain.ehvp(M, V), rtol=1e-12, atol=1e-11)
    a = ldr.solve(plain, "trust-region", random_state=0)
    b = ldr.solve(fast, "trust-region", random_state=0)
    assert a.converged and b.converged
    assert b.cost == pytest.approx(a.cost, rel=1e-10)
    assert -np.trace(b.M.T @ Cn @ b.M) < 0
    with pytest.raises(ValueError, match="merge_symmetric"):
        ldr.objective(lambda M: -np.trace(M.T @ Cn @ M), shape=(D, R), merge_symmetric=True)


def test_an_update_in_place_runs_as_written():
    def cost(M):
        Y = C @ M
        Y.mul_(2.0)
        return -torch.sum(M * Y)

    grad, _ = _hvp(cost)
    M, _ = _point(11)
    with pytest.raises(ValueError, match="in place"):
        rebuild(grad, M)
    with pytest.warns(UserWarning, match="cannot be rewritten"), torch.no_grad():
        np.testing.assert_allclose(merged(grad)(M).numpy(), grad(M).numpy(), rtol=1e-13)
