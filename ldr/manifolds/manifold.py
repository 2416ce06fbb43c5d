"""The base class of every manifold: what the solvers, the driver and the certificates ask.

A manifold here is a set of d×r matrices (or of stacks or tuples of them) embedded in the
Euclidean space of its arrays with the metric ⟨U, V⟩ = tr(UᵀV), summed over a stack's or a
product's arrays: a Riemannian submanifold, or (Grassmann) a quotient whose horizontal
spaces are subspaces of that space (Absil, Mahony & Sepulchre 2008, §3.6.1, §3.6.2).  A
tangent vector is an array of the point's shape, so the vector-space operations are the
ambient ones; the geometry is what each class writes:

* ``project(M, Z)``: the orthogonal projection onto the tangent (horizontal) space at M;
  the Riemannian gradient is the projected Euclidean gradient (Absil et al., §3.6.1);
* ``rhess(M, G, H, V)``: the Riemannian Hessian along V from the Euclidean gradient G and
  Hessian-vector product H (Absil, Mahony & Trumpf 2013, "An extrinsic look at the
  Riemannian Hessian"), with ``hess_shift(M, G)`` its part that depends on the point only;
* ``retract(M, V)``: a retraction R_M(V) (Absil et al., Def. 4.1.1);
* ``transport(M, N, V)``: vector transport from T_M to T_N by projection onto T_N
  (Absil et al., §8.1.3), the identity on a flat manifold (``transport_is_identity``);
* ``change(M, N)``: how far apart two iterates are, the measure of the driver's step rule;
* ``tangent_basis(M)``: an orthonormal basis of the tangent space, for Hessian certificates;
* ``exp(M, V)``, ``log(M, N)``, ``dist(M, N)``: the Riemannian exponential, its inverse and
  the geodesic distance, where a class has them in closed form (Euclidean, Grassmann; the
  exponential only on Stiefel, whose embedded metric has no closed-form logarithm); the
  solvers step by ``retract``, which agrees with ``exp`` to first order.

The names are pymanopt's where it has the operation.  Points and tangent vectors of another
array namespace than NumPy (PyTorch, CuPy, ...) are computed on in their namespace and on
their device; the checks (``validate_point``, ``feasibility``, ``tangent_basis``) work on the
host.

References
----------
P.-A. Absil, R. Mahony, R. Sepulchre (2008), *Optimization Algorithms on Matrix Manifolds*,
Princeton University Press.  P.-A. Absil, R. Mahony, J. Trumpf (2013), "An extrinsic look at
the Riemannian Hessian", GSI 2013, LNCS 8085, 361–368.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.linalg import scaled_norm
from ldr.data import arrays
from ldr.data.validation import check_point

RETRACTIONS = ("polar", "qr")


class Manifold:
    """Base class: the operations of the module docstring on points of shape ``shape``.

    A subclass for d×r matrices writes ``project``, ``rhess`` (and ``hess_shift``),
    ``retract``, ``random_point``, ``change``, ``matrix_tangent_basis`` and, off a flat
    space, ``feasibility`` and ``nearest``; where it has them, ``exp``, ``log`` and
    ``dist`` (here they raise NotImplementedError); the rest is shared.  ``k > 1`` identical factors
    are one manifold of stacked points (k, d, r): every operation is one vectorized call
    over the stack, with the product manifold's geometry (the metric, projection, Hessian
    and retraction act factor by factor; ``change`` and ``feasibility`` report the largest
    over the factors).

    Attributes
    ----------
    shape : tuple
        A point's shape: (d, r), (k, d, r) for k > 1 stacked factors, or one shape per
        factor on a :class:`~ldr.manifolds.Product`.
    dim : int
        The manifold's dimension (of its tangent spaces).
    typical_dist : float
        A typical distance on the manifold (pymanopt's ``typical_dist``): the trust region's
        largest radius and the solvers' first step length are set from it.
    transport_is_identity : bool
        True where ``transport(M, N, V)`` is ``V`` itself (a flat space): a solver may then
        keep what it computed from stored tangent vectors.
    orthonormal_matrix : bool
        True where a point is one d×r matrix with orthonormal columns (Stiefel or Grassmann,
        k = 1): what an eigenvector step (ISM, SCF) produces.
    """

    shape: tuple
    dim: int
    typical_dist: float
    transport_is_identity: bool = False
    orthonormal_matrix: bool = False

    # --- identity ---------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        return type(other) is type(self) and repr(other) == repr(self)

    def __hash__(self) -> int:
        return hash((type(self), repr(self)))

    @property
    def factors(self) -> tuple[Manifold, ...]:
        """The manifolds a point has one array of: ``(self,)``, or a product's factors."""
        return (self,)

    def split(self, X) -> tuple:
        """The arrays of a point or tangent vector, one per factor (:attr:`factors`)."""
        return (X,)

    @property
    def pymanopt(self):
        """The equivalent pymanopt manifold (for the adapter and cross-checks)."""
        raise NotImplementedError

    # --- the tangent space as a vector space ------------------------------------------------
    def inner(self, U, V) -> float:
        """⟨U, V⟩ = Σ U ∘ V, the embedded (Euclidean) metric."""
        return arrays.vdot(U, V)

    def norm(self, V) -> float:
        """‖V‖; where ⟨V, V⟩ under- or overflows (entries below ~1e-154 or above ~1e154, e.g.
        a gradient at data of 1e-90), computed from V scaled by its largest entry — a
        gradient of 1e-180 is not 0."""
        sq = self.inner(V, V)
        if 1e-280 < sq < 1e280:
            return math.sqrt(sq)
        return scaled_norm(*self.split(V))

    def zero(self, M):
        """The zero tangent vector at ``M``."""
        return arrays.zeros_like(M)

    def lincomb(self, a: float, U, b: float = 0.0, V=None):
        """``a U + b V`` (``V`` may be omitted)."""
        if V is None:
            return a * U
        return U + b * V if a == 1.0 else a * U + b * V

    def apply(self, fn: Callable, *vectors):
        """``fn`` applied to the vectors' arrays, factor by factor (an entrywise operation,
        such as Adam's second moment)."""
        return fn(*vectors)

    # --- geometry -------------------------------------------------------------------------
    def project(self, M, Z):
        """The orthogonal projection of the ambient vector ``Z`` onto the tangent space."""
        raise NotImplementedError

    def rgrad(self, M, G):
        """The Riemannian gradient from the Euclidean gradient ``G``: its projection, for the
        embedded metric (Absil et al. 2008, §3.6.1)."""
        return self.project(M, G)

    def hess_shift(self, M, G):
        """What the Riemannian Hessian at ``M`` needs of the Euclidean gradient ``G``, computed
        once per point and passed to :meth:`rhess` for every direction (None: nothing)."""
        return None

    def rhess(self, M, G, H, V, S=None):
        """The Riemannian Hessian along the tangent ``V`` from the Euclidean gradient ``G``
        and ``H = ehvp(M, V)`` (``S = hess_shift(M, G)`` where already computed)."""
        raise NotImplementedError

    def retract(self, M, V, method: str = "polar"):
        """A retraction ``R_M(V)``; ``method`` chooses between two on a curved manifold."""
        raise NotImplementedError

    def transport(self, M, N, V):
        """Vector transport of ``V`` from the tangent space at ``M`` to the one at ``N``: the
        projection onto the latter (``V`` itself where ``transport_is_identity``)."""
        return V if self.transport_is_identity else self.project(N, V)

    def random_point(self, rng: np.random.Generator):
        """A random point drawn from ``rng`` (a NumPy array, or a tuple on a product)."""
        raise NotImplementedError

    def random_ambient(self, rng: np.random.Generator):
        """An ambient vector of standard normal entries drawn from ``rng``."""
        return rng.standard_normal(self.shape)

    def random_tangent(self, M, rng: np.random.Generator):
        """A random unit tangent vector at ``M`` (the projection of :meth:`random_ambient`),
        in the namespace and on the device of ``M``."""
        V = self.project(M, arrays.like(self.random_ambient(rng), M))
        return self.lincomb(1.0 / max(self.norm(V), 1e-300), V)

    # --- geodesics ----------------------------------------------------------------------------
    def exp(self, M, V):
        """The Riemannian exponential Exp_M(V) = γ(1), where γ is the geodesic with γ(0) = M
        and γ'(0) = V (Absil et al. 2008, §5.4): d/dt Exp_M(tV) = V at t = 0, and
        ``retract`` agrees with it to first order.

        Parameters
        ----------
        M : array or tuple
            A point (of the manifold's shape; one array per factor on a product).
        V : array or tuple
            A tangent vector at ``M`` (horizontal on Grassmann: MᵀV = 0).

        Returns
        -------
        array or tuple
            The point Exp_M(V), in the namespace of ``M``.

        Raises
        ------
        NotImplementedError
            Where the class has no closed form for it (this base class).
        ParameterError
            Where ``M`` or ``V`` is not of the manifold's shape.
        """
        raise NotImplementedError(f"{type(self).__name__} has no Riemannian exponential; "
                                  "retract(M, V) is a first-order approximation of it")

    def log(self, M, N):
        """The Riemannian logarithm Log_M(N): the tangent vector V at ``M`` of least norm with
        Exp_M(V) = N (for Grassmann: spanning span(N)), defined where N is not in M's cut
        locus, so that ``log(M, exp(M, V)) = V`` for V small enough and ‖Log_M(N)‖ is the
        geodesic distance (Absil et al. 2008, §5.4).

        Parameters
        ----------
        M, N : array or tuple
            Two points (of the manifold's shape; one array per factor on a product).

        Returns
        -------
        array or tuple
            A tangent vector at ``M``, in the namespace of ``M``.

        Raises
        ------
        NotImplementedError
            Where the class has no closed form for it (Stiefel, this base class).
        ParameterError
            Where ``M`` or ``N`` is not of the manifold's shape.
        """
        raise NotImplementedError(f"{type(self).__name__} has no Riemannian logarithm")

    def dist(self, M, N) -> float:
        """The geodesic (Riemannian) distance between ``M`` and ``N``: the infimum of the
        lengths of the curves joining them, ‖Log_M(N)‖ where the logarithm is defined
        (Absil et al. 2008, §3.6); on a stack or a product, √(Σᵢ dist(Mᵢ, Nᵢ)²), the distance
        of the product metric.

        Parameters
        ----------
        M, N : array or tuple
            Two points (of the manifold's shape; one array per factor on a product).

        Returns
        -------
        float

        Raises
        ------
        NotImplementedError
            Where the class has no closed form for it (Stiefel, this base class).
        ParameterError
            Where ``M`` or ``N`` is not of the manifold's shape.
        """
        raise NotImplementedError(f"{type(self).__name__} has no geodesic distance; "
                                  "change(M, N) measures a step between iterates")

    def check_pair(self, M, X, name: str) -> None:
        """A :class:`~ldr.core.errors.ParameterError` naming ``M`` or ``name`` unless both
        ``M`` and ``X`` have the manifold's shape: one array of ``shape``, or on a product a
        tuple (or list) of one array per factor, each of its factor's shape."""
        expected = [f.shape for f in self.factors]
        single = self.factors[0] is self
        for label, value in (("M", M), (name, X)):
            if single:
                got = [tuple(getattr(value, "shape", ()))]
            elif isinstance(value, (tuple, list)):
                got = [tuple(getattr(v, "shape", ())) for v in value]
            else:
                got = None
            if got == expected:
                continue
            if single:
                raise ParameterError(label, f"expected an array of shape {expected[0]} (a "
                                            f"point or tangent vector of {self}), got shape "
                                            f"{got[0]}")
            found = "not a tuple" if got is None else f"shapes {tuple(got)}"
            raise ParameterError(label, f"expected a tuple of {len(expected)} arrays of shapes "
                                        f"{tuple(expected)} (one per factor of {self}), got "
                                        f"{found}")

    def change(self, M, N) -> float:
        """How far apart the successive iterates ``M`` and ``N`` are: the measure the driver's
        step rule compares with ``xtol`` (each class says which)."""
        raise NotImplementedError

    def feasibility(self, M) -> float:
        """How far ``M`` is off the manifold (0 on a flat space)."""
        return 0.0

    # --- certificates -----------------------------------------------------------------------
    def tangent_basis(self, M) -> tuple[int, Callable, Callable]:
        """``(dim, to_vector, to_coords)`` for an orthonormal basis of the tangent space at
        ``M`` (on the host): ``to_vector`` maps coordinates to a tangent vector,
        ``to_coords`` back.  A stack's basis is block diagonal, one factor's
        (:meth:`~ldr.manifolds.Manifold.matrix_tangent_basis`) per matrix."""
        M = arrays.to_host(M)
        if M.ndim == 2:
            return self.matrix_tangent_basis(M)
        bases = [self.matrix_tangent_basis(m) for m in M]
        n1 = bases[0][0]

        def to_vector(c):
            return np.stack([b[1](c[i * n1:(i + 1) * n1]) for i, b in enumerate(bases)])

        def to_coords(V):
            return np.concatenate([b[2](v) for b, v in zip(bases, V)])

        return n1 * len(bases), to_vector, to_coords

    def matrix_tangent_basis(self, M: np.ndarray) -> tuple[int, Callable, Callable]:
        """:meth:`~ldr.manifolds.Manifold.tangent_basis` at one d×r matrix ``M`` (a NumPy array)."""
        raise NotImplementedError

    # --- points given by a user -------------------------------------------------------------
    def check_shape(self, M, name: str):
        """``M`` as a new float64 NumPy array of the manifold's shape with finite entries, or
        a :class:`~ldr.core.errors.ParameterError` naming ``name``."""
        return check_point(M, self.shape, name)

    def nearest(self, M, name: str):
        """The point nearest to ``M`` (``M`` itself on a flat space); a ParameterError naming
        ``name`` where there is none."""
        return M

    def validate_point(self, M, name: str = "M0", tol: float = 1e-8,
                       orthonormalize: bool = False,
                       remedy: str = "pass ldr.manifolds.orthonormalize(M0)"):
        """A float copy of ``M`` of the right shape, on the manifold to ``tol`` (by
        :meth:`feasibility`); with ``orthonormalize``, first replaced by the nearest point
        (:meth:`nearest`: each Stiefel or Grassmann factor by the nearest matrix with
        orthonormal columns, the same span).  ``remedy`` ends the error for a point off the
        manifold.  A point of another namespace than NumPy is checked on the host and
        returned in its namespace, with ``tol`` at least 100·r·eps of its dtype."""
        first = M[0] if isinstance(M, (tuple, list)) and M else M
        if arrays.foreign(first) is not None:
            r = max(f.shape[-1] for f in self.factors)
            tol = max(tol, 100 * r * arrays.eps(first))
            host = arrays.to_host(tuple(M) if isinstance(M, list) else M)
            return arrays.like(self.validate_point(host, name, tol, orthonormalize, remedy),
                               first)
        out = self.check_shape(M, name)
        if orthonormalize:
            out = self.nearest(out, name)
        err = self.feasibility(out)
        if err > tol:
            raise ParameterError(name,
                f"columns are not orthonormal (‖MᵀM − I‖ = {err:.2e}); {remedy}")
        return out


def factor_shape(d, r, k) -> tuple[int, ...]:
    """The point shape of ``k`` stacked d×r factors: (d, r) for k = 1, else (k, d, r); a
    ParameterError for sizes that are not positive integers."""
    for key, value in (("d", d), ("r", r), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ParameterError(key, f"must be a positive integer (k >= 1 factors of d×r), "
                                      f"got {value!r}")
    return (int(d), int(r)) if k == 1 else (int(k), int(d), int(r))
