"""The manifold an objective declares, as a :class:`~ldr.manifolds.Manifold`.

An objective's ``manifold`` is one of :data:`KINDS` with ``shape`` (d, r), or (k, d, r) for
the product of k identical factors as one manifold of stacked points; a tuple of kinds with
one (d, r) per factor (their :class:`~ldr.manifolds.Product`, points are tuples); or a
:class:`~ldr.manifolds.Manifold` itself, whose shape ``shape`` repeats when given.
"""

from __future__ import annotations

from collections.abc import Sequence

from ldr.core.errors import ParameterError
from ldr.manifolds.euclidean import Euclidean
from ldr.manifolds.grassmann import Grassmann
from ldr.manifolds.manifold import Manifold
from ldr.manifolds.product import Product
from ldr.manifolds.stiefel import Stiefel

#: the manifold classes an objective names by a word
KINDS = {"stiefel": Stiefel, "grassmann": Grassmann, "euclidean": Euclidean}


def _nested_tuple(shape):
    if isinstance(shape, Sequence) and not isinstance(shape, str):
        return tuple(_nested_tuple(s) for s in shape)
    return shape


def _sizes(shape) -> bool:
    return (isinstance(shape, Sequence) and not isinstance(shape, str)
            and all(isinstance(s, int) or hasattr(s, "__index__") for s in shape))


def _one(kind: str, shape) -> Manifold:
    if kind not in KINDS:
        raise ParameterError("manifold", f"unknown kind {kind!r}; choose one of "
                                         f"{tuple(KINDS)}, or pass an ldr.manifolds.Manifold")
    if not _sizes(shape) or len(shape) not in (2, 3):
        raise ParameterError("shape", f"manifold {kind!r} needs shape (d, r), or (k, d, r) for "
                                      f"the product of k identical factors, got {shape!r}")
    if len(shape) == 2:
        return KINDS[kind](*shape)
    k, d, r = shape
    if k == 1:
        raise ParameterError("shape", f"(1, d, r) = {tuple(shape)} is one factor: declare "
                                      f"(d, r) = {(d, r)}")
    return KINDS[kind](d, r, k=k)


def from_declaration(manifold, shape=None) -> Manifold:
    """The :class:`~ldr.manifolds.Manifold` that ``manifold`` and ``shape`` declare (module
    docstring); a ParameterError naming ``manifold`` or ``shape`` for a declaration that
    names none.

    Examples
    --------
    >>> from_declaration("grassmann", (5, 2))
    Grassmann(5, 2)
    >>> from_declaration(("stiefel", "euclidean"), ((5, 2), (5, 1)))
    Product(Stiefel(5, 2), Euclidean(5, 1))
    >>> from_declaration("stiefel", (24, 3, 1))
    Stiefel(3, 1, k=24)
    """
    if isinstance(manifold, Manifold):
        if shape is not None and _nested_tuple(shape) != manifold.shape:
            raise ParameterError("shape", f"{shape!r} is not the shape {manifold.shape} of the "
                                          f"declared manifold {manifold!r}")
        return manifold
    if isinstance(manifold, str):
        return _one(manifold, shape)
    if (isinstance(manifold, Sequence) and manifold
            and all(isinstance(m, str) for m in manifold)):
        if (not isinstance(shape, Sequence) or len(shape) != len(manifold)
                or not all(_sizes(s) and len(s) == 2 for s in shape)):
            raise ParameterError("shape", f"product manifold {tuple(manifold)} needs one (d, r) "
                                          f"per factor, got {shape!r}")
        return Product(*(_one(m, s) for m, s in zip(manifold, shape)))
    raise ParameterError("manifold", f"expected one of {tuple(KINDS)}, a tuple of them or an "
                                     f"ldr.manifolds.Manifold, got {manifold!r}")
