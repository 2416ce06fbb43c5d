"""Manifolds: the sets the objectives' points live on, and their geometry.

One base class, :class:`Manifold` (what the solvers, the driver and the certificates ask of a
manifold), and one class per manifold: :class:`Stiefel`, :class:`Grassmann`,
:class:`Euclidean` (each with ``k`` stacked identical factors) and :class:`Product`.  An
objective declares its manifold by a word (``"stiefel"``, ``"grassmann"``, ``"euclidean"``),
a tuple of them, or a Manifold; :func:`from_declaration` builds the class.  The functions on
orthonormal bases, :func:`orthonormalize` and :func:`sin_largest_angle`, and the
overflow-safe :func:`scaled_norm` are public here.
"""

from ldr.core.linalg import scaled_norm
from ldr.manifolds.declaration import KINDS, from_declaration
from ldr.manifolds.euclidean import Euclidean
from ldr.manifolds.grassmann import Grassmann
from ldr.manifolds.manifold import Manifold
from ldr.manifolds.orthonormal import OrthonormalColumns, orthonormalize, sin_largest_angle
from ldr.manifolds.product import Product
from ldr.manifolds.stiefel import Stiefel

__all__ = ["KINDS", "Euclidean", "Grassmann", "Manifold", "OrthonormalColumns", "Product",
           "Stiefel", "from_declaration", "orthonormalize", "scaled_norm", "sin_largest_angle"]
