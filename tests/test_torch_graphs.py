"""ldr.torch_graphs: PyTorch's gradient and Hessian-vector product rebuilt as one small graph.

Each rebuilt derivative equals eager autodiff's to rounding (on costs with symmetric and
non-symmetric constants, small ones, non-linear terms and a product manifold), holds one
product per symmetric constant where autodiff's graph holds two, and keeps the point-only
work out of the per-product graph of ``split``.  A cost that cannot be traced runs eagerly.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ldr  # noqa: E402
import ldr._torch_blas as torch_blas  # noqa: E402
import ldr._torch_rebuild as rebuild  # noqa: E402
from ldr.torch_graphs import MIN_SIZE, simplified, split  # noqa: E402

D, R = 40, 3
MM = (torch.ops.aten.mm.default, torch.mm, torch.ops.aten.addmm.default, torch.addmm,
      torch_blas.addmm)


@pytest.fixture(params=["torch", "scipy"])
def blas(request, monkeypatch):
    """Each merged product formed by PyTorch's BLAS, then by SciPy's (``ldr._torch_blas``:
    the faster of the two is chosen by timing, so a test must force each)."""
    monkeypatch.setattr(rebuild, "faster_on_cpu", lambda k, R: request.param == "scipy")
    return request.param


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, D))
    C = X.T @ X / 60
    A = rng.standard_normal((D, D))               # not symmetric
    S = rng.standard_normal((R, R))
    small = X[:, :6].T @ X[:, :6] / 60            # symmetric, below MIN_SIZE
    M = np.linalg.qr(rng.standard_normal((D, R)))[0]
    V = rng.standard_normal((D, R))
    return {k: torch.as_tensor(v) for k, v in dict(C=C, A=A, S=S, small=small, M=M,
                                                   V=V).items()}


def _costs(t):
    C, A, S, small = t["C"], t["A"], t["S"], t["small"]
    return {
        "sparse_pca": lambda M: -torch.trace(M.T @ C @ M)
        + 0.1 * torch.sum(torch.sqrt(M**2 + 1e-6)),
        "right_side": lambda M: torch.sum((M.T @ C) * M.T) + torch.sum(torch.exp(0.1 * M)),
        "non_symmetric": lambda M: torch.trace(M.T @ A @ M) + torch.sum(M**4),
        "small_factor": lambda M: -torch.trace(S @ M.T @ C @ M @ S.T),
        "log_det": lambda M: -torch.logdet(M.T @ C @ M + torch.eye(R, dtype=M.dtype)),
        "small_constant": lambda M: torch.sum((M[:6].T @ small @ M[:6]) ** 2),
        "ratio": lambda M: -torch.trace(M.T @ C @ M) / torch.trace(M.T @ M),
        "products": lambda M: torch.sum(M * M * M) + torch.sum(torch.exp(M) * M)
        - torch.sum(torch.tanh(M) * M * torch.exp(M)),  # common factors, equal ones
    }


def _eager(cost):
    def grad(M):
        with torch.enable_grad():
            X = M.detach().requires_grad_(True)
            return torch.autograd.grad(cost(X), X)[0]

    def hvp(M, V):
        with torch.enable_grad():
            X = M.detach().requires_grad_(True)
            G = torch.autograd.grad(cost(X), X, create_graph=True)[0]
            return torch.autograd.grad(G, X, V)[0]
    return grad, hvp


def _products_with(graph, constant) -> int:
    """How many ``mm`` nodes of ``graph`` multiply by ``constant``."""
    names = {n for n, b in graph.named_buffers() if b is constant}
    count = 0
    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target in MM:
            count += any(isinstance(a, torch.fx.Node) and a.op == "get_attr"
                         and a.target in names for a in node.args)   # (SciPy's: D may be None)
    return count


NAMES = ("sparse_pca", "right_side", "non_symmetric", "small_factor", "log_det",
         "small_constant", "ratio", "products")


@pytest.mark.parametrize("name", NAMES)
def test_rebuilt_derivatives_equal_autodiffs(data, name, blas):
    cost = _costs(data)[name]
    grad, hvp = _eager(cost)
    M, V = data["M"], data["V"]
    g, h = simplified(grad, M), simplified(hvp, M, M.clone())
    for W in (V, torch.ones_like(V), M):
        want = hvp(M, W)
        assert torch.linalg.vector_norm(h(M, W) - want) <= 1e-12 * torch.linalg.vector_norm(
            want)
    want = grad(M)
    assert torch.linalg.vector_norm(g(M) - want) <= 1e-12 * torch.linalg.vector_norm(want)
    M2 = M + 0.1 * V                                 # traced once, right at other points
    assert torch.allclose(h(M2, V), hvp(M2, V), rtol=1e-11, atol=1e-12)
    assert torch.allclose(g(M2), grad(M2), rtol=1e-11, atol=1e-12)


def test_one_product_per_symmetric_constant(data, blas):
    """autodiff's graph multiplies by C twice for the gradient of tr(MᵀCM) and twice more for
    the product; the rebuilt ones once each, and a non-symmetric A keeps its products."""
    from torch.fx.experimental.proxy_tensor import make_fx

    costs = _costs(data)
    grad, hvp = _eager(costs["sparse_pca"])
    M, V = data["M"], data["V"]
    raw = make_fx(hvp, tracing_mode="fake", _allow_non_fake_inputs=True)(M, V)
    raw_mm = sum(n.op == "call_function" and n.target == torch.ops.aten.mm.default
                 for n in raw.graph.nodes)
    assert raw_mm >= 4
    h, g = simplified(hvp, M, V), simplified(grad, M)
    assert _products_with(h, data["C"]) == 1 and _products_with(g, data["C"]) == 1
    ops = sum(n.op == "call_function" for n in h.graph.nodes)
    assert ops <= 20 < sum(n.op == "call_function" for n in raw.graph.nodes)
    targets = {n.target for n in h.graph.nodes if n.op == "call_function"}
    assert not targets & {torch.sqrt, torch.ops.aten.sqrt.default}   # 1/√s by rsqrt
    assert targets & {torch.rsqrt, torch.ops.aten.rsqrt.default}
    assert data["C"].shape[0] >= MIN_SIZE
    _, hvp_a = _eager(costs["non_symmetric"])
    assert _products_with(simplified(hvp_a, M, V), data["A"]) == 2   # A V and Aᵀ V


def test_split_keeps_the_point_only_work_out_of_each_product(data, blas):
    _, hvp = _eager(_costs(data)["sparse_pca"])
    M, V = data["M"], data["V"]
    whole = simplified(hvp, M, V)
    front, apply = split(whole, 1)
    fixed = front(M)
    for W in (V, 2 * V + M):
        assert torch.allclose(apply(W, *fixed), whole(M, W), rtol=1e-14, atol=1e-14)
    per_product = {n.target for n in apply.graph.nodes if n.op == "call_function"}
    assert not per_product & {torch.ops.aten.sqrt.default, torch.sqrt}  # a function of M
    assert per_product & set(MM)
    # λ ε V ⊘ s^{3/2} as autodiff writes it, V ⊘ √s − V ⊙ M ⊙ M ⊘ s^{3/2}, is V times one
    # point-only factor: one elementwise product per direction (autodiff's order: five)
    products = [n for n in apply.graph.nodes if n.op == "call_function"
                and n.target in (torch.mul, torch.ops.aten.mul.Tensor)]
    assert len(products) == 1


def test_a_product_manifold_cost(data):
    """Stiefel × Stiefel: −tr(MaᵀSMb) with a tuple point, through the backend."""
    rng = np.random.default_rng(1)
    Xa, Xb = rng.standard_normal((80, 20)), rng.standard_normal((80, 18))
    S = torch.as_tensor(Xa.T @ Xb / 80)
    obj = ldr.objective(lambda M: -torch.trace(M[0].T @ S @ M[1]), shape=((20, 2), (18, 2)),
                        manifold=("stiefel", "stiefel"), backend="torch")
    Ma, Mb = np.linalg.qr(rng.standard_normal((20, 2)))[0], \
        np.linalg.qr(rng.standard_normal((18, 2)))[0]
    Va, Vb = rng.standard_normal((20, 2)), rng.standard_normal((18, 2))
    Sn = S.numpy()
    ga, gb = obj.egrad((Ma, Mb))
    np.testing.assert_allclose(ga, -Sn @ Mb, atol=1e-13)
    np.testing.assert_allclose(gb, -Sn.T @ Ma, atol=1e-13)
    for hv in (obj.ehvp((Ma, Mb), (Va, Vb)), obj.ehvp_at((Ma, Mb))((Va, Vb))):
        np.testing.assert_allclose(hv[0], -Sn @ Vb, atol=1e-13)
        np.testing.assert_allclose(hv[1], -Sn.T @ Va, atol=1e-13)


def test_value_dependent_control_flow_runs_eagerly(data):
    """A branch on a value cannot be traced on fake tensors: the backend runs the cost
    eagerly, and both branches give their own derivatives."""
    obj = ldr.objective(lambda M: torch.sum(M**2) if M.sum() > 0 else torch.sum(M**3),
                        shape=(D, R), backend="torch")
    M = data["M"].numpy()
    P = np.abs(M) + 0.1
    V = data["V"].numpy()
    np.testing.assert_allclose(obj.egrad(P), 2 * P, atol=1e-14)
    np.testing.assert_allclose(obj.egrad(-P), 3 * P**2, atol=1e-14)
    np.testing.assert_allclose(obj.ehvp(-P, V), -6 * P * V, atol=1e-13)
    derivs = obj.derivatives()
    assert derivs._graphs and all(g is None for g in derivs._graphs.values())


def test_the_readme_sparse_pca_checks_with_the_rebuilt_graphs(data):
    C = data["C"]
    obj = ldr.objective(lambda M: -torch.trace(M.T @ C @ M)
                        + 0.1 * torch.sum(torch.sqrt(M**2 + 1e-6)), shape=(D, R),
                        backend="torch")
    report = ldr.check(obj)
    assert report.ok
    assert any(g is not None for g in obj.derivatives()._graphs.values())


def test_a_point_that_requires_a_gradient_is_differentiated_eagerly(data):
    """Native tensors that require a gradient (someone differentiating through the
    oracle) skip the traced graph, whose operations would not record one."""
    C = data["C"]
    obj = ldr.objective(lambda M: -torch.trace(M.T @ C @ M), shape=(D, R), backend="torch")
    M = data["M"].clone().requires_grad_(True)
    torch.testing.assert_close(obj.egrad(M).detach(), (-2 * C @ M).detach())
    assert not obj.derivatives()._graphs       # nothing traced for it


def test_random_draws_are_not_frozen_at_trace_time(data):
    """An operation that draws random numbers from known inputs runs at every call (it is
    neither evaluated when traced nor merged with an equal draw)."""
    M = data["M"]

    def f(M):
        noise = torch.randn(3, dtype=M.dtype) + torch.randn(3, dtype=M.dtype)
        return (M.sum() * noise,)

    g = simplified(f, M)
    assert not torch.equal(g(M)[0], g(M)[0])
    draws = [n for n in g.graph.nodes if n.op == "call_function"
             and "randn" in str(n.target)]
    assert len(draws) == 2


@pytest.mark.parametrize("branchy", [False, True])
def test_a_product_point_given_as_a_list_of_tensors(branchy):
    """Native tensors in a list (a product point) work traced and eagerly (a cost with a
    branch on values cannot be traced)."""
    S = torch.as_tensor(np.random.default_rng(4).standard_normal((5, 4)))

    def cost(M):
        value = -torch.trace(M[0].T @ S @ M[1])
        return value if not branchy or M[0].sum() > -1e9 else value * 2
    obj = ldr.objective(cost, shape=((5, 2), (4, 2)), manifold=("stiefel", "stiefel"),
                        backend="torch")
    rng = np.random.default_rng(5)
    Ma, Mb, Va, Vb = (torch.as_tensor(rng.standard_normal(s))
                      for s in ((5, 2), (4, 2), (5, 2), (4, 2)))
    ga, gb = obj.egrad([Ma, Mb])
    torch.testing.assert_close(ga, -S @ Mb)
    torch.testing.assert_close(gb, -S.T @ Ma)
    ha, hb = obj.ehvp([Ma, Mb], [Va, Vb])
    torch.testing.assert_close(ha, -S @ Vb)
    torch.testing.assert_close(hb, -S.T @ Va)
    traced = [g is not None for g in obj.derivatives()._graphs.values()]
    assert traced and all(t != branchy for t in traced)


def test_results_never_share_memory_with_the_inputs_or_the_costs_data(data):
    """A linear cost's gradient is its constant, a quadratic's product is V itself (times a
    scalar): the rebuilt graphs return copies, so a caller updating the result in place
    changes neither its point nor the cost's data."""
    A = data["A"].clone()[:, :R]
    obj = ldr.objective(lambda M: torch.sum(A * M), shape=(D, R), backend="torch")
    G = obj.egrad(data["M"].numpy())
    G += 1.0
    torch.testing.assert_close(A, data["A"][:, :R])
    np.testing.assert_array_equal(obj.egrad(data["M"].numpy()), A.numpy())
    half = ldr.objective(lambda M: 0.5 * torch.sum(M * M), shape=(D, R), backend="torch")
    V = data["V"].numpy().copy()
    for HV in (half.ehvp(data["M"].numpy(), V), half.ehvp_at(data["M"].numpy())(V)):
        np.testing.assert_array_equal(HV, V)
        HV += 1.0
        np.testing.assert_array_equal(V, data["V"].numpy())


def test_a_cost_with_in_place_updates_runs_eagerly(data):
    """``x.add_(…)`` on a copy of a small constant would be folded at trace time and then
    updated at every call; such a cost is differentiated eagerly, and right every time."""
    S = data["S"]

    def cost(M):
        B = S.clone()
        B.add_(1.0)
        return torch.sum((M[:R] @ B) ** 2)
    obj = ldr.objective(cost, shape=(D, R), backend="torch")
    M = data["M"].numpy()
    first, second = obj.egrad(M), obj.egrad(M)
    np.testing.assert_array_equal(first, second)
    B = S.numpy() + 1.0
    want = np.zeros_like(M)
    want[:R] = 2 * (M[:R] @ B) @ B.T
    np.testing.assert_allclose(first, want, rtol=1e-12)
    assert all(g is None for g in obj.derivatives()._graphs.values())


def test_a_cost_computing_in_float32_is_rebuilt_without_a_false_alarm(data, blas):
    """A float64 point through a float32 constant: the merged product rounds differently from
    autodiff's two at float32's precision, which the check at the traced point allows for
    (the graph's ``ldr_eps``) instead of warning and running eagerly."""
    import warnings

    C32 = data["C"].float()
    obj = ldr.objective(lambda M: -torch.trace(M.T.float() @ C32 @ M.float()).double(),
                        shape=(D, R), backend="torch")
    M, V = data["M"].numpy(), data["V"].numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HV = obj.ehvp(M, V)
    np.testing.assert_allclose(HV, -2 * C32.double().numpy() @ V, rtol=1e-5, atol=1e-5)
    graphs = list(obj.derivatives()._graphs.values())
    assert graphs and graphs[0] is not None and graphs[0].ldr_eps == np.finfo(np.float32).eps


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_scipys_product_is_addmms(dtype):
    """β·D + α·A R by SciPy's BLAS equals ``torch.addmm`` for every layout a graph hands it
    (A a transposed view or contiguous, R symmetric in C or Fortran order, D or none)."""
    g = torch.Generator().manual_seed(0)
    B = torch.randn(30, 30, generator=g, dtype=dtype)
    Rs = B + B.T
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-13,
                                                                          atol=1e-13)
    for A in (torch.randn(30, 4, generator=g, dtype=dtype).t(),
              torch.randn(4, 30, generator=g, dtype=dtype)):
        for Rm in (Rs, Rs.t().contiguous().t()):
            Dm = torch.randn(30, 4, generator=g, dtype=dtype).t()
            got = torch_blas.addmm(Dm, A, Rm, beta=0.5, alpha=-2.0)
            assert got.dtype == dtype
            torch.testing.assert_close(got, torch.addmm(Dm, A, Rm, beta=0.5, alpha=-2.0),
                                       **tol)
            torch.testing.assert_close(torch_blas.addmm(None, A, Rm, alpha=3.0),
                                       3.0 * (A @ Rm), **tol)


def test_the_blas_is_chosen_only_where_scipy_can_take_the_product():
    """PyTorch's BLAS is kept for a strided R and types SciPy's ``gemm`` does not take; for
    a contiguous float64 R the timed choice is made once and remembered."""
    R64 = torch.eye(40, dtype=torch.float64) * 2.0
    assert not torch_blas.faster_on_cpu(3, R64[::2, ::2])
    assert not torch_blas.faster_on_cpu(3, R64.half())
    torch.manual_seed(5)
    want = torch.rand(3)
    torch.manual_seed(5)
    torch_blas._CHOSEN.clear()
    choice = torch_blas.faster_on_cpu(3, R64)
    assert isinstance(choice, bool)
    torch.testing.assert_close(torch.rand(3), want)  # the timing drew from its own generator
    key = (3, 40, torch.float64, torch.get_num_threads())
    assert torch_blas._CHOSEN[key] is choice


def test_a_constant_that_requires_a_gradient_is_merged_too(data):
    """A cost closing over a symmetric ``torch.nn.Parameter`` (it requires a gradient) is
    rebuilt as any other — one product by it, on either BLAS — not left to run eagerly."""
    C = torch.nn.Parameter(data["C"].clone())
    torch_blas._CHOSEN.clear()  # the choice of BLAS is timed with this constant
    obj = ldr.objective(lambda M: -torch.trace(M.T @ C @ M), shape=(D, R), backend="torch")
    M, V = data["M"].numpy(), data["V"].numpy()
    np.testing.assert_allclose(obj.ehvp(M, V), -2 * data["C"].numpy() @ V, rtol=1e-12)
    np.testing.assert_allclose(obj.egrad(M), -2 * data["C"].numpy() @ M, rtol=1e-12)
    graphs = list(obj.derivatives()._graphs.values())
    assert len(graphs) == 2 and all(g is not None for g in graphs)
    assert all(_products_with(g, dict(g.named_buffers())["_c0"]) == 1 for g in graphs)


def test_a_constant_that_requires_a_gradient_is_merged_on_each_blas(data, blas):
    """The same on each BLAS forced (the test above takes whichever the timing chose)."""
    C = torch.nn.Parameter(data["C"].clone())
    obj = ldr.objective(lambda M: -torch.trace(M.T @ C @ M), shape=(D, R), backend="torch")
    M, V = data["M"].numpy(), data["V"].numpy()
    np.testing.assert_allclose(obj.ehvp(M, V), -2 * data["C"].numpy() @ V, rtol=1e-12)
    graphs = list(obj.derivatives()._graphs.values())
    assert all(g is not None for g in graphs)
    assert all(_products_with(g, dict(g.named_buffers())["_c0"]) == 1 for g in graphs)
