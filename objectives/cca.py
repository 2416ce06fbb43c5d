"""Canonical correlations analysis, traditional and orthogonal (survey §3.1.4, Eq. 7–10).

Rows of ``Xa`` (n × d_a) and ``Xb`` (n × d_b) are paired samples.  With per-feature centering
and the divisor n − 1 (any common divisor cancels in every formula below),

    Σ_a = X̃_aᵀX̃_a/(n−1),   Σ_b = X̃_bᵀX̃_b/(n−1),   Σ_ab = X̃_aᵀX̃_b/(n−1),

optionally shrunk, Σ ← (1 − s) Σ + s · tr(Σ)/d · I with s the ``shrinkage`` (Σ_ab is left as
it is).  M = (M_a, M_b) lies on Stiefel(d_a, r) × Stiefel(d_b, r).

**Traditional CCA** (Eq. 8–9).  With the whitened cross-covariance K = Σ_a^{-1/2} Σ_ab Σ_b^{-1/2},

* cost      f(M) = −tr(M_aᵀ K M_b)
* gradient  ∇_a f = −K M_b,  ∇_b f = −Kᵀ M_a;  Hessian-vector product (−K V_b, −Kᵀ V_a)
* optimum   M_a, M_b = the top-r left and right singular vectors of K (von Neumann's trace
  inequality); −f is then the sum of the r largest canonical correlations
* mapping   the NON-orthogonal P_a = Σ_a^{-1/2} M_a (d_a × r; the survey's P_a is its
  transpose): Y_a = (X_a − mean_a) Σ_a^{-1/2} M_a, and similarly for b.

**Orthogonal CCA** (Eq. 10), with c = tr(M_aᵀΣ_abM_b), a = tr(M_aᵀΣ_aM_a), b = tr(M_bᵀΣ_bM_b)
and s = √(ab):

* cost      f(M) = −c / s   (minus the correlation ρ(y_a, y_b) of Eq. 7 between the
  orthogonal projections Y_a = X̃_a M_a and Y_b = X̃_b M_b; −1 ≤ f ≤ 1 by Cauchy–Schwarz)
* gradient  ∇_a f = (−Σ_ab M_b + (c/a) Σ_a M_a) / s,   ∇_b f = (−Σ_abᵀ M_a + (c/b) Σ_b M_b) / s
* Hessian-vector product along (V_a, V_b): with δa = 2tr(V_aᵀΣ_aM_a), δb = 2tr(V_bᵀΣ_bM_b),
  δc = tr(V_aᵀΣ_abM_b) + tr(M_aᵀΣ_abV_b) and δs/s = (δa/a + δb/b)/2,

      D∇_a f = −(δs/s) ∇_a f + (−Σ_ab V_b + (δc/a − c δa/a²) Σ_a M_a + (c/a) Σ_a V_a) / s,

  and the same with a ↔ b, Σ_ab ↔ Σ_abᵀ.
* heuristic the traditional CCA mappings P_a, P_b orthonormalized (survey: "a common heuristic
  approach is to orthogonalize P_a and P_b"); see :meth:`OrthogonalCCA.heuristic`.

Both costs are invariant to M → (M_a R, M_b R) with one orthogonal R for both factors, but not
to independent rotations (M_a R_a, M_b R_b): the product of two Grassmann manifolds would need
the latter, so both objectives live on Stiefel × Stiefel (as in the survey's Table 1).  Neither
has a Φ-oracle or a pencil: Φ is defined for a single d × r factor.

For r = 1 the orthogonal cost is the correlation of one pair of projections, which is
invariant to the scale of each direction, so the normalized first canonical pair is optimal and
the heuristic cannot be improved; for r > 1 it generally can (survey Fig. 2).
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterator

import autograd.numpy as anp
import numpy as np
import scipy.linalg

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data.rows import as_dask_array, moments
from ldr.data.statistics import Moments
from ldr.data.validation import (
    check_chunk,
    check_data,
    check_new_data,
    eigh_nonsingular,
    is_lazy,
    shrink,
)
from ldr.manifolds import orthonormalize as orthonormalize_columns

__all__ = ["OrthogonalCCA", "TraditionalCCA"]

_ORTHONORMALIZERS = ("polar", "qr")


def covariances(Xa, Xb) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Σ_a, Σ_b, Σ_ab)`` of per-feature-centered rows, each divided by n − 1."""
    stats, da = paired_moments(Xa, Xb)
    return _covariances(stats, da)


def paired_moments(Xa, Xb):
    """``(moments, d_a)``: :func:`ldr.data.rows.moments` of the stacked rows [X_a | X_b] (ndarrays,
    Dask arrays, an iterator of ``(Xa_chunk, Xb_chunk)`` pairs with ``Xb=None``, or
    :class:`~ldr.data.rows.Moments` of the stacked rows with ``Xb`` the number d_a)."""
    if isinstance(Xa, Moments):
        if isinstance(Xb, bool) or not isinstance(Xb, numbers.Integral) \
                or not 1 <= Xb < Xa.d:
            raise ParameterError("Xb", f"with precomputed moments of [Xa | Xb], pass d_a "
                             f"(1 <= d_a < {Xa.d}), got {Xb!r}")
        return moments(Xa, name="Xa"), int(Xb)
    if isinstance(Xa, Iterator):
        if Xb is not None:
            raise ParameterError(
                "Xb", "with an iterator of chunks, yield (Xa_chunk, Xb_chunk) pairs "
                             "and pass Xb=None")
        first = next(Xa, None)
        if first is None:
            raise ParameterError("Xa", "no rows (the iterator of chunks was empty)")
        da = np.shape(first[0])[1] if np.ndim(first[0]) == 2 else 0

        def stacked():
            for a, b in itertools.chain([first], Xa):
                a, b = check_chunk(a, "Xa", None), check_chunk(b, "Xb", None)
                _check_paired(a, b)
                yield np.hstack([a, b])

        return moments(stacked(), name="Xa"), da
    if is_lazy(Xa) or is_lazy(Xb):
        import dask.array as da_

        Xa, Xb = (as_dask_array(v, k) for v, k in ((Xa, "Xa"), (Xb, "Xb")))
        for v, k in ((Xa, "Xa"), (Xb, "Xb")):
            if v.ndim != 2:
                raise ParameterError(k, f"expected a 2-D array of shape (n_samples, n_features), "
                                 f"got shape {v.shape}")
        _check_paired(Xa, Xb)
        Xb = Xb.rechunk((Xa.chunks[0], -1))
        return moments(da_.concatenate([Xa.rechunk({1: -1}), Xb], axis=1), name="Xa"), \
            Xa.shape[1]
    Xa = check_data(Xa, "Xa")
    Xb = check_data(Xb, "Xb")
    _check_paired(Xa, Xb)
    return moments(np.hstack([Xa, Xb]), name="Xa"), Xa.shape[1]


def _covariances(stats, da: int):
    a = slice(0, da)
    b = slice(da, stats.d)
    Sa = stats.block(a, a)
    Sb = stats.block(b, b)
    return 0.5 * (Sa + Sa.T), 0.5 * (Sb + Sb.T), stats.block(a, b)


def _check_paired(Xa, Xb):
    if Xa.shape[0] != Xb.shape[0]:
        raise ParameterError("Xb",
            f"has {Xb.shape[0]} samples but Xa has {Xa.shape[0]}; CCA needs paired "
            "samples, one row of Xa and one of Xb per observation"
        )


def _check_cca_rank(r, da: int, db: int) -> int:
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise ParameterError("r", f"the subspace dimension must be an integer, got {r!r}")
    r = int(r)
    if r < 1:
        raise ParameterError("r", f"the subspace dimension must be at least 1, got {r}")
    if r > min(da, db):
        raise ParameterError("r",
            f"there are at most min(d_a, d_b) = {min(da, db)} canonical pairs "
            f"(Xa has {da} features, Xb has {db}); got r={r}"
        )
    return r


def _inverse_sqrt(S: np.ndarray, name: str, label: str, n: int) -> np.ndarray:
    """Σ^{-1/2} by a symmetric eigendecomposition, or an error asking for ``shrinkage > 0``."""
    w, Q = eigh_nonsingular(S, name, f"covariance {label}", "CCA needs its inverse square root",
                            n)
    return (Q / np.sqrt(w)) @ Q.T


def _split(M, shape, name: str = "M"):
    if not isinstance(M, (tuple, list)) or len(M) != 2:
        raise ParameterError(name, "expected a tuple (M_a, M_b) of two arrays")
    out = tuple(np.asarray(m, dtype=float) for m in M)
    for i, (m, s) in enumerate(zip(out, shape)):
        if m.shape != tuple(s):
            raise ValueError(f"{name}[{i}]: expected shape {tuple(s)}, got {m.shape}")
    return out


class _CCABase(Objective):
    """Validation, statistics and whitening shared by both CCA objectives."""


    def __init__(self, Xa, Xb, r: int, shrinkage: float = 0.0, *, reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        stats, da = paired_moments(Xa, Xb)
        n = stats.n
        db = stats.d - da
        r = _check_cca_rank(r, da, db)
        self.mean_a_ = stats.mean[:da]
        self.mean_b_ = stats.mean[da:]
        self.n_samples_ = n
        Sa, Sb, Sab = _covariances(stats, da)
        Sa, Sb = shrink(Sa, shrinkage), shrink(Sb, shrinkage)
        self.Sa = Sa
        self.Sb = Sb
        self.Sab = Sab
        self.shrinkage = float(shrinkage)
        # the oracles use the covariances times powers of two (exact) that bring Σ_a and Σ_b
        # to about 1: the correlation and its derivatives do not change, but a·b no longer
        # underflows for data at 1e-90 (nor overflows at 1e90)
        ka, kb = (float(np.round(np.log2(max(float(np.max(np.abs(S))), 1e-300)) / 2))
                  if np.all(np.isfinite(S)) else 0.0 for S in (Sa, Sb))
        self._Sa = Sa * 2.0 ** (-2 * ka)
        self._Sb = Sb * 2.0 ** (-2 * kb)
        self._Sab = Sab * 2.0 ** (-ka - kb)
        self.whiten_a_ = _inverse_sqrt(Sa, "Xa", "Σ_a", n)
        self.whiten_b_ = _inverse_sqrt(Sb, "Xb", "Σ_b", n)
        self.K = self.whiten_a_ @ Sab @ self.whiten_b_
        U, s, Vt = scipy.linalg.svd(self.K, full_matrices=False)
        self._svd = (U[:, :r].copy(), s[:r].copy(), Vt[:r].T.copy())
        self.shape = ((da, r), (db, r))
        self.manifold = ("stiefel", "stiefel")

    def _check_pair(self, X):
        if not isinstance(X, (tuple, list)) or len(X) != 2:
            raise ParameterError("X", "expected a pair (Xa, Xb) of arrays with paired rows")
        Xa = check_new_data(X[0], self.shape[0][0], "Xa")
        Xb = check_new_data(X[1], self.shape[1][0], "Xb")
        _check_paired(Xa, Xb)
        return Xa - self.mean_a_, Xb - self.mean_b_

    def traditional_mappings(self) -> tuple[np.ndarray, np.ndarray]:
        """Traditional CCA's optimal mappings ``(P_a, P_b) = (Σ_a^{-1/2} U_r, Σ_b^{-1/2} V_r)``
        (d × r each, rows convention: the canonical variables are ``X̃_a P_a``, ``X̃_b P_b``)."""
        U, _, V = self._svd
        return self.whiten_a_ @ U, self.whiten_b_ @ V


class TraditionalCCA(_CCABase):
    """Traditional CCA (Hotelling): maximize tr(M_aᵀ Σ_a^{-1/2} Σ_ab Σ_b^{-1/2} M_b) (Eq. 9).

    The cost is the negative.  The optimum is known in closed form (:meth:`closed_form`, the
    top-r singular pairs of the whitened cross-covariance); the low-dimensional mapping whitens
    first, so it is not an orthogonal projection (:meth:`transform`).

    Parameters
    ----------
    Xa : array (n_samples, d_a), Dask array, or an iterator of ``(Xa_chunk, Xb_chunk)``
    Xb : array (n_samples, d_b), rows paired with those of ``Xa`` (None with an iterator)
        Only the covariances are kept, computed in one pass over the stacked rows
        [X_a | X_b] by :func:`ldr.data.rows.moments` (``paired_moments``).
    r : int
        Number of canonical pairs, 1 ≤ r ≤ min(d_a, d_b).
    shrinkage : float in [0, 1]
        s in Σ ← (1 − s) Σ + s · tr(Σ)/d · I of Σ_a and Σ_b (canonical ridge).  A
        singular covariance (n_samples ≤ d, constant or collinear features) raises an error
        that asks for ``shrinkage > 0``.

    Attributes
    ----------
    mean_a_, mean_b_ : per-feature means
    Sa, Sb, Sab : the (shrunk) covariances and the cross-covariance
    whiten_a_, whiten_b_ : Σ_a^{-1/2}, Σ_b^{-1/2}
    K : the whitened cross-covariance Σ_a^{-1/2} Σ_ab Σ_b^{-1/2}

    Examples
    --------
    >>> import numpy as np, ldr
    >>> Xa, Xb = ldr.datasets.make_cca(200, 6, seed=0)
    >>> obj = ldr.objectives.TraditionalCCA(Xa, Xb, 2)
    >>> res = ldr.solve(obj, "trust-region", random_state=0)
    >>> bool(abs(res.cost - obj.cost(obj.closed_form())) < 1e-10)
    True
    >>> Ya, Yb = obj.transform((Xa, Xb), obj.closed_form())
    >>> r0 = np.corrcoef(Ya[:, 0], Yb[:, 0])[0, 1]
    >>> bool(abs(r0 - obj.canonical_correlations()[0]) < 1e-10)
    True

    Default solver: ``"trust-region"`` (a product manifold, no Φ-oracle).
    """

    method = Method("tcca", "traditional (whitened) CCA between the features and the "
                    "class indicators", supervised=True, options={"reg": "shrinkage"},
                    labels="indicators", chunks={})

    def cost(self, M):
        Ma, Mb = M
        return -anp.sum(Ma * (self.K @ Mb))

    def egrad(self, M):
        Ma, Mb = M
        return -(self.K @ Mb), -(self.K.T @ Ma)

    def ehvp(self, M, V):
        Va, Vb = V
        return -(self.K @ Vb), -(self.K.T @ Va)

    def closed_form(self) -> tuple[np.ndarray, np.ndarray]:
        """The optimum: the top-r left and right singular vectors of K."""
        U, _, V = self._svd
        return U.copy(), V.copy()

    def heuristic(self) -> tuple[np.ndarray, np.ndarray]:
        """Same as :meth:`closed_form` (provably optimal for this cost)."""
        return self.closed_form()

    def canonical_correlations(self, M=None) -> np.ndarray:
        """diag(M_aᵀ K M_b): the correlation of each pair of columns of :meth:`transform`
        (when ``shrinkage = 0``); without ``M``, the r largest canonical correlations (singular
        values of K)."""
        if M is None:
            return self._svd[1].copy()
        Ma, Mb = _split(M, self.shape)
        return np.sum(Ma * (self.K @ Mb), axis=0)

    def mappings(self, M) -> tuple[np.ndarray, np.ndarray]:
        """The linear mappings ``(Σ_a^{-1/2} M_a, Σ_b^{-1/2} M_b)`` (d × r each)."""
        Ma, Mb = _split(M, self.shape)
        return self.whiten_a_ @ Ma, self.whiten_b_ @ Mb

    def linear_map(self, M):
        """One map per view: x_a ↦ (x_a − μ_a) Σ_a^{-1/2} M_a, x_b likewise."""
        Pa, Pb = self.mappings(M)
        return (self.mean_a_, Pa), (self.mean_b_, Pb)

    def transform(self, X, M):
        """``(Y_a, Y_b) = ((X_a − mean_a) Σ_a^{-1/2} M_a, (X_b − mean_b) Σ_b^{-1/2} M_b)``
        for a pair ``X = (X_a, X_b)``."""
        Xa, Xb = self._check_pair(X)
        Pa, Pb = self.mappings(M)
        return Xa @ Pa, Xb @ Pb


class OrthogonalCCA(_CCABase):
    """Orthogonal CCA: maximize the correlation between orthogonal projections (Eq. 10).

    Cost −tr(M_aᵀΣ_abM_b) / √(tr(M_aᵀΣ_aM_a) tr(M_bᵀΣ_bM_b)) over Stiefel × Stiefel; no
    matrix decomposition solves it, and the orthonormalized traditional CCA mappings
    (:meth:`heuristic`) are generally suboptimal for r > 1.

    Parameters
    ----------
    Xa : array (n_samples, d_a), Dask array, or an iterator of ``(Xa_chunk, Xb_chunk)``
    Xb : array (n_samples, d_b), rows paired with those of ``Xa`` (None with an iterator)
        Only the covariances are kept, computed in one pass over the stacked rows
        [X_a | X_b] by :func:`ldr.data.rows.moments` (``paired_moments``).
    r : int
        Subspace dimension, 1 ≤ r ≤ min(d_a, d_b).
    shrinkage : float in [0, 1]
        s in Σ ← (1 − s) Σ + s · tr(Σ)/d · I of Σ_a and Σ_b, used by the cost and the
        heuristic.  The heuristic whitens, so a singular covariance raises an error that asks
        for ``shrinkage > 0``.

    Attributes
    ----------
    mean_a_, mean_b_ : per-feature means
    Sa, Sb, Sab : the (shrunk) covariances and the cross-covariance
    whiten_a_, whiten_b_, K : as in :class:`TraditionalCCA` (used by the heuristic)

    Examples
    --------
    >>> import ldr
    >>> Xa, Xb = ldr.datasets.make_cca(300, 8, seed=1)
    >>> obj = ldr.objectives.OrthogonalCCA(Xa, Xb, 3)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.correlation(res.M) > obj.correlation(obj.heuristic()))
    True

    Default solver: ``"trust-region"`` (a product manifold, no Φ-oracle).
    """

    method = Method("cca", "orthogonal CCA between the features and the class indicators, "
                    "on Stiefel × Stiefel", supervised=True, options={"reg": "shrinkage"},
                    labels="indicators", chunks={})

    def _parts(self, Ma, Mb):
        """Products and traces at M, cached for the Hessian-vector products at one point."""
        cached = self.__dict__.get("_cache")
        if cached is not None and np.array_equal(cached[0], Ma) and np.array_equal(cached[1], Mb):
            return cached[2]
        SaMa = self._Sa @ Ma
        SbMb = self._Sb @ Mb
        SabMb = self._Sab @ Mb
        SbaMa = self._Sab.T @ Ma
        a = np.vdot(Ma, SaMa)
        b = np.vdot(Mb, SbMb)
        c = np.vdot(Ma, SabMb)
        s = np.sqrt(a * b)
        Ga = (-SabMb + (c / a) * SaMa) / s
        Gb = (-SbaMa + (c / b) * SbMb) / s
        parts = (SaMa, SbMb, SabMb, SbaMa, a, b, c, s, Ga, Gb)
        self._cache = (Ma.copy(), Mb.copy(), parts)
        return parts

    def cost(self, M):
        Ma, Mb = M
        a = anp.sum(Ma * (self._Sa @ Ma))
        b = anp.sum(Mb * (self._Sb @ Mb))
        return -anp.sum(Ma * (self._Sab @ Mb)) / anp.sqrt(a * b)

    def egrad(self, M):
        Ga, Gb = self._parts(*M)[-2:]
        return Ga.copy(), Gb.copy()

    def ehvp(self, M, V):
        Va, Vb = V
        SaMa, SbMb, SabMb, SbaMa, a, b, c, s, Ga, Gb = self._parts(*M)
        da = 2.0 * np.vdot(Va, SaMa)
        db = 2.0 * np.vdot(Vb, SbMb)
        dc = np.vdot(Va, SabMb) + np.vdot(Vb, SbaMa)
        ds_s = 0.5 * (da / a + db / b)
        Ha = -ds_s * Ga + (-(self._Sab @ Vb) + (dc / a - c * da / a**2) * SaMa
                           + (c / a) * (self._Sa @ Va)) / s
        Hb = -ds_s * Gb + (-(self._Sab.T @ Va) + (dc / b - c * db / b**2) * SbMb
                           + (c / b) * (self._Sb @ Vb)) / s
        return Ha, Hb

    def horizontal(self, M, V):
        """``V`` less its part along the orbit M → (M_aR, M_bR), R ∈ O(r), which leaves the
        cost unchanged: the vertical vectors at M are (M_aΩ, M_bΩ), Ω skew, and the part of
        V along them has Ω = skew(M_aᵀV_a + M_bᵀV_b)/2 (each M orthonormal)."""
        Ma, Mb = M
        Va, Vb = V
        A = Ma.T @ Va + Mb.T @ Vb
        Om = 0.25 * (A - A.T)
        return Va - Ma @ Om, Vb - Mb @ Om

    def correlation(self, M) -> float:
        """ρ(y_a, y_b) of Eq. 7 for the orthogonal projections: −cost(M), in [−1, 1]."""
        Ma, Mb = _split(M, self.shape)
        return float(-self.cost((Ma, Mb)))

    def heuristic(self, orthonormalize: str = "polar") -> tuple[np.ndarray, np.ndarray]:
        """Traditional CCA's mappings (P_a, P_b), orthonormalized: the survey's heuristic.

        ``orthonormalize="polar"`` (default) takes the orthogonal polar factor of each
        mapping (the nearest orthonormal matrix, as the survey's code does); ``"qr"`` keeps
        the first canonical direction and orthogonalizes the others against it
        (Gram–Schmidt).  Both keep the pairing of column k of P_a with column k of P_b
        (the polar factor is equivariant under column sign flips and rotations), and then the
        sign of each column of M_b is chosen to make its term of tr(M_aᵀΣ_abM_b)
        non-negative, which maximizes the correlation for that pairing.  The polar factor is
        the default because it is the nearest orthonormal matrix to each mapping, where QR
        favours the first direction.  For r = 1 both give the normalized first canonical
        pair, which is optimal.
        """
        if orthonormalize not in _ORTHONORMALIZERS:
            raise ParameterError("orthonormalize",
                f"expected one of {_ORTHONORMALIZERS}, got {orthonormalize!r}")
        Pa, Pb = self.traditional_mappings()
        if orthonormalize == "polar":
            Ma = scipy.linalg.polar(Pa)[0]
            Mb = scipy.linalg.polar(Pb)[0]
        else:
            Ma = orthonormalize_columns(Pa)
            Mb = orthonormalize_columns(Pb)
        signs = np.sign(np.sum(Ma * (self.Sab @ Mb), axis=0))
        signs[signs == 0] = 1.0
        return Ma, Mb * signs

    def cross_start(self) -> tuple[np.ndarray, np.ndarray]:
        """The top-r singular vector pairs of Σ_ab: ``(U_r, V_r)`` with Σ_ab = U S Vᵀ.

        They maximize the numerator tr(M_aᵀΣ_abM_b) over Stiefel × Stiefel (von Neumann's
        trace inequality).  When a view's factor is square (r = d_a, say), M_a is orthogonal
        and a = tr(Σ_a) does not depend on it; when both are (r = d_a = d_b), neither
        denominator term does, so this pair is the global optimum (an orthogonal Procrustes
        problem, −f = Σ s_i / √(tr Σ_a tr Σ_b)), which no path from :meth:`heuristic` need
        reach: the product of two O(r) has components that a continuous path cannot leave.
        With one square factor it is the start the estimator uses.
        """
        r = self.shape[0][1]
        U, _, Vt = scipy.linalg.svd(self.Sab, full_matrices=False)
        return U[:, :r].copy(), Vt[:r].T.copy()

    def linear_map(self, M):
        """One map per view: x_a ↦ (x_a − μ_a) M_a, x_b likewise."""
        Ma, Mb = _split(M, self.shape)
        return (self.mean_a_, Ma), (self.mean_b_, Mb)

    def transform(self, X, M):
        """``(Y_a, Y_b) = ((X_a − mean_a) M_a, (X_b − mean_b) M_b)`` for ``X = (X_a, X_b)``."""
        Xa, Xb = self._check_pair(X)
        Ma, Mb = _split(M, self.shape)
        return Xa @ Ma, Xb @ Mb
