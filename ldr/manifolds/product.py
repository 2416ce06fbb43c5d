"""The product of manifolds, whose points are tuples with one array per factor."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldr.core.errors import ParameterError
from ldr.manifolds.manifold import Manifold


class Product(Manifold):
    """M₁ × … × M_m (CCA's pair of projections, PPCA's loadings and noise level): a point
    and a tangent vector are tuples with one array per factor.

    The metric is the sum of the factors' (Absil, Mahony & Sepulchre 2008, §3.6.1), so every
    operation acts factor by factor; ``change`` and ``feasibility`` report the largest over
    the factors, and the tangent basis is block diagonal.  The geodesics of the product are
    the tuples of the factors' geodesics, so ``exp`` and ``log`` act factor by factor and
    the distance is √(Σᵢ distᵢ²); each raises NotImplementedError, naming the factor, where
    a factor has no closed form for it (a Stiefel factor's ``log`` and ``dist``).  ``k``
    identical factors are cheaper as one manifold of stacked points
    (``Stiefel(d, r, k=k)``): one vectorized call per operation instead of k.

    Parameters
    ----------
    *manifolds : Manifold
        The factors (none of them a Product).

    Attributes
    ----------
    dim : int
        The sum of the factors' dimensions.
    typical_dist : float
        √(Σ typical_distᵢ²).
    """

    def __init__(self, *manifolds: Manifold):
        if not manifolds:
            raise ParameterError("manifolds", "a product needs at least one factor")
        for i, m in enumerate(manifolds):
            if not isinstance(m, Manifold) or isinstance(m, Product):
                raise ParameterError("manifolds", f"factor {i} is {m!r}; expected a manifold "
                                                  "that is not itself a product")
        self._factors = tuple(manifolds)
        self.shape = tuple(m.shape for m in manifolds)
        self.dim = sum(m.dim for m in manifolds)
        self.typical_dist = math.sqrt(sum(m.typical_dist**2 for m in manifolds))
        self.transport_is_identity = all(m.transport_is_identity for m in manifolds)

    def __repr__(self) -> str:
        return f"Product({', '.join(repr(m) for m in self._factors)})"

    def __str__(self) -> str:
        return " × ".join(str(m) for m in self._factors)

    @property
    def factors(self) -> tuple[Manifold, ...]:
        return self._factors

    def split(self, X) -> tuple:
        return tuple(X)

    @property
    def pymanopt(self):
        import pymanopt.manifolds as pm  # only for the adapter and cross-checks

        return pm.Product([m.pymanopt for m in self._factors])

    # --- the tangent space as a vector space ------------------------------------------------
    def inner(self, U, V) -> float:
        return float(sum(m.inner(a, b) for m, a, b in zip(self._factors, U, V)))

    def lincomb(self, a: float, U, b: float = 0.0, V=None):
        if V is None:
            return tuple(a * u for u in U)
        return tuple(a * u + b * v for u, v in zip(U, V))

    def apply(self, fn: Callable, *vectors):
        return tuple(fn(*arrays) for arrays in zip(*vectors))

    # --- geometry -------------------------------------------------------------------------
    def project(self, M, Z):
        return tuple(m.project(a, z) for m, a, z in zip(self._factors, M, Z))

    def hess_shift(self, M, G):
        return tuple(m.hess_shift(a, g) for m, a, g in zip(self._factors, M, G))

    def rhess(self, M, G, H, V, S=None):
        if S is None:
            S = self.hess_shift(M, G)
        return tuple(m.rhess(a, g, h, v, s)
                     for m, a, g, h, v, s in zip(self._factors, M, G, H, V, S))

    def retract(self, M, V, method: str = "polar"):
        return tuple(m.retract(a, v, method) for m, a, v in zip(self._factors, M, V))

    def factorwise(self, operation: str, M, X) -> list:
        """``operation`` ("exp", "log" or "dist") of each factor on its arrays of ``M`` and
        ``X``; a NotImplementedError naming the factor that has none."""
        self.check_pair(M, X, "V" if operation == "exp" else "N")
        out = []
        for i, (m, a, x) in enumerate(zip(self._factors, M, X)):
            try:
                out.append(getattr(m, operation)(a, x))
            except NotImplementedError as exc:
                raise NotImplementedError(f"factor {i} of {self}, {m}, has no {operation}: "
                                          f"{exc}") from exc
        return out

    def exp(self, M, V):
        """(Exp_{M₁}(V₁), …, Exp_{Mₘ}(Vₘ)): the product's geodesics are the tuples of the
        factors'."""
        return tuple(self.factorwise("exp", M, V))

    def log(self, M, N):
        """(Log_{M₁}(N₁), …, Log_{Mₘ}(Nₘ))."""
        return tuple(self.factorwise("log", M, N))

    def dist(self, M, N) -> float:
        """√(Σᵢ dist(Mᵢ, Nᵢ)²), the geodesic distance of the product metric."""
        return math.sqrt(sum(d * d for d in self.factorwise("dist", M, N)))

    def random_point(self, rng: np.random.Generator):
        return tuple(m.random_point(rng) for m in self._factors)

    def random_ambient(self, rng: np.random.Generator):
        return tuple(m.random_ambient(rng) for m in self._factors)

    def change(self, M, N) -> float:
        """The largest of the factors' step measures."""
        return max(m.change(a, b) for m, a, b in zip(self._factors, M, N))

    def feasibility(self, M) -> float:
        return max(m.feasibility(a) for m, a in zip(self._factors, M))

    def tangent_basis(self, M):
        bases = [m.tangent_basis(a) for m, a in zip(self._factors, M)]
        offsets = np.cumsum([0] + [b[0] for b in bases])

        def to_vector(c):
            return tuple(b[1](c[offsets[i]:offsets[i + 1]]) for i, b in enumerate(bases))

        def to_coords(V):
            return np.concatenate([b[2](v) for b, v in zip(bases, V)])

        return int(offsets[-1]), to_vector, to_coords

    # --- points given by a user -------------------------------------------------------------
    def check_shape(self, M, name: str):
        if not isinstance(M, (tuple, list)) or len(M) != len(self._factors):
            raise ParameterError(name, f"expected a tuple of {len(self._factors)} arrays, one "
                                       f"per factor of {self}")
        return tuple(m.check_shape(a, f"{name}[{i}]")
                     for i, (m, a) in enumerate(zip(self._factors, M)))

    def nearest(self, M, name: str):
        return tuple(m.nearest(a, f"{name}[{i}]")
                     for i, (m, a) in enumerate(zip(self._factors, M)))
