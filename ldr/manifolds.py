"""Manifold geometry: a thin layer over pymanopt's manifolds.

A point is a d×r array, or a tuple of them on a product manifold.  Projection, the Riemannian
Hessian and the metric come from :mod:`pymanopt.manifolds` (the embedded, Euclidean metric);
this module adds what the solvers need on top of them and what pymanopt does not offer in the
form we need:

* seeded random points (pymanopt draws from NumPy's global state);
* the polar retraction computed by SVD, ``R_M(V) = U Vᵀ`` with ``M + V = U S Vᵀ``
  (survey Eq. 35; it keeps ``‖MᵀM − I‖`` at rounding level however long a run is), or QR;
* the largest principal angle between two subspaces, from sines:
  ``sin θ_max = ‖(I − M Mᵀ) N‖₂`` (``arccos`` of the cosines loses every angle below 1e-8);
* an orthonormal basis of the tangent (horizontal) space, for Hessian certificates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pymanopt.manifolds as pm

Point = np.ndarray | tuple
KINDS = ("stiefel", "grassmann", "euclidean")


def _polar(A: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(A, full_matrices=False)
    return U @ Vt


def _qr(A: np.ndarray) -> np.ndarray:
    Q, R = np.linalg.qr(A)
    signs = np.sign(np.diag(R))
    signs[signs == 0] = 1.0
    return Q * signs


def orthonormalize(A: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the column span of ``A`` (QR with a sign convention)."""
    return _qr(np.asarray(A, dtype=float))


def sin_largest_angle(M: np.ndarray, N: np.ndarray) -> float:
    """Sine of the largest principal angle between span(M) and span(N) (both orthonormal)."""
    residual = N - M @ (M.T @ N)
    # ‖R‖₂ from the r×r Gram matrix RᵀR (cheaper than an SVD of the d×r residual; R is
    # formed explicitly, so tiny angles keep their relative accuracy)
    top = np.linalg.eigvalsh(residual.T @ residual)[-1]
    return float(min(1.0, np.sqrt(max(top, 0.0))))


class _Part:
    """One factor of a (possibly product) manifold."""

    def __init__(self, kind: str, shape: tuple[int, int]):
        if kind not in KINDS:
            raise ValueError(f"manifold: unknown kind {kind!r}; choose one of {KINDS}")
        d, r = (int(s) for s in shape)
        if kind != "euclidean" and not 1 <= r <= d:
            raise ValueError(f"manifold: a {kind} point needs 1 <= r <= d, got shape {(d, r)}")
        if kind == "grassmann" and r == d:
            raise ValueError("manifold: a Grassmann manifold needs r < d")
        self.kind, self.shape = kind, (d, r)
        if kind == "stiefel":
            self.pymanopt = pm.Stiefel(d, r)
        elif kind == "grassmann":
            self.pymanopt = pm.Grassmann(d, r)
        else:
            self.pymanopt = pm.Euclidean(d, r)

    @property
    def dim(self) -> int:
        return int(self.pymanopt.dim)

    @property
    def typical_dist(self) -> float:
        if self.kind == "euclidean":
            return float(np.sqrt(self.dim))
        return float(np.sqrt(self.shape[1]))

    def project(self, M, Z):
        if self.kind == "euclidean":
            return Z
        if self.kind == "grassmann":
            return Z - M @ (M.T @ Z)
        MtZ = M.T @ Z
        return Z - M @ (0.5 * (MtZ + MtZ.T))

    def rhess(self, M, G, H, V):
        if self.kind == "euclidean":
            return H
        return self.pymanopt.euclidean_to_riemannian_hessian(M, G, H, V)

    def retract(self, M, V, method: str):
        if self.kind == "euclidean":
            return M + V
        return _qr(M + V) if method == "qr" else _polar(M + V)

    def random_point(self, rng: np.random.Generator):
        A = rng.standard_normal(self.shape)
        return A if self.kind == "euclidean" else _qr(A)

    def change(self, M, N) -> float:
        """How far an iterate moved, measured on this factor: the largest principal-angle sine
        on Grassmann (rotating a basis inside its span is no move), the spectral norm
        ‖N − M‖₂ on Stiefel (it is: a cost that is not invariant to M → MR can make all its
        progress inside a fixed span), and ‖N − M‖_F / max(‖M‖_F, ‖N‖_F) on a Euclidean factor
        (relative, so that it does not depend on the units of the data)."""
        if self.kind == "euclidean":
            size = max(np.linalg.norm(M), np.linalg.norm(N), 1e-300)
            return float(np.linalg.norm(N - M) / size)
        if self.kind == "stiefel":
            return float(np.linalg.norm(N - M, 2))
        return sin_largest_angle(M, N)

    def feasibility(self, M) -> float:
        if self.kind == "euclidean":
            return 0.0
        return float(np.linalg.norm(M.T @ M - np.eye(self.shape[1])))

    def tangent_basis(self, M) -> tuple[int, Callable, Callable]:
        """``(dim, to_vector, to_coords)`` for an orthonormal basis of the tangent space."""
        d, r = self.shape
        if self.kind == "euclidean":
            return d * r, lambda c: c.reshape(d, r), lambda V: V.reshape(-1)
        Q, _ = np.linalg.qr(M, mode="complete")
        Mperp = Q[:, r:]
        nb = (d - r) * r
        if self.kind == "grassmann":
            return (
                nb,
                lambda c: Mperp @ c.reshape(d - r, r),
                lambda V: (Mperp.T @ V).reshape(-1),
            )
        iu = np.triu_indices(r, 1)
        na = len(iu[0])
        s2 = np.sqrt(2.0)

        def to_vector(c):
            A = np.zeros((r, r))
            A[iu] = c[:na] / s2
            return M @ (A - A.T) + Mperp @ c[na:].reshape(d - r, r)

        def to_coords(V):
            return np.concatenate([(M.T @ V)[iu] * s2, (Mperp.T @ V).reshape(-1)])

        return na + nb, to_vector, to_coords


def _normalize_spec(spec, shape) -> tuple[list[str], list[tuple[int, int]], bool]:
    if isinstance(spec, str):
        if shape is None or len(shape) != 2 or not all(np.isscalar(s) for s in shape):
            raise ValueError(f"manifold {spec!r}: shape must be (d, r), got {shape!r}")
        return [spec], [tuple(shape)], False
    if isinstance(spec, Sequence) and spec and all(isinstance(s, str) for s in spec):
        if (shape is None or len(shape) != len(spec)
                or not all(isinstance(s, Sequence) and len(s) == 2 for s in shape)):
            raise ValueError(
                f"product manifold {tuple(spec)}: shape must hold one (d, r) per factor, "
                f"got {shape!r}"
            )
        return list(spec), [tuple(s) for s in shape], True
    raise ValueError(
        f"manifold: expected one of {KINDS} or a tuple of them, got {spec!r}"
    )


class Geometry:
    """The manifold an objective lives on: one factor, or a product of several.

    Parameters
    ----------
    spec : {"stiefel", "grassmann", "euclidean"} or tuple of them
        The manifold kind; a tuple means the product of those factors.
    shape : (d, r), or a tuple of (d, r) per factor
    """

    def __init__(self, spec, shape):
        kinds, shapes, self.is_product = _normalize_spec(spec, shape)
        self.parts = [_Part(k, s) for k, s in zip(kinds, shapes)]
        self.spec = tuple(kinds) if self.is_product else kinds[0]
        self.shape = tuple(shapes) if self.is_product else shapes[0]

    def __repr__(self) -> str:
        inner = " × ".join(f"{p.kind.capitalize()}({p.shape[0]}, {p.shape[1]})" for p in self.parts)
        return f"Geometry({inner})"

    # --- helpers mapping over the factors -------------------------------------------------
    def _map(self, fn, *args):
        if self.is_product:
            return tuple(fn(p, *a) for p, *a in zip(self.parts, *args))
        return fn(self.parts[0], *args)

    def _reduce(self, fn, *args) -> list:
        if self.is_product:
            return [fn(p, *a) for p, *a in zip(self.parts, *args)]
        return [fn(self.parts[0], *args)]

    @property
    def dim(self) -> int:
        return sum(p.dim for p in self.parts)

    @property
    def typical_dist(self) -> float:
        return float(np.sqrt(sum(p.typical_dist**2 for p in self.parts)))

    @property
    def pymanopt(self):
        """The equivalent pymanopt manifold (a ``Product`` for several factors)."""
        if self.is_product:
            return pm.Product([p.pymanopt for p in self.parts])
        return self.parts[0].pymanopt

    # --- vector-space operations on tangent vectors ---------------------------------------
    def inner(self, U, V) -> float:
        return float(sum(self._reduce(lambda p, a, b: np.vdot(a, b), U, V)))

    def norm(self, V) -> float:
        return float(np.sqrt(max(self.inner(V, V), 0.0)))

    def lincomb(self, a: float, U, b: float = 0.0, V=None):
        """``a U + b V`` (``V`` may be omitted)."""
        if V is None:
            return self._map(lambda p, u: a * u, U)
        return self._map(lambda p, u, v: a * u + b * v, U, V)

    def zero(self, M):
        return self._map(lambda p, m: np.zeros_like(m), M)

    # --- geometry -------------------------------------------------------------------------
    def project(self, M, Z):
        """Orthogonal projection of an ambient vector onto the tangent space (Eq. 34)."""
        return self._map(lambda p, m, z: p.project(m, z), M, Z)

    def rgrad(self, M, G):
        """Riemannian gradient from the Euclidean gradient ``G`` (embedded metric)."""
        return self.project(M, G)

    def rhess(self, M, G, H, V):
        """Riemannian Hessian along ``V`` from the Euclidean gradient and ``H = ehvp(M, V)``."""
        return self._map(lambda p, m, g, h, v: p.rhess(m, g, h, v), M, G, H, V)

    def retract(self, M, V, method: str = "polar"):
        """Retraction ``R_M(V)``: polar (SVD, survey Eq. 35) or QR."""
        if method not in ("polar", "qr"):
            raise ValueError(f"retraction: expected 'polar' or 'qr', got {method!r}")
        return self._map(lambda p, m, v: p.retract(m, v, method), M, V)

    def transport(self, M, N, V):
        """Vector transport by projection onto the tangent space at ``N``."""
        return self.project(N, V)

    def random_point(self, rng: np.random.Generator):
        return self._map(lambda p: p.random_point(rng))

    def random_tangent(self, M, rng: np.random.Generator):
        Z = self._map(lambda p: rng.standard_normal(p.shape))
        V = self.project(M, Z)
        return self.lincomb(1.0 / max(self.norm(V), 1e-300), V)

    def random_ambient(self, rng: np.random.Generator):
        return self._map(lambda p: rng.standard_normal(p.shape))

    def change(self, M, N) -> float:
        """How far successive iterates are apart on the manifold actually solved on (largest
        over factors): principal-angle sine on Grassmann, ‖N − M‖₂ on Stiefel, relative
        Frobenius distance on Euclidean factors (see :meth:`_Part.change`)."""
        return max(self._reduce(lambda p, a, b: p.change(a, b), M, N))

    def feasibility(self, M) -> float:
        """``‖MᵀM − I‖_F`` (max over factors; 0 on Euclidean factors)."""
        return max(self._reduce(lambda p, m: p.feasibility(m), M))

    def tangent_basis(self, M):
        """``(dim, to_vector, to_coords)`` for an orthonormal tangent basis at ``M``."""
        bases = self._reduce(lambda p, m: p.tangent_basis(m), M)
        if not self.is_product:
            return bases[0]
        sizes = [b[0] for b in bases]
        offsets = np.cumsum([0, *sizes])

        def to_vector(c):
            return tuple(b[1](c[offsets[i] : offsets[i + 1]]) for i, b in enumerate(bases))

        def to_coords(V):
            return np.concatenate([b[2](v) for b, v in zip(bases, V)])

        return int(offsets[-1]), to_vector, to_coords

    def validate_point(self, M, name: str = "M0", tol: float = 1e-8):
        """A float copy of ``M`` of the right shape, on the manifold to ``tol``."""
        from ldr._validation import check_point

        if self.is_product:
            if not isinstance(M, (tuple, list)) or len(M) != len(self.parts):
                raise ValueError(f"{name}: expected a tuple of {len(self.parts)} arrays")
            out = tuple(check_point(m, p.shape, f"{name}[{i}]") for i, (m, p) in
                        enumerate(zip(M, self.parts)))
        else:
            out = check_point(M, self.parts[0].shape, name)
        err = self.feasibility(out)
        if err > tol:
            raise ValueError(
                f"{name}: columns are not orthonormal (‖MᵀM − I‖ = {err:.2e}); "
                "pass ldr.manifolds.orthonormalize(M0)"
            )
        return out
