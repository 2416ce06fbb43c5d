"""One product with each symmetric matrix a PyTorch cost closes over, where autodiff makes
two: :mod:`ldr.core.symmetric_products`' rewrite for PyTorch's aten graphs.

Automatic differentiation of ``tr(MᵀCM)`` does not know that ``C`` is symmetric: its
Hessian-vector product takes the two n×n-by-n×r products ``CV + CᵀV`` where one would do, and
on the CPU PyTorch's ``C V`` for a thin V costs about twice its ``Vᵀ C``.  :func:`merged`
traces a function of tensors once per shape with ``make_fx`` (the aten operations it runs)
and rebuilds the graph with every product by a closed-over, exactly symmetric, square tensor
R (at least :data:`~ldr.core.symmetric_products.MIN_SIZE` rows) deferred by the rules of
:mod:`ldr.core.symmetric_products` (sums merge the Y's of one R; negation, scalars and
transposes carry through; a matrix on the far side moves into Y; a known diagonal one is a
scaling), and forms each R once, as ``(Yᵀ R)ᵀ``.  Operations whose inputs are all known at
trace time (a trace's −I cotangent, ``ones_like`` of a value of known shape) are evaluated
then.  Every other operation is emitted as traced, so the result is the function's, to
rounding.

The trace runs on the real tensors: a function whose operations depend on the values
(``.item()``, Python control flow on a tensor) or that updates a tensor in place is refused
(:func:`rebuild` raises ValueError) and :func:`merged` then runs it as written, with a
warning.  Used by :class:`ldr.core.backends.TorchDerivatives` for its derived gradient and
Hessian-vector product when the objective asks for it (``ldr.objective(..., backend="torch",
merge_symmetric=True)``); optional, as a rewrite of PyTorch's programs that neither eager
autodiff nor ``torch.compile`` makes.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ldr.core.symmetric_products import MIN_SIZE, Deferred, formed, mapped, summed

__all__ = ["merged", "rebuild"]

#: the largest output evaluated at trace time (a small factor; larger ones stay in the graph)
KNOWN_MAX = 4096


def merged(fn, compile: bool = False):
    """``fn`` (a function of tensors, or of tuples of them, returning a tensor or a tuple of
    them) with one product per symmetric matrix it closes over (module docstring): rebuilt
    once per input shapes, dtypes and devices, then run as a ``torch.fx.GraphModule`` —
    compiled by ``torch.compile`` with ``compile``.  Where :func:`rebuild` refuses ``fn``,
    ``fn`` itself (compiled with ``compile``) runs, after a warning."""
    import torch

    programs: dict = {}

    def merged_fn(*args):
        key = signature(args)
        if key not in programs:
            try:
                program = rebuild(fn, *args)
                flat = True
            except ValueError as exc:
                warnings.warn(f"merge_symmetric: the products cannot be rewritten ({exc}); "
                              "the function runs as written", UserWarning, stacklevel=6)
                program = fn
                flat = False
            programs[key] = (torch.compile(program, dynamic=False) if compile else program,
                             flat)
        program, flat = programs[key]
        return program(*leaves(args)) if flat else program(*args)
    return merged_fn


def signature(value):
    """The shapes, dtypes and devices of a tensor or of nested tuples and lists of them."""
    if isinstance(value, (tuple, list)):
        return tuple(signature(v) for v in value)
    return (tuple(value.shape), value.dtype, value.device)


def leaves(value) -> list:
    """The tensors of nested tuples and lists, in order (the rebuilt graph's inputs)."""
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in leaves(v)]
    return [value]


def rebuild(fn, *args):
    """``fn`` traced at ``args`` and rebuilt (module docstring), as a ``torch.fx.GraphModule``
    of the same inputs and output.  Raises ValueError where ``fn`` reads a tensor's value
    into Python or updates a tensor in place."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    try:
        with torch.no_grad():
            traced = make_fx(lambda *a: fn(*a))(*args)  # any callable (a bound method too)
    except RuntimeError as exc:  # make_fx refuses data-dependent operations itself
        if "_local_scalar_dense" in str(exc) or "data-dependent" in str(exc):
            raise ValueError("it reads a tensor's value into Python (.item(), control flow "
                             "on a tensor), which a trace would fix at one point") from None
        raise ValueError(f"make_fx cannot trace it: {exc}") from None
    aten = torch.ops.aten
    for node in traced.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target == aten._local_scalar_dense.default:
            raise ValueError("it reads a tensor's value into Python (.item(), control flow "
                             "on a tensor), which a trace would fix at one point")
        if getattr(getattr(node.target, "_schema", None), "is_mutable", False):
            raise ValueError(f"it updates a tensor in place ({node.target})")
    traced.graph.eliminate_dead_code()
    return Rebuilder(traced).build()


class Rebuilder:
    """Rebuilds a ``make_fx`` graph node by node (:func:`rebuild`).  A value is a
    ``torch.fx.Proxy`` of the new graph, a known tensor, a Python number or list, or a
    :class:`~ldr.core.symmetric_products.Deferred` whose R's are known tensors and whose
    dense parts and Y's are proxies."""

    def __init__(self, source):
        import torch
        import torch.fx

        self.torch = torch
        self.aten = torch.ops.aten
        self.source = source
        self.graph = torch.fx.Graph()
        self.tracer = torch.fx.proxy.GraphAppendingTracer(self.graph)
        self.root = torch.nn.Module()
        self.consts: dict = {}
        self.symmetric: dict = {}

    # -- values ------------------------------------------------------------------------------
    def known(self, v) -> bool:
        return isinstance(v, self.torch.Tensor)

    def proxy(self, node):
        return self.torch.fx.Proxy(node, self.tracer)

    def const(self, t):
        """A known tensor as a proxy of a buffer of the new module (one per tensor)."""
        if id(t) not in self.consts:
            name = f"c{len(self.consts)}"
            self.root.register_buffer(name, t)
            self.consts[id(t)] = (t, self.proxy(self.graph.get_attr(name)))
        return self.consts[id(t)][1]

    def operand(self, v):
        """``v`` as a proxy (a Deferred value formed, a known tensor a buffer) or as it is."""
        if isinstance(v, Deferred):
            return formed(self.ready(v), self.product)
        if self.known(v):
            return self.const(v)
        return v

    def ready(self, v: Deferred) -> Deferred:
        """``v`` with a known dense part as a buffer (the algebra adds proxies only)."""
        dense = self.const(v.dense) if self.known(v.dense) else v.dense
        return Deferred(dense, v.terms, v.transposed)

    def product(self, R, Y):
        """R Y as ``(Yᵀ R)ᵀ``: PyTorch's product in this orientation costs about half."""
        return (Y.T @ self.const(R)).T

    def emit(self, target, args, kwargs):
        import torch.fx

        def node_of(a):
            a = self.operand(a)
            return a.node if isinstance(a, torch.fx.Proxy) else a
        args = torch.fx.node.map_aggregate(args, node_of)
        kwargs = torch.fx.node.map_aggregate(kwargs, node_of)
        return self.proxy(self.graph.call_function(target, args, kwargs))

    def is_symmetric(self, t) -> bool:
        if id(t) in self.symmetric:
            return True
        if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < MIN_SIZE \
                or not bool(self.torch.equal(t, t.T)):
            return False
        self.symmetric[id(t)] = t
        return True

    # -- the rules ---------------------------------------------------------------------------
    def rule(self, node, args, kwargs):
        aten = self.aten
        target = node.target
        val = node.meta.get("val")
        inputs = []
        self.torch.fx.node.map_aggregate((args, kwargs), lambda a: inputs.append(a) or a)
        symbolic = any(isinstance(a, (self.torch.fx.Proxy, Deferred)) for a in inputs)
        if target in (aten.detach.default, aten.alias.default, aten.lift_fresh_copy.default):
            return args[0]
        if target in (aten.ones_like.default, aten.zeros_like.default) and val is not None \
                and math.prod(val.shape) <= KNOWN_MAX:  # depends on the shape alone
            fill = self.torch.ones if target == aten.ones_like.default else self.torch.zeros
            return fill(tuple(val.shape), dtype=val.dtype, device=val.device)
        if not symbolic and pure(target) and val is not None \
                and math.prod(val.shape) <= KNOWN_MAX:
            return target(*args, **kwargs)  # known at trace time
        a = args[0] if args else None
        if is_transpose(node) and (isinstance(a, Deferred) or self.known(a)):
            if isinstance(a, Deferred):
                return Deferred(None if a.dense is None else self.operand(a.dense).T,
                                a.terms, None if a.transposed is None else not a.transposed)
            return a if self.is_symmetric(a) else a.T
        if target == aten.mm.default and not kwargs:
            out = self.mm(*args)
            if out is not None:
                return out
        if any(isinstance(v, Deferred) for v in inputs):
            out = self.linear(target, args, kwargs)
            if out is not None:
                return out
        return self.emit(target, args, kwargs)

    def linear(self, target, args, kwargs):
        """A sum, difference, negation or scaling of a Deferred value, kept deferred; None
        for anything else."""
        aten = self.aten
        a = args[0]
        b = args[1] if len(args) > 1 else None
        if target == aten.neg.default:
            return mapped(self.ready(a), lambda Y: -Y)
        if target in (aten.add.Tensor, aten.sub.Tensor) and kwargs.get("alpha", 1) == 1 \
                and not any(isinstance(v, numbers.Number) for v in (a, b)):
            if target == aten.sub.Tensor:
                b = mapped(self.ready(b), lambda Y: -Y) if isinstance(b, Deferred) \
                    else -self.operand(b)
            a = self.ready(a) if isinstance(a, Deferred) else self.operand(a)
            b = self.ready(b) if isinstance(b, Deferred) else self.operand(b)
            return summed(a, b)
        if target in (aten.mul.Tensor, aten.mul.Scalar, aten.div.Tensor, aten.div.Scalar) \
                and not kwargs:
            value, scale = (a, b) if isinstance(a, Deferred) else (b, a)
            if isinstance(scale, Deferred) or (target in (aten.div.Tensor, aten.div.Scalar)
                                               and value is not a):
                return None
            if self.known(scale) and scale.ndim == 0:
                scale = float(scale)
            if not isinstance(scale, numbers.Number):
                return None
            factor = 1.0 / scale if target in (aten.div.Tensor, aten.div.Scalar) else scale
            return mapped(self.ready(value), lambda Y: Y * factor)
        return None

    def mm(self, a, b):
        """``a @ b`` deferred where one is a symmetric known tensor or a matrix meets a
        deferred term on its far side; a known diagonal factor as a scaling; else None."""
        if self.known(b) and self.is_symmetric(b) and not isinstance(a, Deferred):
            return Deferred(None, {id(b): (b, self.operand(a).T)}, True)  # X R = (R Xᵀ)ᵀ
        if self.known(a) and self.is_symmetric(a) and not isinstance(b, Deferred):
            return Deferred(None, {id(a): (a, self.operand(b))}, False)  # R X
        if isinstance(b, Deferred) and b.transposed and b.dense is None \
                and not isinstance(a, Deferred):  # A (R Y)ᵀ = (R (Y Aᵀ))ᵀ
            return mapped(b, lambda Y: self.times(Y, a, transposed=True))
        if isinstance(a, Deferred) and a.transposed is False and a.dense is None \
                and not isinstance(b, Deferred):  # (R Y) B = R (Y B)
            return mapped(a, lambda Y: self.times(Y, b, transposed=False))
        if self.known(a) and not isinstance(b, Deferred) and (d := diagonal(a)) is not None:
            return self.operand(b) * self.const(d.reshape(-1, 1))  # D X: rows scaled
        if self.known(b) and not isinstance(a, Deferred) and (d := diagonal(b)) is not None:
            return self.operand(a) * self.const(d.reshape(1, -1))  # X D: columns scaled
        return None

    def times(self, Y, B, transposed: bool):
        """Y Bᵀ (``transposed``) or Y B; a column scaling where B is a known diagonal."""
        d = diagonal(B) if self.known(B) else None
        if d is not None:
            return Y * self.const(d.reshape(1, -1))
        B = self.operand(B)
        return Y @ (B.T if transposed else B)

    # -- the whole graph ---------------------------------------------------------------------
    def build(self):
        torch = self.torch
        env: dict = {}
        output = None
        for node in self.source.graph.nodes:
            if node.op == "placeholder":
                env[node] = self.proxy(self.graph.placeholder(node.name))
            elif node.op == "get_attr":
                env[node] = getattr(self.source, node.target)
            elif node.op == "call_function":
                args = torch.fx.node.map_arg(node.args, lambda n: env[n])
                kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
                env[node] = self.rule(node, args, kwargs)
            elif node.op == "output":
                output = torch.fx.node.map_arg(node.args[0], lambda n: env[n])
        result = torch.fx.node.map_aggregate(output, self.owned)
        self.graph.output(torch.fx.node.map_aggregate(
            result, lambda a: a.node if isinstance(a, torch.fx.Proxy) else a))
        self.graph.eliminate_dead_code()
        return torch.fx.GraphModule(self.root, self.graph)

    def owned(self, v):
        """An output in memory of its own: an input, a constant or a view of one is copied,
        so that the caller's tensors are never the result, as with eager autodiff."""
        v = self.operand(v)
        if not isinstance(v, self.torch.fx.Proxy):
            return v
        return self.proxy(self.graph.call_function(self.aten.clone.default, (v.node,)))


def is_transpose(node) -> bool:
    """Whether the aten ``node`` transposes a matrix."""
    import torch

    aten = torch.ops.aten
    if node.target == aten.t.default:
        return True
    if node.target == aten.permute.default:
        return list(node.args[1]) == [1, 0]
    if node.target == aten.transpose.int:
        val = node.meta.get("val")
        return val is not None and val.ndim == 2
    return False


def diagonal(a):
    """The diagonal of a known square tensor that is diagonal and small, else None."""
    import torch

    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.numel() > KNOWN_MAX:
        return None
    d = a.diagonal()
    return d.clone() if not bool((a - torch.diag(d)).any()) else None


def pure(target) -> bool:
    """Whether the aten ``target`` neither mutates its inputs nor draws random numbers (only
    such operations are evaluated at trace time)."""
    import torch

    schema = getattr(target, "_schema", None)
    if schema is None or schema.is_mutable:
        return False
    return torch.Tag.nondeterministic_seeded not in getattr(target, "tags", ())
