"""One product with each symmetric matrix a JAX cost closes over, where autodiff makes two.

Automatic differentiation of ``tr(MᵀCM)`` does not know that ``C`` is symmetric: its gradient
``CM + CᵀM`` and its Hessian-vector product ``CV + CᵀV`` each take two n×n-by-n×r products
where one would do (``2CM``, ``2CV``), and through a trace the two arrive in different
shapes (``(VᵀC)`` transposed, and ``(A Vᵀ) Cᵀ`` for a small A), so no compiler merges them.
:func:`merged` re-evaluates a traced function's jaxpr with every product by a closed-over,
exactly symmetric, square constant R (at least :data:`MIN_SIZE` rows) *deferred*: a value is
held as ``dense + Σ_R R Y_R`` (or its transpose), and the algebra that keeps it so is exact
for symmetric R:

* ``X R`` and ``R X`` (any contraction of R's two dims) start a term ``R Y`` (Y = X or Xᵀ);
* sums and differences add the Y's of the same R (``R Y₁ + R Y₂ = R (Y₁ + Y₂)``), negation
  and scaling by a scalar scale them, a transpose flips the term's orientation;
* a small matrix on the far side moves into Y: ``A (R Y)ᵀ = (R (Y Aᵀ))ᵀ``,
  ``(R Y) B = R (Y B)``; a known diagonal one (a trace's cotangent, −I) as a scaling.

Operations whose inputs are all known at trace time (the literals and ``iota`` of a trace's
cotangent) are evaluated then, so that such a factor is known.

Any other operation on a deferred value first forms it (one product ``R Y`` per matrix R),
so the result is the function's, to rounding; the compiled graph then holds one product per
R where the autodiff graph held two or more.  Used by the JAX backend
(:class:`ldr.core.backends.JaxDerivatives`) for its gradient and Hessian-vector products when the
objective asks for it (``ldr.objective(..., backend="jax", merge_symmetric=True)``, or
``merge_symmetric = True`` in the class body); an optional rewrite, since XLA does not merge
the two products itself.
"""

from __future__ import annotations

import numpy as np

#: the smallest symmetric constant whose products are merged (smaller ones cost less than
#: the bookkeeping saves)
MIN_SIZE = 16
#: the largest output evaluated at trace time (a small factor; larger ones, e.g. an n×n
#: identity, would be baked into the compiled program as constants)
_KNOWN_MAX = 4096


class Deferred:
    """``dense + Σ_R R @ Y_R`` (``transposed``: its transpose); ``terms`` maps id(R) to
    (R, Y_R)."""

    __slots__ = ("dense", "terms", "transposed")

    def __init__(self, dense, terms: dict, transposed):
        self.dense = dense
        self.terms = terms
        self.transposed = transposed


def formed(value, product=None):
    """``value`` as an array: a :class:`Deferred` value's one product per symmetric matrix
    (``product(R, Y)`` = R Y; by default ``R @ Y``) plus its dense part; any other value as
    it is."""
    if not isinstance(value, Deferred):
        return value
    out = value.dense
    for R, Y in value.terms.values():
        P = R @ Y if product is None else product(R, Y)  # the one product per matrix
        P = P.T if value.transposed else P
        out = P if out is None else out + P
    return out


def mapped(value: Deferred, f) -> Deferred:
    """``value`` with ``f`` applied to its dense part and to each Y (a linear ``f``)."""
    return Deferred(None if value.dense is None else f(value.dense),
                    {k: (R, f(Y)) for k, (R, Y) in value.terms.items()}, value.transposed)


def summed(a, b):
    """``a + b`` (either or both :class:`Deferred`) kept deferred where both hold terms of
    one orientation, else None."""
    da = a if isinstance(a, Deferred) else Deferred(a, {}, None)
    db = b if isinstance(b, Deferred) else Deferred(b, {}, None)
    sides = {x.transposed for x in (da, db) if x.terms}
    if len(sides) != 1:
        return None
    terms = dict(da.terms)
    for k, (R, Y) in db.terms.items():
        terms[k] = (R, terms[k][1] + Y) if k in terms else (R, Y)
    dense = (da.dense if db.dense is None else db.dense if da.dense is None
             else da.dense + db.dense)
    return Deferred(dense, terms, sides.pop())


def _dot(eqn, a, b, symmetric: dict):
    """``dot_general`` of two matrices, deferred where one is a symmetric constant or a small
    matrix meets a deferred term on its far side; None where neither applies."""
    (ca, cb), batch = eqn.params["dimension_numbers"]
    if any(batch) or len(ca) != 1:
        return None
    if id(b) in symmetric and np.ndim(X := formed(a)) == 2:  # X R, over X's dim ca
        return Deferred(None, {id(b): (b, X if ca[0] == 0 else X.T)}, True)
    if id(a) in symmetric and np.ndim(X := formed(b)) == 2:  # R X, over X's dim cb
        return Deferred(None, {id(a): (a, X if cb[0] == 0 else X.T)}, False)
    if isinstance(b, Deferred) and b.transposed and b.dense is None and cb[0] == 0 \
            and not isinstance(a, Deferred) and np.ndim(a) == 2:
        A = a if ca[0] == 1 else a.T  # A (R Y)ᵀ = (R (Y Aᵀ))ᵀ
        return mapped(b, lambda Y: _times(Y, A.T, _diagonal(a)))
    if isinstance(a, Deferred) and a.transposed is False and a.dense is None and ca[0] == 1 \
            and not isinstance(b, Deferred) and np.ndim(b) == 2:
        B = b if cb[0] == 0 else b.T  # (R Y) B = R (Y B)
        return mapped(a, lambda Y: _times(Y, B, _diagonal(b)))
    if not isinstance(a, Deferred) and not isinstance(b, Deferred) \
            and np.ndim(a) == np.ndim(b) == 2:  # a known diagonal factor: a scaling
        if (d := _diagonal(a)) is not None:  # D X over X's dim cb, or D Xᵀ
            return d[:, None] * (b if cb[0] == 0 else b.T)
        if (d := _diagonal(b)) is not None:  # X D over X's dim ca, or Xᵀ D
            return (a if ca[0] == 1 else a.T) * d[None, :]
    return None


def _diagonal(a):
    """The diagonal of ``a`` if it is a known (not traced) square diagonal matrix — a trace's
    cotangent is −I, whose products would compile to small GEMMs for nothing — else None."""
    if _traced(a) or np.ndim(a) != 2 or a.shape[0] != a.shape[1]:
        return None
    b = np.asarray(a)
    return np.diagonal(b).copy() if not np.any(b - np.diag(np.diagonal(b))) else None


def _times(Y, B, d):
    """Y B; a column scaling where B is a known diagonal matrix, of diagonal ``d``."""
    return Y @ B if d is None else Y * d[None, :]


def _rule(eqn, ins: list, symmetric: dict):
    name = eqn.primitive.name
    if not any(isinstance(v, Deferred) or _traced(v) for v in ins) \
            and not eqn.primitive.multiple_results and "jaxpr" not in eqn.params \
            and not eqn.effects \
            and np.prod(eqn.outvars[0].aval.shape) <= _KNOWN_MAX:
        import jax  # inputs known at trace time (the literals of a trace's −I): known output

        with jax.ensure_compile_time_eval():
            return eqn.primitive.bind(*ins, **eqn.params)
    if name in ("pjit", "jit", "closed_call", "core_call") and "jaxpr" in eqn.params:
        inner = eqn.params["jaxpr"]
        return _evaluate(inner.jaxpr, inner.consts, ins, symmetric)
    if any(isinstance(v, Deferred) for v in ins) or name == "dot_general":
        out = None
        if name == "dot_general" and len(ins) == 2:
            out = _dot(eqn, *ins, symmetric)
        elif name in ("add", "add_any"):
            out = summed(*ins)
        elif name == "sub":
            b = ins[1]
            out = summed(ins[0], mapped(b, lambda Y: -Y) if isinstance(b, Deferred) else -b)
        elif name == "neg":
            out = mapped(ins[0], lambda Y: -Y)
        elif name == "mul" and sum(isinstance(v, Deferred) for v in ins) == 1:
            value, scale = ins if isinstance(ins[0], Deferred) else ins[::-1]
            if np.ndim(scale) == 0:
                out = mapped(value, lambda Y: Y * scale)
        elif name == "transpose" and tuple(eqn.params["permutation"]) == (1, 0):
            v = ins[0]
            out = Deferred(None if v.dense is None else v.dense.T, v.terms,
                            None if v.transposed is None else not v.transposed)
        if out is not None:
            return out
    return eqn.primitive.bind(*[formed(v) for v in ins], **eqn.params)


def _traced(value) -> bool:
    import jax

    return isinstance(value, jax.core.Tracer)


def _evaluate(jaxpr, consts, args, symmetric: dict) -> list:
    for c in consts:
        if id(c) not in symmetric and _is_symmetric(c):
            symmetric[id(c)] = c
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(var):
        return var.val if hasattr(var, "val") else env[var]  # a Literal, or a variable

    for eqn in jaxpr.eqns:
        out = _rule(eqn, [read(v) for v in eqn.invars], symmetric)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def _is_symmetric(c) -> bool:
    shape = getattr(c, "shape", ())
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < MIN_SIZE:
        return False
    try:
        a = np.asarray(c)
    except Exception:  # noqa: BLE001 - a tracer: not a constant
        return False
    return bool(np.array_equal(a, a.T))


def merged(fn):
    """``fn`` (a function of JAX arrays or pytrees of them) with one product per symmetric
    matrix it closes over (module docstring); traced afresh for each call's shapes, so use it
    inside ``jax.jit``."""
    import jax

    def merged_fn(*args):
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        leaves = jax.tree_util.tree_leaves(args)
        out = _evaluate(closed.jaxpr, closed.consts, leaves, {})
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape),
                                            [formed(v) for v in out])
    return merged_fn
