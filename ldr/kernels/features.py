"""Low-rank approximations of the Gaussian kernel on projected data Z = XW, for HSIC at large n.

K_XW ≈ C A Cᵀ with C (n × m′) features of the rows of Z and A (m′ × m′) or the identity:

* **random Fourier features** (Rahimi & Recht): exp(−‖z − z′‖²/2σ²) = E_ω[cos(ωᵀ(z − z′))]
  for ω ~ N(0, σ⁻² I_q), so C = [cos(ZΩ), sin(ZΩ)]/√m (m′ = 2m), A = I.  Ω = WᵀΩ_d with
  Ω_d ~ N(0, σ⁻² I_d) drawn once from the seed: for orthonormal W, WᵀΩ_d ~ N(0, σ⁻² I_q),
  and ZΩ = X WWᵀ Ω_d depends on W only through its span (the approximation is a function on
  the Grassmannian, as the exact cost is);
* **Nyström** (Williams & Seeger): m landmark rows L drawn once from the seed, K ≈
  K(Z, Z_L) (K_LL + εI)⁻¹ K(Z_L, Z) with ε = 1e-6 (k(z, z) = 1), which keeps the
  approximation a smooth function of W (a pseudo-inverse's cutoff at ε's scale would jump as
  W moves and stall ISM).  With K_LL = VΛVᵀ the features are C = K(Z, Z_L) V_ρ (Λ_ρ + εI)^{-1/2},
  A = I, over the ρ eigenpairs with λ above 1e-12 of the largest: the rest, at K_LL's rounding,
  change the sums below no more than the inverse's own rounding does, and on rows of a few
  dimensions ρ is a few dozen, not m, which makes the passes below that much cheaper.

The error knob is m (``n_features``): RFF's entrywise error is O(1/√m); Nyström's vanishes
as the landmarks cover the data (m = n gives the exact kernel).  Features are computed by
row blocks, so memory is O(b·m′ + m′·(k·d + m′)) beyond the data.  The blocks are read in the
rows' namespace (a PyTorch tensor's on its device: the features, the passes' products and
per-group sums there); the m×m eigendecomposition and the passes' m′×k×d sums are combined on
the host.  NumPy's random Fourier features are written in place (``out=``).

For Γ = E M Eᵀ (E n×k: Γ's factor, or the class indicator when Γ is constant per class pair)
the Φ-oracle of the Gaussian HSIC cost, Φ = (1/σ²) Xᵀ L_{Γ⊙K} X (:mod:`ldr.kernels`), with
K ≈ CACᵀ needs, per column t of E, P_t = Cᵀ(E_t ⊙ X) and u_t = Cᵀ E_t:

* Xᵀ (Γ ⊙ K) X ≈ Σ_ab M_ab P_aᵀ A P_b
* degrees (Γ ⊙ K)1 ≈ rowsum(E ⊙ (C A U Mᵀ)),  U = [u_1 … u_k]
* Σ_ij Γ_ij K_ij ≈ Σ_ab M_ab u_aᵀ A u_b

two passes over the rows, O(n·m′·(q + d)) for class labels (O(n·m′·(q + k·d)) in general),
never an n×n array.  Columns of E that are class scores beside dense ones (SemiSupervisedHSIC's
Γ) are summed per class (:func:`grouped_columns`): O(n·m′·d) for all of them together.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import take_rows
from ldr.kernels.groups import code_groups, value_codes

APPROXIMATIONS = ("rff", "nystroem")
#: ``approximation="auto"``: the exact kernel up to this many rows, Nyström features beyond —
#: the size up to which the clustering estimators' U-step is exact too
#: (:data:`ldr.estimators.spectral.DENSE_MAX`); an exact Φ costs O(n²·(d + q)), an
#: approximate one O(n·m·(q + d)) with m = 512 by default
EXACT_MAX_SAMPLES = 4000


def check_approximation(approximation, n_features) -> None:
    """Validate ``approximation`` ("auto", None, "rff" or "nystroem") and ``n_features``
    (ValueError naming the argument)."""
    if approximation is not None and approximation != "auto" \
            and approximation not in APPROXIMATIONS:
        raise ParameterError("approximation", f"expected 'auto', None, 'rff' or 'nystroem', "
                             f"got {approximation!r}")
    if not (isinstance(n_features, (int, np.integer)) and not isinstance(n_features, bool)
            and n_features >= 1):
        raise ParameterError("n_features", f"must be a positive integer, got {n_features!r}")


def resolve_approximation(approximation, n_samples: int, possible: bool) -> str | None:
    """The approximation a fit on ``n_samples`` rows uses: None (the exact kernel), "rff" or
    "nystroem".  "auto" is "nystroem" past :data:`EXACT_MAX_SAMPLES` rows where an
    approximation is ``possible`` (a Gaussian kernel, in-process block sums), else None."""
    if isinstance(approximation, str) and approximation == "auto":
        return "nystroem" if possible and n_samples > EXACT_MAX_SAMPLES else None
    return approximation


def describe_approximation(approximation: str | None, n_features: int) -> str | None:
    """None for the exact kernel; else a sentence naming the approximation of K_XW."""
    if approximation is None:
        return None
    if approximation == "rff":
        return (f"the Gaussian kernel on XW approximated by {n_features} seeded random "
                "Fourier features (Φ in O(n·m·(d + q)))")
    return (f"the Gaussian kernel on XW approximated by Nyström features on {n_features} "
            "seeded landmark rows (Φ in O(n·m·(d + q)))")


def gaussian_cross(A: np.ndarray, B: np.ndarray, s2: float) -> np.ndarray:
    """The Gaussian kernel between the rows of A and of B, exp(−‖a_i − b_j‖²/s2) (s2 = 2σ²),
    from one product of the rows extended by two columns,

        −‖a − b‖²/s2 = [2a/s2, −‖a‖²/s2, 1] · [b, 1, −‖b‖²/s2],

    clipped at 0 and exponentiated, in the rows' namespace — in place for NumPy: one array of
    the result's size beside the two extended row blocks (the Nyström features and the Nyström
    U-step's cross kernel)."""
    xp = arrays.namespace(A)
    where = arrays.device(A)
    Ae = xp.concat([A * (2.0 / s2), xp.sum(A * A, axis=1)[:, None] * (-1.0 / s2),
                    xp.ones((A.shape[0], 1), dtype=A.dtype, device=where)], axis=1)
    Be = xp.concat([B, xp.ones((B.shape[0], 1), dtype=B.dtype, device=where),
                    xp.sum(B * B, axis=1)[:, None] * (-1.0 / s2)], axis=1)
    return arrays.exp_inplace(arrays.minimum_inplace(Ae @ Be.T, 0.0))


class RandomFourier:
    """Random Fourier features of the Gaussian kernel exp(−‖z − z′‖²/2σ²) on z = Wᵀx."""

    def __init__(self, sigma: float, n_features: int, d: int, seed):
        rng = np.random.default_rng(seed)
        self.sigma = float(sigma)
        self.m = int(n_features)
        self.omega = rng.standard_normal((d, self.m)) / self.sigma     # Ω_d

    def at(self, W: np.ndarray):
        """``(features, A)`` at W (in the rows' namespace): ``features(rows, right=None)``
        maps a block of rows (b × d) to their features C (b × 2m), or C·right; A = None (the
        identity)."""
        return FourierMap(W, W.T @ arrays.like(self.omega, W), 1.0 / math.sqrt(self.m)), None


class FourierMap:
    """A block of rows' random Fourier features at W (:meth:`RandomFourier.at`): picklable,
    so that the row blocks of a Dask array are mapped by tasks."""

    def __init__(self, W: np.ndarray, omega: np.ndarray, scale: float):
        self.W = W
        self.omega = omega                                             # WᵀΩ_d ~ N(0, σ⁻²I)
        self.scale = scale

    def __call__(self, rows: np.ndarray, right=None) -> np.ndarray:
        arg = (rows @ self.W) @ self.omega
        if not arrays.numpy_fast_path(arg):
            xp = arrays.namespace(arg)
            C = xp.concat([xp.cos(arg), xp.sin(arg)], axis=1) * self.scale
            return C if right is None else C @ right
        # benchmark: benchmarks/bench_hsic_scale.py --sections approx
        m = self.omega.shape[1]
        C = np.empty((arg.shape[0], 2 * m))
        np.cos(arg, out=C[:, :m])
        np.sin(arg, out=C[:, m:])
        C *= self.scale
        return C if right is None else C @ right


class Nystroem:
    """Nyström approximation of the Gaussian kernel on z = Wᵀx with m seeded landmark rows.

    ``rows``: the (standardized) rows, an array (of any namespace) or a row source with
    ``shape`` and ``take(indices)`` (:class:`ldr.objectives.chunked_rows.ChunkedRows`); only
    the m landmark rows are kept (on the rows' device)."""

    def __init__(self, sigma: float, n_features: int, rows, seed):
        rng = np.random.default_rng(seed)
        self.sigma = float(sigma)
        n = rows.shape[0]
        m = min(int(n_features), n)
        self.landmarks = np.sort(rng.choice(n, m, replace=False))
        self.landmark_rows = rows.take(self.landmarks, keep=True) if hasattr(rows, "map") \
            else take_rows(rows, self.landmarks)
        self.jitter = 1e-6

    def at(self, W: np.ndarray):
        """``(features, None)`` at W: ``features(rows, right=None)`` maps a block of rows to
        C = K(Z, Z_L) V_ρ (Λ_ρ + εI)^{-1/2} (module docstring), so K ≈ CCᵀ; with ``right``
        (ρ×k) the product K(Z_rows, Z_L)·(V_ρ(Λ_ρ + εI)^{-1/2}·right), O(b·m·k) instead of
        O(b·m·ρ).  W in the rows' namespace; the m×m eigendecomposition is SciPy's on the
        host."""
        s2 = 2.0 * self.sigma**2
        ZL = self.landmark_rows @ W
        lam, V = scipy.linalg.eigh(arrays.host_float64(gaussian_cross(ZL, ZL, s2)))
        keep = lam > 1e-12 * max(lam[-1], 1e-300)
        B = arrays.like(V[:, keep] / np.sqrt(lam[keep] + self.jitter), ZL)
        return NystroemMap(W, ZL, B, s2), None


class NystroemMap:
    """A block of rows' Nyström features at W (:meth:`Nystroem.at`): picklable, so that the
    row blocks of a Dask array are mapped by tasks."""

    def __init__(self, W: np.ndarray, ZL: np.ndarray, B: np.ndarray, s2: float):
        self.W = W
        self.ZL = ZL
        self.B = B
        self.s2 = s2

    def __call__(self, rows: np.ndarray, right=None) -> np.ndarray:
        K = gaussian_cross(rows @ self.W, self.ZL, self.s2)
        return K @ self.B if right is None else K @ (self.B @ right)


def make_features(approximation: str, sigma: float, n_features: int, rows, seed):
    """The seeded feature map of ``approximation`` on ``rows`` (an array or a row source with
    ``shape`` and ``take``)."""
    if approximation == "rff":
        return RandomFourier(sigma, n_features, rows.shape[1], seed)
    return Nystroem(sigma, n_features, rows, seed)


def grouped_columns(F: np.ndarray, max_groups: int = 256):
    """``(dense, grouped, gid, R)`` when some columns of Γ's factor F take few distinct rows
    (class scores beside a dense embedding, as SemiSupervisedHSIC's [D^{-1/2}U, HŶ]): the
    columns ``grouped`` equal E R, E the indicator of the ``gid`` groups (at most
    ``max_groups``, and at most n/32) and R their distinct rows; ``dense`` the other columns.
    ``None`` when no column qualifies or all do (then Γ is a class Γ: ``Tiles.groups``).
    The groups come from the columns' value codes, combined into one integer key a row
    (:mod:`ldr.kernels.groups`): O(n) a column, no sort of the rows."""
    n, k = F.shape
    cap = min(max_groups, n // 32)
    few = []
    coded = []
    for j in range(k):
        codes = value_codes(F[:, j], cap)
        if codes is not None:
            few.append(j)
            coded.append(codes)
    if not few or len(few) == k:
        return None
    grouped = code_groups(coded, n, cap)
    if grouped is None:
        return None
    gid, first = grouped
    dense = np.array([j for j in range(k) if j not in few])
    return dense, np.array(few), gid, F[first][:, few]


def approximate_sums(rows, W, feats, factor, groups, split=None, cache_bytes: float = 0,
                     row_weight=None):
    """``(total, XDX, XGKX)`` ≈ (Σ Γ⊙K, Xᵀ diag((Γ⊙K)1) X, Xᵀ (Γ⊙K) X) with K ≈ CACᵀ.

    ``rows`` is a row source (:class:`ldr.objectives.chunked_rows.RowBlocks` for an array,
    :class:`~ldr.objectives.chunked_rows.ChunkedRows` for a Dask array or memmap): each pass
    maps its blocks of rows to partial sums, added here.  ``factor`` = (F, s) is Γ's factor;
    ``groups`` = (gid, G) when Γ is G between the classes ``gid`` (then E is the class
    indicator, M = G).  ``split`` (:func:`grouped_columns`) when some columns of F are E R
    with E a group indicator: their P_t = Σ_g R_gt C_gᵀ X_g and u_t = Σ_g R_gt C_gᵀ1 from
    per-group sums, O(n·m′·d) for all of them instead of O(n·m′·d) each (the same sums in
    another order).  The feature blocks of the first pass are kept for the second (the
    degrees) up to ``cache_bytes`` when the blocks are computed in this process; the rest are
    recomputed.  ``row_weight`` w (n,) for Γ = diag(w) F diag(s) Fᵀ diag(w): the features
    are scaled instead, C̃ = diag(w) C, as Γ ⊙ CCᵀ = (F diag(s) Fᵀ) ⊙ C̃C̃ᵀ — F's class
    columns then stay few-valued for ``split``."""
    d = rows.shape[1]
    features, A = feats.at(W)
    if groups is not None:
        gid, M = groups
        k = M.shape[0]
        Fd = None
        dense = None
        split_gid = None
        n_split = 0
    else:
        F, s = factor
        M = np.diag(s)
        k = F.shape[1]
        dense = np.arange(k) if split is None else split[0]
        Fd = None
        if len(dense) == k:
            Fd = F
        elif len(dense):
            xp = arrays.namespace(F)
            Fd = xp.take(F, xp.asarray(dense, device=arrays.device(F)), axis=1)
        gid = None
        split_gid = None if split is None else split[2]
        n_split = 0 if split is None else split[3].shape[0]
    cache = {} if cache_bytes > 0 and rows.in_process else None
    Pd, Ud, Pg, Ug = rows.map(first_pass, features, k, n_split, cache, cache_bytes,
                              sliced=(Fd, gid, split_gid, row_weight), how=("sum",) * 4)
    width = next(a.shape[0] for a in (Pd, Pg) if a is not None)
    P = np.zeros((width, k, d))
    U = np.zeros((width, k))
    if Pd is not None:                                    # the dense columns (or the classes)
        P[:, dense if groups is None else slice(None), :] = arrays.host_float64(Pd)
        U[:, dense if groups is None else slice(None)] = arrays.host_float64(Ud)
    if split is not None:                                 # the grouped columns: E R
        _, grouped, _, R = split
        P[:, grouped, :] = np.einsum("mgd,gt->mtd", arrays.host_float64(Pg), R)
        U[:, grouped] = arrays.host_float64(Ug) @ R
    AU = U if A is None else A @ U                         # m′ × k
    AUM = AU @ M.T
    total = float(np.einsum("ta,ta->", U, AUM))
    AP = P if A is None else (A @ P.reshape(P.shape[0], -1)).reshape(P.shape)
    # Σ_ab M_ab P_aᵀ A P_b
    XGKX = np.einsum("iad,ab,ibe->de", P, M, AP, optimize=True)
    XDX = rows.map(second_pass, features, arrays.like(AUM, features.W), cache,
                   sliced=(None if groups is not None else F, gid, row_weight))
    return total, arrays.host_float64(XDX), 0.5 * (XGKX + XGKX.T)



def first_pass(Xr, start, features, k, n_split, cache, cache_bytes, Fr, gid, split_gid,
               weight):
    """A block of rows' part of :func:`approximate_sums`' first pass, in the rows' namespace:
    ``(P, U, Pg, Ug)``, P_t = Cᵀ(E_t ⊙ X) and u_t = Cᵀ E_t over the block for the k classes
    (``gid``) or the columns ``Fr`` (the dense ones: None without them), Pg, Ug the grouped
    columns' per-group sums (None without them); its features kept in ``cache`` while they
    fit ``cache_bytes``."""
    C = features(Xr)
    if weight is not None:
        C *= weight[:, None]
    if cache is not None and C.shape[0] * C.shape[1] * arrays.itemsize(C) * (len(cache) + 1) \
            <= cache_bytes:
        cache[start] = C
    if gid is not None:
        P, U = group_sums(C, Xr, gid, k)
        return P, U, None, None
    P = U = Pg = Ug = None
    if Fr is not None:
        P, U = column_sums(C, Xr, Fr)
    if split_gid is not None:
        Pg, Ug = group_sums(C, Xr, split_gid, n_split)
    return P, U, Pg, Ug


def column_sums(C, Xr, Fr) -> tuple:
    """(P, U): P_t = Cᵀ diag(F_t) X (m′ × k × d) and U = CᵀF over a block of rows, a few
    columns t at a time, so that the b × (columns · d) temporary is no larger than the block
    of features C."""
    xp = arrays.namespace(C)
    b, d = Xr.shape
    step = max(1, C.shape[1] // d)
    parts = []
    for j in range(0, Fr.shape[1], step):
        Fj = Fr[:, j:min(j + step, Fr.shape[1])]
        c = Fj.shape[1]
        parts.append(xp.reshape(C.T @ xp.reshape(Fj[:, :, None] * Xr[:, None, :], (b, c * d)),
                                (-1, c, d)))
    return (parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)), C.T @ Fr


def second_pass(Xr, start, features, AUM, cache, Fr, gid, weight):
    """A block of rows' part of :func:`approximate_sums`' second pass: Xᵀ diag(deg) X over
    the block, deg = rowsum(E ⊙ (C A U Mᵀ)) its rows' degrees."""
    C = None if cache is None else cache.pop(start, None)
    if C is None:
        CAUM = features(Xr, AUM)                           # b × k
        if weight is not None:
            CAUM *= weight[:, None]
    else:
        CAUM = C @ AUM
    xp = arrays.namespace(CAUM)
    if gid is not None:
        deg = xp.take_along_axis(CAUM, xp.astype(gid, xp.int64)[:, None], axis=1)[:, 0]
    else:
        deg = xp.sum(Fr * CAUM, axis=1)
    return Xr.T @ (deg[:, None] * Xr)


def group_sums(C, Xr, g, G: int) -> tuple:
    """(P, U): P[:, a, :] = C_aᵀ X_a (m′ × G × d) and U[:, a] = C_aᵀ1 over the rows of each
    group a < G in g (a block of rows, any namespace): the rows sorted by group (stably),
    then one product per group's range."""
    xp = arrays.namespace(C)
    order = xp.argsort(g, stable=True)
    gs = xp.take(g, order)
    bounds = np.asarray(arrays.to_host(xp.searchsorted(
        gs, xp.arange(G + 1, dtype=gs.dtype, device=arrays.device(gs)))), dtype=np.intp)
    Cs = xp.take(C, order, axis=0)
    Xs = xp.take(Xr, order, axis=0)
    P = xp.stack([Cs[int(lo):int(hi), :].T @ Xs[int(lo):int(hi), :]
                  for lo, hi in zip(bounds[:-1], bounds[1:])], axis=1)
    U = xp.stack([xp.sum(Cs[int(lo):int(hi), :], axis=0)
                  for lo, hi in zip(bounds[:-1], bounds[1:])], axis=1)
    return P, U
