"""HSIC-based interpretable kernel dimension reduction: the cost −tr(Γ K_XW) (ISM papers, Eq. 1).

With Z = XW, β_ij the kernel's scalar (see :mod:`ldr.kernels`), K = f(β), Ψ = Γ ⊙ f′(β) and
L_Ψ = diag(Ψ1) − Ψ:

* cost       f(W) = −Σ_ij Γ_ij f(β_ij)
* gradient   ∇f(W) = −4 Xᵀ L_Ψ Z   (difference kernels),   −2 Xᵀ Ψ Z   (product kernels)
* Φ-oracle   Φ(W) = −2 Xᵀ L_Ψ X    (difference),            −Xᵀ Ψ X     (product),  ∇f = 2ΦW
* Φ₀         Φ with f′(β) replaced by f′(0) (the second-order Taylor point β → 0)
* Hessian    D∇f(W)[V] = −4 Xᵀ (L_{Ψ′} Z + L_Ψ XV),  Ψ′ = Γ ⊙ f″(β) ⊙ Dβ[V], with
             Dβ_ij[V] = 2 (z_i − z_j)ᵀ(y_i − y_j) (difference) or z_iᵀy_j + y_iᵀz_j (product),
             Y = XV; and −2 Xᵀ(Ψ′Z + ΨY) for product kernels.

Conic combinations of kernels add their terms.  Everything is accumulated over blocks of
rows (``block_size``), so no n×n temporary is larger than block_size×n; given Γ as a
low-rank factor ``(F, s)`` (Γ = F diag(s) Fᵀ, as for H K_Y H with K_Y = YYᵀ), memory is
O(n·block_size) overall.  A Φ costs O(n²(d + r)) flops; nothing of size n²×d² is formed.
The cost depends on W only through WWᵀ, so the manifold is Grassmann.
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.validation import check_data, check_labels, check_rank, check_rows
from ldr.kernels import Gaussian, Kernel, beta, make_kernel
from ldr.kernels.features import (
    approximate_sums,
    check_approximation,
    grouped_columns,
    make_features,
)
from ldr.kernels.tiles import (
    DEFAULT_MEMORY_BUDGET,
    Tiles,
    choose_block_size,
    class_codes,
    dask_sums,
)
from ldr.objectives.chunked_rows import ChunkedRows, RowBlocks

__all__ = ["HSIC"]

#: points whose cost, gradient and Φ an :class:`HSIC` objective keeps (small: d×d each)
RECENT = 3


def _check_gamma(Gamma, n: int):
    """``(dense, factor, weight)``: Γ as an n×n array, or as the low-rank factor (F, s) and,
    for a weighted factor (F, s, w), the row weights w (else None).  F and w of another
    namespace than NumPy (a clustering estimator's embedding on its device) are checked
    there (:func:`ldr.data.validation.check_rows`); s, of length m, is a NumPy array."""
    if isinstance(Gamma, tuple):
        if len(Gamma) not in (2, 3):
            raise ParameterError("Gamma", "a low-rank Γ is given as (F, s) with Γ = F diag(s) "
                                 "Fᵀ, or as (F, s, w) with Γ = diag(w) F diag(s) Fᵀ diag(w)")
        F = check_rows(Gamma[0], "Gamma[0] (F)", min_samples=1)
        s = np.asarray(Gamma[1], dtype=float).reshape(-1)
        if F.shape[0] != n or s.shape[0] != F.shape[1] or not np.all(np.isfinite(s)):
            raise ParameterError("Gamma", f"F must be (n={n}, m) and s finite of length m; got "
                             f"F {tuple(F.shape)}, s {s.shape}")
        if len(Gamma) == 2:
            return None, (F, s), None
        w = Gamma[2]
        if arrays.foreign(w) is None:
            w = np.asarray(w, dtype=float)
        if w.ndim != 1 or w.shape[0] != n or not arrays.all_finite(w):
            raise ParameterError("Gamma", f"the row weights w must be n = {n} finite numbers; "
                                 f"got shape {tuple(w.shape)}")
        return None, (F, s), w
    G = check_data(Gamma, "Gamma", min_samples=1)
    if G.shape != (n, n):
        raise ParameterError("Gamma", f"must be n×n with n = {n} samples, got shape {G.shape}")
    scale = max(np.abs(G).max(), 1e-300)
    if np.abs(G - G.T).max() > 1e-10 * scale:
        raise ParameterError("Gamma", "must be symmetric (Γ = Γᵀ); symmetrize it as (Γ + Γᵀ)/2")
    return 0.5 * (G + G.T), None, None


def factor_of(Gamma) -> tuple:
    """Γ's low-rank factor (F, s), Γ = F diag(s) Fᵀ, from (F, s), or from a weighted factor
    (F, s, w): (diag(w) F, s) in F's namespace; w None is no weight."""
    if len(Gamma) == 2 or Gamma[2] is None:
        return Gamma[0], Gamma[1]
    F, s, w = Gamma
    if arrays.foreign(w) is None:
        w = arrays.like(np.asarray(w, dtype=float), F)
    return arrays.namespace(F).reshape(w, (-1, 1)) * F, s


def label_gamma(y, n: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``(classes, (F, s))``: Γ = H YYᵀ H / n² for one-hot class labels Y, as the low-rank
    factor F = HY, s = 1/n² (supervised HSIC's Γ)."""
    classes, codes = check_labels(y, n, "y")
    Y = np.eye(len(classes))[codes]
    return classes, (Y - Y.mean(axis=0), np.full(len(classes), 1.0 / n**2))


def _copy(a):
    return arrays.namespace(a).asarray(a, copy=True)


class HSIC(Objective):
    """Minimize −tr(Γ K_XW) over W on Grassmann(d, r) for an ISM-family kernel.

    Parameters
    ----------
    X : (n, d) data as rows (used as given; estimators standardize it first)
    Gamma : (n, n) symmetric array, (F, s) with Γ = F diag(s) Fᵀ, or (F, s, w) with
        Γ = diag(w) F diag(s) Fᵀ diag(w) (row weights w: a normalized kernel's D^{-1/2})
    r : subspace dimension, 1 ≤ r < d
    kernel : name ("gaussian", "polynomial", "linear", "squared", "multiquadric") or an
        :class:`ldr.kernels.Kernel` (copied and fitted to X: the Gaussian's default σ is the
        median pairwise distance of X)
    block_size : rows per block of the n×n sums; default from ``memory_budget``
        (:func:`ldr.kernels.tiles.choose_block_size`: cache-sized blocks, never more than the
        budget; for X of another namespace, as many rows as the budget allows)
    memory_budget : bytes for the b×n working arrays (default
        ``ldr.kernels.tiles.DEFAULT_MEMORY_BUDGET`` = 256 MiB); the Hessian-vector products keep
        their per-W arrays only when they fit in it too, so with a low-rank Γ no n×n array
        outlives one block and peak memory is O(n·(block_size + d))
    backend : "numpy" (the in-process block loop, default) or "dask" (the row blocks as
        Dask tasks on the current scheduler, e.g. a ``dask.distributed`` client; needs the
        ``dask`` extra); kept as ``block_backend`` (``backend`` is every objective's
        autodiff backend, :mod:`ldr.core.backends`: here "autograd")
    copy : bool, default True
        False: keep X itself where it already is a finite float64 NumPy array (a caller that
        does not change it afterwards, as the estimators' own standardized copy): one n×d
        array less (400 MB at 10⁶ × 50)

    Default solver: ``["ism", "trust-region"]`` (ISM's spectral steps from Φ₀, then a
    second-order polish that certifies the point and repairs an ISM cycle).

    ``X`` of another array namespace than NumPy (a PyTorch tensor, on a GPU or not; a CuPy
    or array-api-strict array) keeps the rows and Γ there
    (:meth:`ldr.kernels.tiles.Tiles.to_namespace`): for every built-in kernel (Gaussian,
    squared, multiquadric, linear, polynomial) and conic combinations of them, the cost,
    gradient, Φ, Φ₀ and Hessian-vector products are block sums on the device, with one scalar
    (the cost) per pass to the host, and :func:`ldr.solve` iterates there (σ, Γ's checks and
    the class order are computed once on a host copy).  A :class:`ldr.kernels.Custom` kernel
    (autograd's f) computes in NumPy only: with such data it is a ParameterError.
    """

    method = Method("hsic", "supervised HSIC with a Gaussian kernel, −tr(Γ K_XM)",
                    supervised=True, build="supervised",  # row tiles within the budget
                    memory=lambda n, sizes: min(8 * 6.1 * n**2, 2 * DEFAULT_MEMORY_BUDGET))

    def __init__(self, X, Gamma, r: int, kernel="gaussian", block_size: int | None = None,
                 manifold: str = "grassmann", memory_budget: float = DEFAULT_MEMORY_BUDGET,
                 backend: str = "numpy", copy: bool = True):
        ref = X  # the rows' namespace and device: the sums run there
        # rows of another namespace are checked there and only read (never copied to the host)
        X = check_rows(X, "X") if arrays.foreign(X) is not None else check_data(X, "X",
                                                                                 copy=copy)
        n, d = X.shape
        r = check_rank(r, d)
        self._dense, factor, weight = _check_gamma(Gamma, n)
        self._factor = None if factor is None else factor_of((*factor, weight))
        if block_size is not None and not (isinstance(block_size, (int, np.integer))
                                           and block_size >= 1):
            raise ParameterError("block_size", f"must be a positive integer, got {block_size!r}")
        if backend not in ("numpy", "dask"):
            raise ParameterError("backend", f"expected 'numpy' or 'dask', got {backend!r}")
        if backend == "dask" and arrays.foreign(ref) is not None:
            raise ParameterError("backend", "'dask' block sums need NumPy data")
        auto = choose_block_size(n, memory_budget, ref)
        self.kernel: Kernel = make_kernel(kernel).fit(X)  # σ: once (a seeded sample, on the host)
        self.block_size = min(int(block_size), n) if block_size else auto
        self.memory_budget = memory_budget
        # ``backend`` is the Objective's autodiff backend (ldr.core.backends): not this one
        self.block_backend = backend
        self.shape = (d, r)
        self.manifold = manifold
        # class labels' order laid out on the host; the rows, Γ and the class weights then on
        # X's device
        self.tiles = Tiles(X, self._dense, self._factor, self.kernel.terms(),
                           self.block_size).to_namespace(ref)
        self.X = arrays.like(X, ref)
        self._cache_W = None  # the last point and its values (with the Hessian's arrays)
        self._cache: dict = {}
        self._recent: list = []  # the last RECENT points' cost, gradient (and Φ): d×d each
        self._dask_handle = None

    @classmethod
    def supervised(cls, X, y, r: int, kernel="gaussian", **kwargs) -> HSIC:
        """Supervised HSIC(XW, y) for class labels: Γ = H YYᵀ H / n² with one-hot Y, kept as
        the low-rank factor (HY, 1/n²).  ``X`` is used as given (standardize it first)."""
        n = check_rows(X, "X").shape[0]
        return cls(X, label_gamma(arrays.to_host(y), n)[1], r, kernel, **kwargs)

    @property
    def Gamma(self) -> np.ndarray:
        """Γ as a dense n×n array (O(n²) memory: for inspection at small n)."""
        if self._dense is not None:
            return self._dense
        F, s = self._factor
        return (F * s) @ F.T

    # -- one pass over the data ------------------------------------------------------------
    def _point(self, W):
        """W as a float array of the rows' namespace and device."""
        return arrays.as_point(W, self.X)

    def _lookup(self, W, need_phi: bool) -> dict | None:
        """The values kept for the point W (the last one's, or one of the ``RECENT``), or
        None; points are compared by value."""
        if arrays.same(self._cache_W, W) and (not need_phi or "phi" in self._cache):
            return self._cache
        for key, hit in reversed(self._recent):
            if arrays.same(key, W) and (not need_phi or "phi" in hit):
                self._cache_W = key
                self._cache = dict(hit)
                return self._cache
        return None

    def _evaluate(self, W, need_phi: bool) -> dict:
        W = self._point(W)
        hit = self._lookup(W, need_phi)
        if hit is not None:
            return hit
        if self.block_backend == "dask":
            cost, S, self._dask_handle = dask_sums(self.tiles, W, need_phi,
                                                   handle=self._dask_handle)
        else:
            cost, S = self.tiles.sums(W, need_phi)
        if need_phi:
            return self.remember(W, cost, 0.5 * (S + S.T))
        out = {"cost": cost, "egrad": S}
        self._keep(W, out)
        return out

    def remember(self, W, cost: float, phi) -> dict:
        """Take the cost and Φ at W as this objective's values there: a caller that has them
        from the same kernel by another route (the clustering estimators' (R1) from their
        kept K_XW) spares the pass over the rows.  The gradient is ∇f = 2ΦW.  The last
        ``RECENT`` points' values are kept (a solver's reference-point gradient between two
        evaluations at its iterate evicts nothing)."""
        W = self._point(W)
        phi = self._point(phi)
        out = {"cost": float(cost), "phi": phi, "egrad": 2.0 * phi @ W}
        self._keep(W, out)
        return out

    def forget(self) -> None:
        """Drop every kept value (the last point's and the last ``RECENT`` points'): the next
        evaluation is a pass over the rows, as a benchmark timing one needs."""
        self._cache_W = None
        self._cache = {}
        self._recent = []

    def _keep(self, W, out: dict) -> None:
        """``out`` as the last point's values, and among the ``RECENT`` kept."""
        W = arrays.namespace(W).asarray(W, copy=True)  # a caller may change W in place
        self._cache_W = W
        self._cache = out
        self._recent = [(key, hit) for key, hit in self._recent if not arrays.same(key, W)]
        self._recent.append((W, {name: out[name] for name in ("cost", "phi", "egrad")
                                 if name in out}))  # not the Hessian's n×n arrays
        del self._recent[:-RECENT]

    def cost(self, W) -> float:
        return self._evaluate(W, need_phi=False)["cost"]

    def egrad(self, W):
        return _copy(self._evaluate(W, need_phi=False)["egrad"])

    def phi(self, W):
        return _copy(self._evaluate(W, need_phi=True)["phi"])

    def phi0(self):
        """Φ₀ = Φ with f′(β) → f′(0): −2f′(0) Xᵀ(diag(Γ1) − Γ)X (difference kernels),
        −f′(0) XᵀΓX (product); with Γ = F diag(s) Fᵀ in O(n·d·(d + m)), no n×n array; a
        dense Γ by row blocks.  In the rows' namespace (the tiles' order: the sums do not
        depend on it)."""
        X = self.tiles.X
        xp = arrays.namespace(X)
        if self.tiles.factor is not None:
            F, s = self.tiles.factor
            XF = X.T @ F
            XGX = (XF * s) @ XF.T
            deg = F @ (s * xp.sum(F, axis=0))
        else:
            XGX = 0.0
            parts = []
            for rows in self.tiles.row_blocks():
                G = self.tiles.gamma_rows(rows)
                XGX = XGX + X[rows, :].T @ (G @ X)
                parts.append(xp.sum(G, axis=1))
            deg = xp.concat(parts)
        XDX = X.T @ (deg[:, None] * X)
        Phi = 0.0
        zero = np.zeros(1)
        for w, k in self.kernel.terms():  # f′(0): a constant of the kernel, on the host
            c = w * float(k.derivatives(zero, np, (1,))[0][0])
            Phi = Phi - (c * XGX if k.kind == "product" else 2.0 * c * (XDX - XGX))
        return 0.5 * (Phi + Phi.T)

    def _hess_arrays(self, W):
        """Per W, [(β, Ψ, Γ⊙f″)] per kernel term over all rows (the tiles' order), kept for
        the Hessian-vector products at this W only when they fit in the memory budget (else
        None: blocked)."""
        n = self.tiles.n
        if 3 * len(self.kernel.terms()) * 8 * n * n > self.memory_budget:
            return None
        if not arrays.same(self._cache.get("hess_W"), W):
            X = self.tiles.X
            xp = arrays.namespace(X)
            Z = X @ W
            G = self.tiles.gamma_rows(slice(None))
            kept = []
            for w, k in self.kernel.terms():
                b = beta(k.kind, Z)
                df, d2f = k.derivatives(b, xp, (1, 2))
                kept.append((b, w * (G * df), w * (G * d2f)))
            self._cache["hess_W"] = xp.asarray(W, copy=True)
            self._cache["hess"] = kept
        return self._cache["hess"]

    def ehvp(self, W, V):
        """D∇f(W)[V] = −4 Xᵀ(L_{Ψ′} Z + L_Ψ XV) (difference), −2 Xᵀ(Ψ′Z + ΨXV) (product),
        summed over row blocks (see the module docstring), in the rows' namespace."""
        X = self.tiles.X
        xp = arrays.namespace(X)
        W = self._point(W)
        V = self._point(V)
        cached = self._hess_arrays(W)
        Z = X @ W
        Y = X @ V
        s = xp.sum(Z * Y, axis=1)
        parts = []
        for rows in self.tiles.row_blocks():
            G = None if cached is not None else self.tiles.gamma_rows(rows)
            Zr = Z[rows, :]
            Yr = Y[rows, :]
            T = 0.0
            for t, (w, k) in enumerate(self.kernel.terms()):
                if cached is not None:
                    b, Psi, G2 = (a[rows, :] for a in cached[t])
                else:
                    b = beta(k.kind, Z, Zr)
                    df, d2f = k.derivatives(b, xp, (1, 2))
                    Psi = w * (G * df)
                    G2 = w * (G * d2f)
                if k.kind == "product":
                    dPsi = G2 * (Zr @ Y.T + Yr @ Z.T)
                    T = T - 2.0 * (dPsi @ Z + Psi @ Y)
                else:
                    dPsi = G2 * (2.0 * (s[rows, None] + s[None, :] - Zr @ Y.T - Yr @ Z.T))
                    T = T - 4.0 * (xp.sum(dPsi, axis=1)[:, None] * Zr - dPsi @ Z
                                   + xp.sum(Psi, axis=1)[:, None] * Yr - Psi @ Y)
            parts.append(T)
        return X.T @ xp.concat(parts, axis=0)

    def heuristic(self):
        """ISM's spectral start: the r eigenvectors of Φ₀ with the smallest eigenvalues."""
        V = arrays.eigh(self.phi0())[1]
        return arrays.namespace(V).asarray(V[:, :self.shape[1]], copy=True)

    def gram(self, W):
        """K_XW, the n×n kernel matrix of the projected data."""
        return self.kernel.gram(self.X, W)

    def linear_map(self, W):
        """x ↦ x W (the rows are standardized by the caller)."""
        return None, W


class ApproximateHSIC(Objective):
    """Supervised-style HSIC with the Gaussian kernel on Z = XW replaced by a seeded
    low-rank approximation K ≈ CACᵀ (:mod:`ldr.kernels.features`): random Fourier features
    (``"rff"``) or Nyström landmarks (``"nystroem"``), m = ``n_features``.

    Φ(W) ≈ (1/σ²) Xᵀ L_{Γ⊙CACᵀ} X costs O(n·m·(q + d)) for class labels (O(n·m·(q + k·d))
    for a rank-k Γ factor), never O(n²); the cost is −Σ Γ⊙CACᵀ.  The features are redrawn at
    every W from the same seed (RFF frequencies WᵀΩ_d, Nyström landmarks fixed rows), so both
    are functions of span(W).  ``egrad`` returns 2Φ(W)W, the exact gradient's formula with K
    replaced by its approximation — not the derivative of the approximate cost (the features
    move with W) — so the objective is for ISM (``phi``), which is what the estimators run;
    it has no Hessian.  Check the answer against :class:`HSIC` where n allows (the exact
    cost at the approximate answer, principal angles).

    Parameters
    ----------
    X, Gamma, r : as :class:`HSIC`; Γ must be the low-rank factor ``(F, s)``.  X may be a
        :class:`~ldr.objectives.chunked_rows.ChunkedRows` (a Dask array's or memmap's
        standardized rows): each pass then maps its chunks (on a ``dask.distributed``
        client's workers) and only the landmark rows are gathered
    kernel : "gaussian" or a :class:`ldr.kernels.Gaussian` (its σ given for chunked rows)
    approximation : "rff" or "nystroem"
    n_features : m, the error knob (RFF: m frequencies, 2m features; Nyström: m landmarks)
    random_state : seed of the frequencies / landmarks (default 0)
    memory_budget : bytes for one block of kernel values (default 256 MiB); a Φ keeps the
        feature blocks of its first pass for its second within it (all of them when the n×ρ
        Nyström features fit: the kernel is then evaluated once a Φ)
    copy : as :class:`HSIC`'s

    Attributes
    ----------
    rows : RowBlocks or ChunkedRows
        The row source the passes map over (:mod:`ldr.objectives.chunked_rows`).
    groups : tuple or None
        ``(gid, G)`` when Γ is G between the classes ``gid`` (class labels), else None.
    """

    #: ISM only: egrad is 2Φ̃(W)W, an approximation of the exact gradient that is not the
    #: derivative of this approximate cost, so a trust-region polish would chase two targets
    default_solver = "ism"

    def __init__(self, X, Gamma, r: int, kernel="gaussian", approximation: str = "rff",
                 n_features: int = 512, random_state=0,
                 memory_budget: float = DEFAULT_MEMORY_BUDGET, manifold: str = "grassmann",
                 copy: bool = True):
        chunked = isinstance(X, ChunkedRows)
        if not chunked:  # rows of another namespace are checked there and only read
            X = check_rows(X, "X") if arrays.foreign(X) is not None else check_data(X, "X",
                                                                                     copy=copy)
        n, d = X.shape
        r = check_rank(r, d)
        if approximation is None:
            raise ParameterError("approximation", "expected 'rff' or 'nystroem' (None is HSIC)")
        check_approximation(approximation, n_features)
        dense, factor, weight = _check_gamma(Gamma, n)
        if factor is None:
            raise ParameterError("Gamma", "an approximation needs Γ as a low-rank factor (F, s), "
                             "not a dense n×n array")
        self.kernel: Kernel = make_kernel(kernel)
        if type(self.kernel) is not Gaussian:
            raise ParameterError(
                "kernel", f"approximations are implemented for the Gaussian kernel "
                             f"only, got {self.kernel!r}")
        if chunked and self.kernel.sigma is None:
            raise ParameterError("kernel", "rows read a chunk at a time need the Gaussian's "
                                 "sigma given (the estimators take the median distance of a "
                                 "seeded sample of rows)")
        self.kernel.fit(X)
        if not (np.isscalar(memory_budget) and memory_budget > 0):
            raise ParameterError("memory_budget", f"must be a positive number of bytes, got "
                             f"{memory_budget!r}")
        self.X = X
        self.shape = (d, r)
        self.manifold = manifold
        self._factor = factor_of((*factor, weight))
        self.approximation = approximation
        self.n_features = int(n_features)
        self.features = make_features(approximation, self.kernel.sigma, int(n_features), X,
                                      random_state)
        width = 2 * n_features if approximation == "rff" else n_features
        self.block_size = int(min(n, max(256, memory_budget // (8 * width * 4))))
        if chunked:  # the chunks in their order: the classes' codes, no sort of the rows
            self.rows = X
            self.groups = class_codes(*self._factor)
            rows_factor = self._factor
        else:        # the rows sorted by class when Γ is a class Γ (Tiles)
            tiles = Tiles(X, None, self._factor, [], self.block_size)
            self.rows = RowBlocks(tiles.X, self.block_size)
            self.groups = None if tiles.groups is None else tiles.groups[1:]
            rows_factor = tiles.factor
            if arrays.foreign(X) is not None:  # class labels' Γ (on the host) to X's device
                rows_factor = (arrays.like(rows_factor[0], X), rows_factor[1])
                if self.groups is not None:
                    xp = arrays.namespace(X)
                    self.groups = (xp.asarray(self.groups[0], device=arrays.device(X)),
                                   self.groups[1])
        self._kept_bytes = float(memory_budget)  # the first pass's features, kept
        # a weighted factor's row weights go into the features instead, Γ ⊙ K ≈ (F S Fᵀ) ⊙
        # (C̃C̃ᵀ) with C̃ = diag(w) C, so that F's class columns stay few-valued (unless the
        # weighted rows are classes themselves: then the class sums)
        self._weight = weight if self.groups is None else None
        self._sums_factor = factor if self._weight is not None else rows_factor
        self._rows_factor = rows_factor  # Γ's factor in the rows' order (Φ₀)
        # class-score columns of Γ's factor beside a dense embedding: summed per class (found
        # on the host: a factor on a device, an embedding's, is taken as dense columns)
        self._split = None if self.groups is not None \
            or arrays.foreign(self._sums_factor[0]) is not None \
            else grouped_columns(self._sums_factor[0])
        self._cache_key = None
        self._cache = {}

    def _point(self, W):
        """W as a float array of the rows' namespace and device (NumPy for a row source)."""
        if isinstance(self.X, ChunkedRows):
            return np.asarray(W, dtype=float)
        return arrays.as_point(W, self.X)

    def _evaluate(self, W) -> dict:
        W = self._point(W)
        key = arrays.host_float64(W).tobytes()
        if key != self._cache_key:
            total, XDX, XGKX = approximate_sums(self.rows, W, self.features, self._sums_factor,
                                                self.groups, self._split,
                                                cache_bytes=self._kept_bytes,
                                                row_weight=self._weight)
            Phi = (XDX - XGKX) / self.kernel.sigma**2
            Phi = arrays.like(0.5 * (Phi + Phi.T), W)   # d×d, from the host's small sums
            self._cache_key = key
            self._cache = {"cost": -total, "phi": Phi, "egrad": 2.0 * Phi @ W}
        return self._cache

    def cost(self, W) -> float:
        return self._evaluate(W)["cost"]

    def egrad(self, W):
        return _copy(self._evaluate(W)["egrad"])

    def phi(self, W) -> np.ndarray:
        return _copy(self._evaluate(W)["phi"])

    def ehvp(self, W, V):
        raise ValueError("ApproximateHSIC has no Hessian: use solver='ism' (or the exact "
                         "HSIC objective)")

    def phi0(self) -> np.ndarray:
        """The exact Φ₀ (it needs no kernel evaluations: O(n·d·(d + k))): (1/σ²) Xᵀ(diag(Γ1)
        − Γ)X, from XᵀF and Xᵀ diag(Γ1) X summed over the row blocks."""
        F, s = self._rows_factor
        toward = arrays.like(s, F) * arrays.namespace(F).sum(F, axis=0)
        XF, XDX = self.rows.map(phi0_sums, toward, sliced=(F,), how=("sum", "sum"))
        XF = arrays.host_float64(XF)
        XDX = arrays.host_float64(XDX)
        Phi = (XDX - (XF * s) @ XF.T) / self.kernel.sigma**2
        Phi = 0.5 * (Phi + Phi.T)
        return Phi if isinstance(self.X, ChunkedRows) else arrays.like(Phi, self.X)

    def heuristic(self) -> np.ndarray:
        """ISM's spectral start: the r eigenvectors of Φ₀ with the smallest eigenvalues."""
        V = arrays.eigh(self.phi0())[1]
        return arrays.namespace(V).asarray(V[:, :self.shape[1]], copy=True)

    def gram(self, W) -> np.ndarray:
        """The exact n×n kernel matrix K_XW (the clustering estimators' exact U-step)."""
        if isinstance(self.X, ChunkedRows):
            raise ParameterError("X", "rows read a chunk at a time have no n×n kernel matrix: "
                                 "use the Nyström U-step (spectral='nystroem')")
        return self.kernel.gram(self.X, W)

    def linear_map(self, W):
        """x ↦ x W (the rows are standardized by the caller)."""
        return None, W


def phi0_sums(Xr, start, toward, Fr) -> tuple:
    """A block of rows' (XᵀF, Xᵀ diag(Γ1) X), Γ1 = F (s ⊙ Fᵀ1) = F·toward (Φ₀'s sums)."""
    deg = Fr @ toward
    return Xr.T @ Fr, Xr.T @ (deg[:, None] * Xr)
