"""Scaled values and elementwise products in the rebuilding of a PyTorch graph
(:mod:`ldr.torch_graphs`, builder in ``ldr._torch_rebuild``).  A product of nodes of one
shape is kept as its factors until something needs it, then formed with the factors that
depend on fewer of the graph's inputs first, so that a Hessian-vector product's point-only
factors make one node that ``ldr.torch_graphs.split`` computes once per point; a sum of two
products with common factors multiplies them once, ``s·c·x + t·c·y = c·(s·x + t·y)``.

On the README's sparse PCA, autodiff's second derivative of ``λ Σ √(M² + ε)`` applied to V,
``V ⊘ √s − V ⊙ M ⊙ M ⊘ s^{3/2}`` (s = M² + ε), becomes ``V ⊙ (r ⊙ (1 − M² ⊙ r²))`` with
r = 1/√s: eight elementwise operations instead of ten, one of them per direction V instead
of six.
"""

from __future__ import annotations


class _Scaled:
    """``scale · node`` with the scalar not yet applied."""

    __slots__ = ("node", "scale")

    def __init__(self, node, scale):
        self.node, self.scale = node, scale


class _Product:
    """The elementwise product of ``factors`` (nodes of one shape), not yet formed: formed
    with the factors that depend on fewer of the inputs first (``_Builder.product``), so
    that a Hessian-vector product's point-only factors make one point-only node; a sum of
    products with common factors multiplies them once (``_Builder.add``)."""

    __slots__ = ("factors", "shape")

    def __init__(self, factors, shape):
        self.factors, self.shape = tuple(factors), tuple(shape)


class ProductRules:
    """The product rules of ``ldr._torch_rebuild._Builder`` (a mixin: it uses the builder's
    ``shape``, ``emit``, ``scale``, ``add``, ``node``, ``shapes``, ``rank`` and ``graph``)."""

    def factored(self, a, b):
        """``s·c·x + t·c·y`` as ``c·(s·x + t·y)`` for products of one shape with common
        factors ``c`` (``s + t·y`` by ``add``'s scalar where x is 1), else None."""
        (pa, sa), (pb, sb) = self.unscaled(a), self.unscaled(b)
        fa, fb = self.factors(pa), self.factors(pb)
        if fa is None or fb is None or sa == 0 or sb == 0 or self.shape(pa) is None \
                or self.shape(pa) != self.shape(pb):
            return None
        rest_b = list(fb)
        common, rest_a = [], []
        for f in fa:
            if f in rest_b:
                rest_b.remove(f)
                common.append(f)
            else:
                rest_a.append(f)
        if not common or not (rest_a or rest_b):
            return None
        if not rest_a:
            inner = self.scale(self.emit(self.aten.add.Tensor, (self.product(rest_b), sa / sb)),
                               sb)
        elif not rest_b:
            inner = self.scale(self.emit(self.aten.add.Tensor, (self.product(rest_a), sb / sa)),
                               sa)
        else:
            inner = self.add(self.scale(self.multiple(rest_a), sa),
                             self.scale(self.multiple(rest_b), sb))
        node, s = self.unscaled(inner)
        rest = self.factors(node) or (self.node(node),)
        return self.scale(_Product(common + list(rest), self.shape(pa)), s)

    def unscaled(self, v):
        return (v.node, v.scale) if isinstance(v, _Scaled) else (v, 1.0)

    def factors(self, v):
        """The factors of a product or a node (a one-factor product), else None."""
        if isinstance(v, _Product):
            return v.factors
        if isinstance(v, self.torch.fx.Node) and v in self.shapes:
            return (v,)
        return None

    def multiple(self, factors):
        return factors[0] if len(factors) == 1 else _Product(factors, self.shape(factors[0]))

    def product(self, factors):
        """The factors multiplied, those that depend on earlier inputs first (a point's
        before a direction's), in the order they were made (equal products made once)."""
        order = {n: i for i, n in enumerate(self.graph.nodes)}
        ranked = sorted(factors, key=lambda n: (self.rank.get(n, -1), order[n]))
        out = ranked[0]
        for f in ranked[1:]:
            out = self.emit(self.aten.mul.Tensor, (out, f), shape=self.shapes[f])
        return out
