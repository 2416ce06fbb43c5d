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

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.linalg.lapack import dgeqrf as _geqrf
from scipy.linalg.lapack import dgesdd as _gesdd
from scipy.linalg.lapack import dorgqr as _orgqr
from scipy.linalg.lapack import dsyevd as _syevd

from ldr.data import arrays
from ldr.data.validation import check_point
from ldr.errors import ParameterError

Point = np.ndarray | tuple
KINDS = ("stiefel", "grassmann", "euclidean")


def _polar(A: np.ndarray) -> np.ndarray:
    """The polar factor ``U Vᵀ`` of ``A = U S Vᵀ`` (LAPACK ``gesdd``, as ``numpy.linalg.svd``,
    called directly: on small matrices NumPy's wrapper costs more than the factorization)."""
    if type(A) is not np.ndarray:
        return arrays.polar(A)
    if A.ndim == 2:
        U, _, Vt, info = _gesdd(A, full_matrices=0)
        if info == 0:
            return U @ Vt
    U, _, Vt = np.linalg.svd(A, full_matrices=False)
    return U @ Vt


def _top_eigenvalue(G: np.ndarray) -> float:
    """Largest eigenvalue of the small symmetric matrix ``G`` (LAPACK ``syevd``, values only)."""
    if G.shape[0] == 1:
        return float(G[0, 0])
    if type(G) is not np.ndarray:
        return arrays.top_eigenvalue(G)
    w, _, info = _syevd(G, compute_v=0)
    return float(w[-1]) if info == 0 else float(np.linalg.eigvalsh(G)[-1])


def _qr(A: np.ndarray) -> np.ndarray:
    """Q of A = QR with diag(R) ≥ 0 (of each matrix of a stack (k, d, r)); a single tall
    matrix goes to LAPACK's ``geqrf``/``orgqr`` directly (what ``numpy.linalg.qr`` calls)."""
    if type(A) is not np.ndarray:
        return arrays.qr(A)
    if A.ndim == 2 and A.shape[0] >= A.shape[1]:
        QR, tau, _, info = _geqrf(A)
        if info == 0:
            Q, _, info = _orgqr(QR, tau)
            if info == 0:
                signs = np.sign(np.diagonal(QR)).copy()
                signs[signs == 0] = 1.0
                return Q * signs
    Q, R = np.linalg.qr(A)
    signs = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return Q * signs[..., None, :]


def orthonormalize(A: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the column span of ``A`` (QR with a sign convention)."""
    return _qr(A if arrays.foreign(A) is not None else np.asarray(A, dtype=float))


def sin_largest_angle(M: np.ndarray, N: np.ndarray) -> float:
    """Sine of the largest principal angle between span(M) and span(N) (both orthonormal)."""
    residual = N - M @ (M.T @ N)
    # ‖R‖₂ from the r×r Gram matrix RᵀR (cheaper than an SVD of the d×r residual; R is
    # formed explicitly, so tiny angles keep their relative accuracy)
    top = _top_eigenvalue(residual.T @ residual)
    return min(1.0, math.sqrt(max(top, 0.0)))


def _T(A: np.ndarray) -> np.ndarray:
    """Transpose of a matrix, or of each matrix of a stack (k, d, r)."""
    return A.mT


def _sym(A: np.ndarray) -> np.ndarray:
    return 0.5 * (A + _T(A))


def _top_eigenvalues(G: np.ndarray) -> np.ndarray:
    """Largest eigenvalue of each small symmetric matrix of a stack (k, r, r)."""
    if G.shape[-1] == 1:
        return G[:, 0, 0]
    return np.linalg.eigvalsh(G)[:, -1] if type(G) is np.ndarray else \
        arrays.namespace(G).linalg.eigvalsh(G)[:, -1]


class _Part:
    """One factor of a (possibly product) manifold, or k identical factors at once.

    ``shape`` (d, r) is one factor: points are d×r arrays.  ``shape`` (k, d, r) is the product
    of k identical factors handled as one *batched* factor: points are arrays (k, d, r), and
    every operation below is one vectorized NumPy call over the stack (no loop over the
    factors), with the product's geometry — the metric, projection, Hessian and retraction act
    factor by factor, and :meth:`change` and :meth:`feasibility` report the largest over the
    factors, as they do for a product given as a tuple.
    """

    def __init__(self, kind: str, shape: tuple[int, ...]):
        if kind not in KINDS:
            raise ParameterError("manifold", f"unknown kind {kind!r}; choose one of {KINDS}")
        shape = tuple(int(s) for s in shape)
        self.batched = len(shape) == 3
        k, d, r = shape if self.batched else (1, *shape)
        if k < 1:
            raise ParameterError("manifold", f"a batch of factors needs k >= 1, got shape {shape}")
        if kind != "euclidean" and not 1 <= r <= d:
            raise ParameterError(
                "manifold", f"a {kind} point needs 1 <= r <= d, got shape {(d, r)}")
        if kind == "grassmann" and r == d:
            raise ParameterError("manifold", "a Grassmann manifold needs r < d")
        self.kind, self.shape, self.k = kind, shape, k
        if kind == "stiefel":
            self.dim = k * (d * r - r * (r + 1) // 2)
        elif kind == "grassmann":
            self.dim = k * (d - r) * r
        else:
            self.dim = k * d * r

    @property
    def pymanopt(self):
        """The equivalent pymanopt manifold (built on first use)."""
        if "_pymanopt" not in self.__dict__:
            import pymanopt.manifolds as pm  # only for the adapter and cross-checks


            k, (d, r) = self.k, self.shape[-2:]
            if self.kind == "stiefel":
                self._pymanopt = pm.Stiefel(d, r, k=k)
            elif self.kind == "grassmann":
                self._pymanopt = pm.Grassmann(d, r, k=k)
            else:
                self._pymanopt = pm.Euclidean(*self.shape)
        return self._pymanopt

    @functools.cached_property
    def typical_dist(self) -> float:
        if self.kind == "euclidean":
            return float(np.sqrt(self.dim))
        return float(np.sqrt(self.k * self.shape[-1]))

    def project(self, M, Z):
        if self.kind == "euclidean":
            return Z
        if self.kind == "grassmann":
            return Z - M @ (_T(M) @ Z)
        return Z - M @ _sym(_T(M) @ Z)

    def hess_shift(self, M, G):
        """The part of the Riemannian Hessian that depends on the point only (computed once
        per point): ``MᵀG`` on Grassmann, ``sym(MᵀG)`` on Stiefel, None on Euclidean."""
        if self.kind == "euclidean":
            return None
        MtG = _T(M) @ G
        return MtG if self.kind == "grassmann" else _sym(MtG)

    def rhess(self, M, S, H, V):
        """Riemannian Hessian along ``V`` from ``H = ehvp(M, V)`` and ``S = hess_shift(M, G)``
        (embedded metric; pymanopt's ``euclidean_to_riemannian_hessian``):
        Grassmann ``π(H) − V MᵀG``; Stiefel ``π(H) − V S − M sym(VᵀM S)`` (the Weingarten
        map at the normal part ``M S`` of G); Euclidean ``H``."""
        if self.kind == "euclidean":
            return H
        if self.kind == "grassmann":
            return self.project(M, H) - V @ S
        return self.project(M, H) - V @ S - M @ _sym((_T(V) @ M) @ S)

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
        (relative, so that it does not depend on the units of the data).  Batched: the
        largest over the k factors."""
        if self.kind == "euclidean" and type(M) is not np.ndarray:
            return arrays.relative_change(M, N)
        if self.batched:
            return self._change_batched(M, N)
        if self.kind == "euclidean":  # np.linalg.norm's own arithmetic, without its dispatch
            size = max(arrays.frobenius(M), arrays.frobenius(N), 1e-300)
            return float(arrays.frobenius(N - M) / size)
        if self.kind == "stiefel":  # ‖D‖₂ from the r×r Gram matrix, as sin_largest_angle
            D = N - M
            return math.sqrt(max(_top_eigenvalue(D.T @ D), 0.0))
        return sin_largest_angle(M, N)

    def _change_batched(self, M, N) -> float:
        xp = arrays.namespace(M)
        if self.kind == "euclidean":
            size = np.maximum(np.maximum(np.linalg.norm(M, axis=(1, 2)),
                                         np.linalg.norm(N, axis=(1, 2))), 1e-300)
            return float(np.max(np.linalg.norm(N - M, axis=(1, 2)) / size))
        D = N - M if self.kind == "stiefel" else N - M @ (_T(M) @ N)
        top = float(xp.max(_top_eigenvalues(_T(D) @ D)))
        root = math.sqrt(max(top, 0.0))
        return float(root if self.kind == "stiefel" else min(1.0, root))

    def nearest(self, M, name: str) -> np.ndarray:
        """The point nearest to ``M`` in the Frobenius norm: the polar factor UVᵀ of
        M = USVᵀ (same column span); ``M`` itself on a Euclidean factor.  Raises when M has
        (numerically) dependent columns, whose span is not r-dimensional."""
        if self.kind == "euclidean":
            return M
        s = np.linalg.svd(M, compute_uv=False)
        top, low = np.max(s, axis=-1), np.min(s, axis=-1)
        if np.any(low <= 1e-12 * top):
            raise ParameterError(name, f"its columns are linearly dependent (singular values "
                             f"down to {float(np.min(low / np.maximum(top, 1e-300))):.1e} of "
                             "the largest), so no orthonormal basis spans them; pass a start "
                             "with independent columns")
        return _polar(M)

    def feasibility(self, M) -> float:
        """‖MᵀM − I‖_F (the largest over a batch's factors)."""
        if self.kind == "euclidean":
            return 0.0
        M = arrays.to_host(M)  # a check, not an iteration's work
        E = _T(M) @ M - np.eye(self.shape[-1])
        if self.batched:
            return float(np.max(np.linalg.norm(E, axis=(1, 2))))
        return float(np.linalg.norm(E))

    def tangent_basis(self, M) -> tuple[int, Callable, Callable]:
        """``(dim, to_vector, to_coords)`` for an orthonormal basis of the tangent space."""
        M = arrays.to_host(M)  # for the certificate, which works on the host
        if self.batched:  # block diagonal: one factor's basis per matrix of the stack
            one = _Part(self.kind, self.shape[1:])
            bases = [one.tangent_basis(m) for m in M]
            n1 = bases[0][0]

            def to_vector_b(c):
                return np.stack([b[1](c[i * n1:(i + 1) * n1]) for i, b in enumerate(bases)])

            def to_coords_b(V):
                return np.concatenate([b[2](v) for b, v in zip(bases, V)])

            return n1 * self.k, to_vector_b, to_coords_b
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


def scaled_norm(*parts) -> float:
    """The Frobenius norm of the arrays ``parts`` together, computed from them scaled by their
    largest entry, so that the squares neither under- nor overflow (entries of 1e±180)."""
    parts = [arrays.to_host(p) for p in parts]  # a rare path (under- or overflow)
    big = max((float(np.max(np.abs(p))) for p in parts if np.size(p)), default=0.0)
    if big == 0.0 or not math.isfinite(big):
        return big if big == 0.0 or math.isinf(big) else math.nan
    return big * math.sqrt(sum(float(np.vdot(p / big, p / big)) for p in parts))


def _normalize_spec(spec, shape) -> tuple[list[str], list[tuple[int, ...]], bool]:
    if isinstance(spec, str):
        if (shape is None or not isinstance(shape, Sequence) or len(shape) not in (2, 3)
                or not all(np.isscalar(s) for s in shape)):
            raise ValueError(f"manifold {spec!r}: shape must be (d, r), or (k, d, r) for the "
                             f"product of k identical factors, got {shape!r}")
        return [spec], [tuple(shape)], False
    if isinstance(spec, Sequence) and spec and all(isinstance(s, str) for s in spec):
        if (shape is None or len(shape) != len(spec)
                or not all(isinstance(s, Sequence) and len(s) == 2 for s in shape)):
            raise ValueError(
                f"product manifold {tuple(spec)}: shape must hold one (d, r) per factor, "
                f"got {shape!r}"
            )
        return list(spec), [tuple(s) for s in shape], True
    raise ParameterError("manifold",
        f"expected one of {KINDS} or a tuple of them, got {spec!r}"
    )


class Geometry:
    """The manifold an objective lives on: one factor, or a product of several.

    Parameters
    ----------
    spec : {"stiefel", "grassmann", "euclidean"} or tuple of them
        The manifold kind; a tuple means the product of those factors (points are tuples).
    shape : (d, r), a tuple of (d, r) per factor, or (k, d, r)
        (k, d, r) with a single kind is the product of k identical factors as one batched
        manifold: points are arrays of shape (k, d, r) and each geometric operation is one
        vectorized call over the stack, whatever k (a tuple of k factors costs k Python calls
        per operation).
    """

    def __init__(self, spec, shape):
        kinds, shapes, self.is_product = _normalize_spec(spec, shape)
        self.parts = [_Part(k, s) for k, s in zip(kinds, shapes)]
        self.spec = tuple(kinds) if self.is_product else kinds[0]
        self.shape = tuple(shapes) if self.is_product else shapes[0]

    @property
    def batched(self) -> bool:
        """True for the product of k identical factors given as one shape (k, d, r)."""
        return not self.is_product and self.parts[0].batched

    def __repr__(self) -> str:
        def one(p):
            d, r = p.shape[-2:]
            return f"{p.kind.capitalize()}({d}, {r})" + (f"^{p.k}" if p.batched else "")

        return f"Geometry({' × '.join(one(p) for p in self.parts)})"

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

    @functools.cached_property
    def typical_dist(self) -> float:
        return float(np.sqrt(sum(p.typical_dist**2 for p in self.parts)))

    @property
    def pymanopt(self):
        """The equivalent pymanopt manifold (a ``Product`` for several factors)."""
        if self.is_product:
            import pymanopt.manifolds as pm

            return pm.Product([p.pymanopt for p in self.parts])
        return self.parts[0].pymanopt

    # --- vector-space operations on tangent vectors ---------------------------------------
    def inner(self, U, V) -> float:
        if self.is_product:
            return float(sum(arrays.vdot(a, b) for a, b in zip(U, V)))
        return float(np.vdot(U, V)) if type(U) is np.ndarray else arrays.vdot(U, V)

    def norm(self, V) -> float:
        """‖V‖; where ⟨V, V⟩ under- or overflows (entries below ~1e-154 or above ~1e154, e.g.
        a gradient at data of 1e-90), computed from V scaled by its largest entry — a
        gradient of 1e-180 is not 0."""
        sq = self.inner(V, V)
        if 1e-280 < sq < 1e280:
            return math.sqrt(sq)
        return scaled_norm(*(V if self.is_product else (V,)))

    def lincomb(self, a: float, U, b: float = 0.0, V=None):
        """``a U + b V`` (``V`` may be omitted)."""
        if not self.is_product:
            if V is None:
                return a * U
            return U + b * V if a == 1.0 else a * U + b * V
        if V is None:
            return tuple(a * u for u in U)
        return tuple(a * u + b * v for u, v in zip(U, V))

    def zero(self, M):
        return arrays.zeros_like(M)

    # --- geometry -------------------------------------------------------------------------
    def project(self, M, Z):
        """Orthogonal projection of an ambient vector onto the tangent space (Eq. 34)."""
        if not self.is_product:
            return self.parts[0].project(M, Z)
        return tuple(p.project(m, z) for p, m, z in zip(self.parts, M, Z))

    def rgrad(self, M, G):
        """Riemannian gradient from the Euclidean gradient ``G`` (embedded metric)."""
        return self.project(M, G)

    def hess_shift(self, M, G):
        """What the Riemannian Hessian at ``M`` needs of the Euclidean gradient ``G``, computed
        once per point and passed to :meth:`rhess` for every direction (``S``)."""
        return self._map(lambda p, m, g: p.hess_shift(m, g), M, G)

    def rhess(self, M, G, H, V, S=None):
        """Riemannian Hessian along ``V`` from the Euclidean gradient and ``H = ehvp(M, V)``
        (``S = hess_shift(M, G)`` if already computed at this point)."""
        if S is None:
            S = self.hess_shift(M, G)
        if not self.is_product:
            return self.parts[0].rhess(M, S, H, V)
        return tuple(p.rhess(m, s, h, v) for p, m, s, h, v in zip(self.parts, M, S, H, V))

    def retract(self, M, V, method: str = "polar"):
        """Retraction ``R_M(V)``: polar (SVD, survey Eq. 35) or QR."""
        if method not in ("polar", "qr"):
            raise ParameterError("retraction", f"expected 'polar' or 'qr', got {method!r}")
        if not self.is_product:
            return self.parts[0].retract(M, V, method)
        return tuple(p.retract(m, v, method) for p, m, v in zip(self.parts, M, V))

    def transport(self, M, N, V):
        """Vector transport by projection onto the tangent space at ``N``."""
        return self.project(N, V)

    def random_point(self, rng: np.random.Generator):
        return self._map(lambda p: p.random_point(rng))

    def random_tangent(self, M, rng: np.random.Generator):
        Z = arrays.like(self._map(lambda p: rng.standard_normal(p.shape)), M)
        V = self.project(M, Z)
        return self.lincomb(1.0 / max(self.norm(V), 1e-300), V)

    def random_ambient(self, rng: np.random.Generator):
        return self._map(lambda p: rng.standard_normal(p.shape))

    def change(self, M, N) -> float:
        """How far successive iterates are apart on the manifold actually solved on (largest
        over factors): principal-angle sine on Grassmann, ‖N − M‖₂ on Stiefel, relative
        Frobenius distance on Euclidean factors (see ``_Part.change``)."""
        if not self.is_product:
            return self.parts[0].change(M, N)
        return max(p.change(a, b) for p, a, b in zip(self.parts, M, N))

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

    def validate_point(self, M, name: str = "M0", tol: float = 1e-8,
                       orthonormalize: bool = False,
                       remedy: str = "pass ldr.manifolds.orthonormalize(M0)"):
        """A float copy of ``M`` of the right shape, on the manifold to ``tol``; with
        ``orthonormalize``, each Stiefel or Grassmann factor is first replaced by the nearest
        matrix with orthonormal columns (the polar factor, same span).
        ``remedy`` ends the error for a point off the manifold.  A point of another
        namespace than NumPy is checked on the host and returned in its namespace."""
        first = M[0] if isinstance(M, (tuple, list)) and M else M
        if arrays.foreign(first) is not None:  # tol at least 100·r·eps of its dtype
            tol = max(tol, 100 * self.parts[0].shape[-1] * arrays.eps(first))
            return arrays.like(self.validate_point(arrays.to_host(
                tuple(M) if isinstance(M, list) else M), name, tol, orthonormalize, remedy),
                first)
        if self.is_product:
            if not isinstance(M, (tuple, list)) or len(M) != len(self.parts):
                raise ParameterError(name, f"expected a tuple of {len(self.parts)} arrays")
            out = tuple(check_point(m, p.shape, f"{name}[{i}]") for i, (m, p) in
                        enumerate(zip(M, self.parts)))
            if orthonormalize:
                out = tuple(p.nearest(m, f"{name}[{i}]")
                            for i, (p, m) in enumerate(zip(self.parts, out)))
        else:
            out = check_point(M, self.parts[0].shape, name)
            if orthonormalize:
                out = self.parts[0].nearest(out, name)
        err = self.feasibility(out)
        if err > tol:
            raise ParameterError(name,
                f"columns are not orthonormal (‖MᵀM − I‖ = {err:.2e}); {remedy}"
            )
        return out
