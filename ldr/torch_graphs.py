"""PyTorch derivatives as one small graph each: one product per symmetric matrix a cost closes
over, and no operation that autodiff's bookkeeping adds for nothing.

Eager ``torch.autograd`` runs a Hessian-vector product as the whole double-backward graph
(the cost's forward pass and its gradient again, ~80 operations for the README's sparse PCA),
with two n×n-by-n×r products ``CV + CᵀV`` where one would do.  :func:`simplified` traces a
function of tensors once per shape with ``make_fx`` (on fake tensors, so value-dependent
Python control flow is refused, not baked in) and rebuilds its aten graph:

* operations whose inputs are all known at trace time (a trace's −I cotangent, ``ones_like``
  of a value of known shape) are evaluated then, so that such a factor is known;
* a product with a closed-over, exactly symmetric, square constant R (≥ ``MIN_SIZE`` = 16
  rows) is deferred as in :mod:`ldr.symmetric_products` (``dense + Σ_R R Y_R``): sums merge
  the Y's, negation, scalars and transposes carry through, a small matrix on the far side
  moves into Y, a known diagonal one is a scaling; it is formed as ``(Yᵀ R)ᵀ`` (on the CPU
  PyTorch's ``Yᵀ R`` costs about half its ``R Y`` for a thin Y: 1.16× NumPy's GEMM against
  1.98×), with the dense part and the scales added in the product's epilogue (``addmm``);
  on the CPU by the faster of PyTorch's and SciPy's BLAS for its shape, timed once
  (``ldr._torch_blas``: on ldr's AMD benchmark machine OpenBLAS's product costs
  0.7–0.85× MKL's);
* scalar factors are gathered and applied once (``a + t·b`` by ``add``'s ``alpha``), a known
  scalar broadcast (``expand``) stays a scalar for the elementwise operations that broadcast
  it, ``x¹``, ``x·1``, ``detach``, double transposes and the like vanish, ``1/√x`` and
  ``a/√x`` take ``rsqrt`` (PyTorch's sqrt and reciprocal cost twice its rsqrt) and ``x²``
  a product, and equal operations on equal inputs are made once; what no output needs is not
  kept;
* an elementwise product of values of one shape is formed with the factors that depend on
  fewer inputs first (a point's before a direction's: one point-only node for :func:`split`),
  and two products with common factors are added as ``c·(x + y)``
  (``ldr._torch_products``).

Every other operation is emitted as traced, so the result equals autodiff's to rounding.  A
function that updates a tensor in place is refused; operations that draw random numbers are
neither evaluated at trace time nor merged; an output that is an input, a constant or a view
of one is copied.  Used by :class:`ldr.backends.TorchDerivatives` for its gradient and
Hessian-vector products (:func:`split` for the products of an inner solve).
"""

from __future__ import annotations

from ldr._torch_rebuild import MIN_SIZE, _Builder

__all__ = ["MIN_SIZE", "simplified", "split"]


def simplified(fn, *args):
    """``fn`` (a function of tensors returning a tensor or a tuple of them) traced at
    ``args``' shapes and rebuilt (module docstring): a ``torch.fx.GraphModule`` with the
    same result, whose ``ldr_eps`` is the machine epsilon of the least precise floating type
    it computes in.  Raises where ``fn`` cannot be traced on fake tensors (control flow on
    values, ``.item()``, NumPy conversions) or updates a tensor in place; callers then run
    ``fn`` eagerly."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    traced = make_fx(fn, tracing_mode="fake", _allow_non_fake_inputs=True)(*args)
    mutating = sorted({str(n.target) for n in traced.graph.nodes if n.op == "call_function"
                       and getattr(getattr(n.target, "_schema", None), "is_mutable", False)})
    if mutating:  # in-place updates of a value folded at trace time would accumulate
        raise ValueError(f"in-place operations ({', '.join(mutating)}): run eagerly")
    graph = _Builder(traced).build()
    vals = [n.meta.get("val") for n in traced.graph.nodes]  # the least precision it computes in
    graph.ldr_eps = max([torch.finfo(v.dtype).eps for v in vals if isinstance(v, torch.Tensor)
                         and v.dtype.is_floating_point] + [0.0])
    return graph


def split(module, fixed: int):
    """``(front, apply)`` for a graph ``module(*a, *b)`` whose first ``fixed`` inputs ``a``
    are held fixed: ``front(*a)`` computes once the values that do not depend on ``b`` and
    that the rest needs, ``apply(*b, *front(*a))`` the rest — a Hessian-vector product's
    point-only work (the cost's forward pass, the curvature factors) once per point for all
    the products of an inner solve."""
    import torch

    graph = module.graph
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    output = next(n for n in graph.nodes if n.op == "output")
    varying = set(inputs[fixed:])
    for n in graph.nodes:
        if n.op == "call_function" and any(a in varying for a in n.all_input_nodes):
            varying.add(n)
    frontier = [n for n in graph.nodes if n.op in ("placeholder", "call_function")
                and n not in varying and any(u in varying or u is output for u in n.users)]

    front, env = torch.fx.Graph(), {}
    for n in graph.nodes:
        if n not in varying and n.op != "output":
            env[n] = front.node_copy(n, lambda a: env[a])
    front.output(tuple(env[n] for n in frontier))
    front.eliminate_dead_code()

    rest, env = torch.fx.Graph(), {}
    for n in inputs[fixed:] + frontier:
        env[n] = rest.placeholder(f"in_{n.name}")
    for n in graph.nodes:
        if n.op == "get_attr" or (n in varying and n.op == "call_function"):
            env[n] = rest.node_copy(n, lambda a: env[a])
    rest.output(torch.fx.node.map_arg(output.args[0], lambda a: env[a]))
    rest.eliminate_dead_code()
    return torch.fx.GraphModule(module, front), torch.fx.GraphModule(module, rest)
