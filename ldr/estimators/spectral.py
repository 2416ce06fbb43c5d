"""Spectral factors of a kernel matrix on rows: the clustering HSIC estimators' U-step (the
spectral embedding of the kernel on the projected rows, exact or from Nyström landmarks) and a
low-rank Γ for a Gaussian kernel on continuous targets.

**Exact** (``spectral="exact"``): the top-k eigenvectors U of D^{-1/2} K D^{-1/2} (centered,
H·H, for KDAC), D = diag(K1) — O(n²) memory.  Above ``LANCZOS_MIN`` rows by ARPACK's Lanczos
(:func:`scipy.sparse.linalg.eigsh`, seeded start vector): a kernel's leading eigenvalues stand
well clear of the bulk, so a few dozen products with the n×n matrix, O(n²) each (BLAS's
symmetric ``dsymv``, which reads one triangle of K), give the same subspace to rounding,
against the dense eigendecomposition's O(n³); at or below ``LANCZOS_MIN`` rows, and should
ARPACK not converge, the dense one.

**Nyström** (``spectral="nystroem"``; Fowlkes, Belongie, Chung & Malik 2004): m landmark rows
L (seeded k-means++), K ≈ C K_LL⁺ Cᵀ = ΨΨᵀ with C = K(Z, Z_L) and Ψ = C V Λ^{-1/2} (K_LL = VΛVᵀ, the
eigenvalues below 1e-12·λ_max dropped).  Then

    deg ≈ Ψ (Ψᵀ1),   Φ = D^{-1/2} Ψ,   D^{-1/2} K D^{-1/2} ≈ ΦΦᵀ          (N1)

and its top-k eigenvectors are U = Φ Q Σ^{-1}, Q, Σ² the top-k eigenpairs of the m×m ΦᵀΦ
(HΦ and ΦᵀΦ − n φ̄φ̄ᵀ when centered).  Nothing n×m is stored: C is formed a block of rows
at a time.  Ψ (n×ρ, ρ ≤ m the eigenpairs kept: a few dozen for rows of a few dimensions) is
kept when it fits ``memory_budget``, so that C is formed once; else three passes over the
row blocks recompute it (Ψᵀ1; the degrees with ΦᵀΦ and Φᵀ1; U): memory O(b·m + m² + n·k),
time O(n·m·(q + ρ)) a pass.  The error knob is m; m = n gives the exact embedding to
rounding.

``"auto"``: exact up to ``DENSE_MAX`` rows (128 MB for K), Nyström beyond.

Rows of another namespace than NumPy (a PyTorch tensor, on a GPU or not) stay on their
device: the exact route forms K there and takes its eigenvectors with that library's
``eigh`` (ARPACK is NumPy code); the Nyström route seeds its landmarks there
(:func:`ldr.estimators.kmeans.plusplus`, scikit-learn's draws) and runs its passes there,
only the m×m and ρ×ρ eigendecompositions on the host.

References
----------
Ng, Jordan & Weiss (2001), On spectral clustering: analysis and an algorithm, NIPS 14.
Fowlkes, Belongie, Chung & Malik (2004), Spectral grouping using the Nyström method,
IEEE TPAMI 26(2).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse.linalg
from scipy.linalg.blas import dsymv

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import take_rows
from ldr.estimators.kmeans import kmeans, plusplus
from ldr.kernels import Gaussian
from ldr.kernels.family import beta
from ldr.kernels.features import gaussian_cross
from ldr.kernels.tiles import DEFAULT_MEMORY_BUDGET
from ldr.objectives.chunked_rows import RowBlocks

#: the values of ``spectral``, how the U-step embeds: "auto" (exact up to :data:`DENSE_MAX`
#: rows, Nyström beyond), "exact" or "nystroem" (module docstring)
SPECTRAL = ("auto", "exact", "nystroem")
#: the exact (dense) U-step up to this many rows; Nyström beyond
DENSE_MAX = 4000
#: rows per block of the Nyström passes
BLOCK = 4096
#: k-means++ landmark seeding on at most this many rows per landmark (a seeded uniform pool):
#: its cost, O(rows·m·log m), then stops growing with n; up to that size every row is the pool
LANDMARK_POOL = 64
#: the exact U-step's dense eigendecomposition up to this many rows, Lanczos (ARPACK) above
LANCZOS_MIN = 200
#: ARPACK's relative residual tolerance for a U-step warm-started from a nearby embedding
WARM_TOL = 1e-10
#: ... and warm-started, Lanczos above this many rows: a start near the answer needs one
#: Lanczos basis, so it overtakes the dense solver at fewer rows than a cold start
WARM_LANCZOS_MIN = 120
#: rows per block of :func:`gram`'s symmetric exp
SYMMETRIC_BLOCK = 128


def check_spectral(spectral) -> str:
    """``spectral`` checked: one of :data:`SPECTRAL` (a ParameterError naming it)."""
    if not (isinstance(spectral, str) and spectral in SPECTRAL):
        raise ParameterError("spectral", f"expected one of {SPECTRAL}, got {spectral!r}")
    return spectral


def spectral_embedding(K: np.ndarray, k: int, center: bool = False, near=None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenvectors U of D^{-1/2} K D^{-1/2} (optionally centered, H·H), and D^{-1/2}.

    ``near``: an n×k basis close to the answer (the last round's U).  Lanczos then starts
    from the sum of its columns (plus 1e-3 of the seeded random start, so that no wanted
    direction is missing) and stops at ARPACK's ``tol`` = ``WARM_TOL``, ‖Lu − θu‖ ≤ tol·θ:
    one Lanczos basis of ARPACK's 20 vectors instead of a restart.

    K of another namespace than NumPy (a PyTorch tensor, on a GPU or not) stays there: L is
    formed and its eigendecomposition is that library's ``linalg.eigh`` (ARPACK is NumPy
    code), ``near`` unused."""
    xp = arrays.namespace(K)
    deg = xp.sum(K, axis=1)
    if bool(xp.any(deg <= 0)):
        raise ValueError("kernel matrix has a non-positive degree; use a positive kernel")
    dm = 1.0 / xp.sqrt(deg)
    n = K.shape[0]
    lanczos_min = LANCZOS_MIN if near is None else WARM_LANCZOS_MIN
    if n > lanczos_min and k < n // 4 and arrays.foreign(K) is None:  # Lanczos: products
        # with L only, L never formed

        Kf = K.T if K.flags.c_contiguous and K.dtype == np.float64 else None

        def product(V):
            V = V.reshape(n, -1)
            if center:
                V = V - V.mean(axis=0)
            if Kf is not None and V.shape[1] == 1:  # one triangle of K: half the reads
                V = dm[:, None] * dsymv(1.0, Kf, dm * V[:, 0])[:, None]
            else:
                V = dm[:, None] * (K @ (dm[:, None] * V))
            return V - V.mean(axis=0) if center else V

        U = lanczos(scipy.sparse.linalg.LinearOperator((n, n), matvec=product,
                                                       matmat=product, dtype=K.dtype), k,
                    near)
        if U is not None:
            return U, dm
    L = K * dm[:, None]
    L *= dm[None, :]
    if center:
        L -= xp.mean(L, axis=0)
        L -= xp.mean(L, axis=1, keepdims=True)
    return top_eigenvectors(L, k), dm


def lanczos(L, k: int, near=None) -> np.ndarray | None:
    """The top-k eigenvectors of the symmetric operator L, largest first, by ARPACK from a
    seeded start vector (warm from ``near``: :func:`spectral_embedding`); None should it
    not converge."""
    v0 = np.random.default_rng(0).standard_normal(L.shape[0])
    tol = 0.0
    if near is not None:
        warm = near.sum(axis=1)
        v0 = warm / np.linalg.norm(warm) + 1e-3 * v0 / np.linalg.norm(v0)
        tol = WARM_TOL
    try:
        w, U = scipy.sparse.linalg.eigsh(L, k=k, which="LA", v0=v0, tol=tol)
    except scipy.sparse.linalg.ArpackNoConvergence:
        return None
    return U[:, np.argsort(w)[::-1]]


def top_eigenvectors(L: np.ndarray, k: int) -> np.ndarray:
    """The eigenvectors of symmetric L for its k largest eigenvalues, largest first: by
    Lanczos (ARPACK, from a seeded start vector) above ``LANCZOS_MIN`` rows, else — and
    should ARPACK not converge — by the dense eigendecomposition; L of another namespace by
    its own ``linalg.eigh``."""
    n = L.shape[0]
    if arrays.foreign(L) is not None:
        xp = arrays.namespace(L)
        U = arrays.eigh(0.5 * (L + L.T))[1]
        return xp.flip(U[:, n - k:], axis=1)
    if n > LANCZOS_MIN and k < n // 4:  # L as it is: symmetric to rounding, which Lanczos
        # (products with L only) does not notice
        U = lanczos(L, k)
        if U is not None:
            return U
    _, U = scipy.linalg.eigh(0.5 * (L + L.T), subset_by_index=[n - k, n - 1])
    return U[:, ::-1]


def gram(kernel, Z: np.ndarray) -> np.ndarray:
    """The n×n kernel matrix of the rows of Z; for a Gaussian kernel (the default) by
    symmetry, a block of rows at a time: K_ij = exp(min(2c z_iᵀz_j − c‖z_i‖² − c‖z_j‖², 0)),
    c = 1/2σ², on the blocks on and above the diagonal only (in cache), mirrored below — the
    exp, most of the cost, on half the entries.  Rows of another namespace (and other
    kernels): the kernel's own ``gram`` there, every entry."""
    terms = kernel.terms()
    if not (len(terms) == 1 and type(terms[0][1]) is Gaussian) or arrays.foreign(Z) is not None:
        return kernel.gram(Z, arrays.eye_like(Z.shape[1], Z))
    weight, gauss = terms[0]
    c = 1.0 / (2.0 * gauss.sigma**2)
    Zs = Z * np.sqrt(2.0 * c)
    a = 0.5 * np.einsum("ij,ij->i", Zs, Zs)
    n = Z.shape[0]
    K = np.empty((n, n))
    for i in range(0, n, SYMMETRIC_BLOCK):
        j = min(i + SYMMETRIC_BLOCK, n)
        block = Zs[i:j] @ Zs[i:].T
        block -= a[i:j, None]
        block -= a[None, i:]
        np.minimum(block, 0.0, out=block)
        np.exp(block, out=block)
        diagonal = block[:, :j - i]
        diagonal += diagonal.T.copy()
        diagonal *= 0.5
        K[i:j, i:] = block
        K[j:, i:j] = block[:, j - i:].T
    if weight != 1.0:
        K *= weight
    return K


def landmark_pool(n: int, m: int, seed) -> tuple:
    """``(rng, pool)``: the seeded generator of :func:`landmarks` and its uniform pool of
    ``LANDMARK_POOL·m`` row indices (sorted), or None when n is at most that."""
    rng = np.random.RandomState(seed_int(seed))
    pool = None
    if n > LANDMARK_POOL * m:
        pool = np.sort(rng.choice(n, LANDMARK_POOL * m, replace=False))
    return rng, pool


def landmarks(Z: np.ndarray, m: int, seed) -> np.ndarray:
    """Indices of m landmark rows by seeded k-means++ seeding (Arthur & Vassilvitskii 2007;
    distinct, sorted): D² sampling covers the tails, where uniform draws leave outlying rows'
    kernel rows badly approximated.  The seeding costs O(n·m·log m); past
    ``LANDMARK_POOL·m`` rows it runs on a seeded uniform pool of that many rows, so that its
    cost stops growing with n (the landmarks then follow D² sampling over the pool)."""
    rng, pool = landmark_pool(Z.shape[0], m, seed)
    idx = seeded_centers(Z if pool is None else Z[pool], m, rng)
    return idx if pool is None else pool[idx]


def seeded_centers(Z: np.ndarray, m: int, rng) -> np.ndarray:
    """The distinct indices (sorted) of k-means++ seeding's m centers among the rows Z (any
    namespace: :func:`ldr.estimators.kmeans.plusplus`)."""
    return np.unique(plusplus(Z, m, rng))


def projected_landmarks(rows, W, m: int, seed) -> np.ndarray:
    """The landmark rows of :func:`landmarks` on Z = XW (W None: Z = X) for a row source
    (:mod:`ldr.objectives.chunked_rows`): only the pool's rows are gathered (on the rows'
    device)."""
    n = rows.shape[0]
    rng, pool = landmark_pool(n, m, seed)
    Z = rows.take(np.arange(n) if pool is None else pool, keep=True)
    if W is not None:
        Z = Z @ W
    return take_rows(Z, seeded_centers(Z, m, rng))


def _cross(kernel, Z: np.ndarray, ZL: np.ndarray) -> np.ndarray:
    """K(rows of Z, rows of ZL) for an ISM-family kernel (a conic combination of terms), in
    the rows' namespace; a Gaussian term by :func:`ldr.kernels.features.gaussian_cross` (for
    NumPy in place, no temporaries)."""
    out = None
    for w, t in kernel.terms():
        if type(t) is Gaussian:
            term = gaussian_cross(Z, ZL, t.s2)
        else:
            term = t.f(beta(t.kind, ZL, Z))
            if arrays.foreign(term) is None:
                term = np.asarray(term, dtype=float)
        if w != 1.0:
            term *= w
        if out is None:
            out = term
        else:
            out += term
    return out


def nystroem_embedding(kernel, Z, k: int, center: bool, m: int, seed,
                       memory_budget: float = DEFAULT_MEMORY_BUDGET, W=None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(U, D^{-1/2}) of (N1) with m seeded landmarks (module docstring) on the rows Z, an
    array or a row source (:mod:`ldr.objectives.chunked_rows`: a Dask array's chunks are
    mapped by tasks), projected by W when given.  Ψ kept when its n×ρ floats fit
    ``memory_budget`` bytes and the blocks are computed in this process, else recomputed in
    each pass.  Rows of another namespace (an array, or the row blocks of one) are read
    on their device; the m×m and ρ×ρ eigendecompositions are SciPy's on the host."""
    rows = Z if hasattr(Z, "map") else RowBlocks(Z, BLOCK)
    n = rows.shape[0]
    m = min(int(m), n)
    if m <= k:
        raise ParameterError("n_kernel_features", f"the Nyström U-step needs more landmarks "
                             f"than clusters: n_kernel_features = {m} <= n_clusters = {k}")
    ZL = projected_landmarks(rows, W, m, seed)
    lam, V = scipy.linalg.eigh(arrays.host_float64(_cross(kernel, ZL, ZL)))
    keep = lam > 1e-12 * max(lam[-1], 1e-300)
    B = arrays.like(V[:, keep] / np.sqrt(lam[keep]), ZL)     # Ψ = C B
    cross = LandmarkCross(kernel, ZL, W)
    cache = {} if rows.in_process and 8.0 * n * B.shape[1] <= memory_budget else None
    # pass 1: Ψᵀ1 = Bᵀ(Cᵀ1) (Ψ's blocks kept in the cache, C not formed again)
    colsum = B.T @ rows.map(cross_colsum, cross, B, cache)
    # pass 2: the degrees Ψ(Ψᵀ1) = C(B Ψᵀ1) block by block, and with them ΦᵀΦ and Φᵀ1 for
    # Φ = D^{-1/2} Ψ (B keeps the ρ ≤ m eigenpairs of K_LL above rounding: a few dozen for
    # rows of a few dimensions, so Ψ's block is b × ρ)
    dm, G, mean, bad = rows.map(degree_sums, cross, B, colsum, B @ colsum, cache,
                                how=("rows", "sum", "sum", "sum"))
    if bad:
        raise ParameterError("n_kernel_features", f"the Nyström approximation gives {bad} "
                             f"sample(s) a non-positive degree; raise n_kernel_features (now "
                             f"{m}) or use spectral='exact'")
    mean = arrays.host_float64(mean) / n
    G = arrays.host_float64(G)
    if center:
        G -= n * np.outer(mean, mean)
    sig2, Q = scipy.linalg.eigh(0.5 * (G + G.T))
    sig2, Q = sig2[::-1][:k], Q[:, ::-1][:, :k]
    if not sig2[-1] > 1e-14 * sig2[0]:
        raise ParameterError("n_kernel_features", f"the Nyström embedding has rank below "
                             f"n_clusters = {k}; raise n_kernel_features (now {m}) or use "
                             "spectral='exact'")
    R = Q / np.sqrt(sig2)
    shift = arrays.like(mean @ R, ZL) if center else 0.0
    R = arrays.like(R, ZL)
    # pass 3: U = ΦR − shift = D^{-1/2} C (BR) − shift
    U = rows.map(embedding_rows, cross, B @ R, R, shift, cache, sliced=(dm,), how="rows")
    return U, dm



class LandmarkCross:
    """K(rows W, Z_L): a block of rows' kernel against the landmarks (W None: the rows
    themselves); picklable, for the tasks of a Dask array's chunks."""

    def __init__(self, kernel, ZL: np.ndarray, W):
        self.kernel = kernel
        self.ZL = ZL
        self.W = W

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        return _cross(self.kernel, rows if self.W is None else rows @ self.W, self.ZL)


def cross_colsum(rows, start, cross, B, cache) -> np.ndarray:
    """A block's Cᵀ1 (:func:`nystroem_embedding`'s pass 1); Ψ = CB kept in ``cache``."""
    C = cross(rows)
    if cache is not None:
        cache[start] = C @ B
    return arrays.namespace(C).sum(C, axis=0)


def degree_sums(rows, start, cross, B, colsum, toward, cache) -> tuple:
    """A block's (D^{-1/2}, ΦᵀΦ, Φᵀ1, count of non-positive degrees), Φ = D^{-1/2}Ψ and the
    degrees Ψ(Ψᵀ1) = C·toward, toward = B Ψᵀ1 (:func:`nystroem_embedding`'s pass 2)."""
    if cache is not None:
        Psi = cache[start]
        deg = Psi @ colsum
    else:
        C = cross(rows)
        deg = C @ toward
        Psi = None
    xp = arrays.namespace(deg)
    bad = int(xp.sum(xp.astype(~(deg > 0), xp.int64)))
    if bad:
        return xp.ones_like(deg), 0.0, 0.0, bad
    dm = 1.0 / xp.sqrt(deg)
    F = dm[:, None] * (Psi if Psi is not None else C @ B)
    return dm, F.T @ F, xp.sum(F, axis=0), 0


def embedding_rows(rows, start, cross, BR, R, shift, cache, dm) -> np.ndarray:
    """A block's rows of U = ΦR − shift = D^{-1/2} C (BR) − shift (pass 3; Ψ R from the
    cache)."""
    if cache is not None:
        return (dm[:, None] * cache.pop(start)) @ R - shift
    return (dm[:, None] * cross(rows)) @ BR - shift


def dense_route(spectral: str, n: int) -> bool:
    """Whether the U-step on n rows is the exact (dense n×n) one."""
    return spectral == "exact" or (spectral == "auto" and n <= DENSE_MAX)


def gaussian_sigma(kernel) -> float | None:
    """σ when ``kernel`` is one Gaussian (weight 1), else None."""
    terms = kernel.terms()
    if len(terms) == 1 and terms[0][0] == 1.0 and type(terms[0][1]) is Gaussian:
        return float(terms[0][1].sigma)
    return None


def kernel_embedding(kernel, Z, k: int, center: bool, spectral: str, m: int,
                     seed, memory_budget: float = DEFAULT_MEMORY_BUDGET, W=None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The U-step on the rows Z (an array, or a row source for the Nyström route), projected
    by W when given: exact or Nyström by ``spectral`` (module docstring)."""
    if dense_route(spectral, Z.shape[0]):
        X = Z.X if hasattr(Z, "map") else Z
        return spectral_embedding(gram(kernel, X if W is None else X @ W), k, center)
    return nystroem_embedding(kernel, Z, k, center, m, seed, memory_budget, W)


def gaussian_gamma(Y: np.ndarray, sigma: float, m: int, seed
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Γ = H K_Y H / n² for the Gaussian kernel on the rows of Y, as a factor (F, s) with
    Γ ≈ F diag(s) Fᵀ: Nyström on m landmarks chosen by seeded k-means++ (K_Y ≈ ΨΨᵀ as in
    (N1)), then the eigenvectors of HΨΨᵀH with eigenvalues above 1e-12 of the largest (the
    factor's rank is that of the kernel on y to rounding: a few dozen for one continuous
    target).  m = n is exact to rounding.  Ψ is formed ``BLOCK`` rows at a time, so that the
    largest arrays are n × rank, never the n × m kernel values."""
    n = Y.shape[0]
    kern = Gaussian(sigma)
    m = min(int(m), n)
    YL = Y[landmarks(Y, m, seed)]
    lam, V = scipy.linalg.eigh(_cross(kern, YL, YL))
    keep = lam > 1e-12 * max(lam[-1], 1e-300)
    B = V[:, keep] / np.sqrt(lam[keep])                      # Ψ = C B
    Psi = np.empty((n, B.shape[1]))
    for i in range(0, n, BLOCK):
        Psi[i:i + BLOCK] = _cross(kern, Y[i:i + BLOCK], YL) @ B
    Psi -= Psi.mean(axis=0)                                  # H Ψ
    Q, R = np.linalg.qr(Psi)
    del Psi
    ev, P = np.linalg.eigh(R @ R.T)
    top = ev > 1e-12 * max(ev[-1], 1e-300)
    return Q @ P[:, top], ev[top] / n**2


def seed_int(seed) -> int:
    """An int seed from a Generator-style seed (None: 0)."""
    if seed is None:
        return 0
    if isinstance(seed, (int, np.integer)):
        return int(seed) % 2**32
    return int(np.random.default_rng(seed).integers(2**32))


def cluster_rows(U: np.ndarray, k: int, seed) -> np.ndarray:
    """k-means on the row-normalized spectral embedding (Ng, Jordan & Weiss), in U's
    namespace (:func:`ldr.estimators.kmeans.kmeans`)."""
    xp = arrays.namespace(U)
    norms = xp.linalg.vector_norm(U, axis=1, keepdims=True)
    V = U / xp.maximum(norms, xp.asarray(1e-300, dtype=U.dtype, device=arrays.device(U)))
    return kmeans(V, k, random_state=seed)
