"""Linear metric MDS: Kruskal–Shepard stress of an orthogonal projection (survey §3.1.2, Eq. 4).

Rows x_i of X are samples, δ_ij = d_X(x_i, x_j) the given dissimilarities (Euclidean
distances of X by default), u_ij = Mᵀ(x_i − x_j) and, with a smoothing ε > 0,

    s_ij = √(‖u_ij‖² + ε²),        e_ij = s_ij − ε        (≈ ‖u_ij‖ = d_Y(Mᵀx_i, Mᵀx_j))

* cost      f(M) = Σ_i Σ_j (δ_ij − e_ij)²                      (Eq. 4, both orders of each pair)
* gradient  ∇f(M) = 2 Xᵀ L_Ω X M,   Ω_ij = −2(δ_ij − e_ij)/s_ij = 2 − 2(δ_ij + ε)/s_ij,
            L_Ω = diag(Ω1) − Ω
* Φ-oracle  Φ(M) = Xᵀ L_Ω X   (so ∇f = 2ΦM).  Its fixed points are first-order points, but
            ISM on it is a poor solver: from random starts it improves, then stalls short of
            the optimum (measured stress-1 0.31–0.34 where trust region reaches 0.29); use
            gradient or trust region, or chain ``["ism", "trust-region"]``.
* Hessian   D∇f(M)[V] = 2 Xᵀ (L_{Ω′} XM + L_Ω XV),   Ω′_ij = 2(δ_ij + ε) u_ijᵀw_ij / s_ij³,
            w_ij = Vᵀ(x_i − x_j)
* heuristic PCA's top-r eigenvectors.  For Euclidean δ this is classical scaling (Torgerson):
            the survey's Eq. 3 shows the scatter Σ_ij ‖y_i − y_j‖² is PCA's objective.  It is
            the natural start, not the stress optimum (and for non-Euclidean δ just PCA).

**Why ε.**  ‖u‖ is not differentiable where two projections coincide (u_ij = 0 with
x_i ≠ x_j); s_ij − ε is smooth everywhere, equals 0 at u = 0 (so i = j and duplicated
samples contribute exactly nothing), and differs from ‖u‖ by at most ε.  The default
ε = 1e-6 × the median positive dissimilarity changes the stress by a relative ~1e-6 and leaves
every gradient bounded (|∂e/∂u| ≤ 1); the Hessian grows like δ/ε only at coincident
projections, where the true stress has its concave kink.

Everything is accumulated over blocks of rows: no temporary exceeds block_size × n × r.  The
n×n dissimilarities are stored up to ``STORE_MAX`` rows (128 MB); beyond, a block's rows of
δ are recomputed from X when the block is used (blocked stress: exact, O(b·n) memory, one more
product per block) — a precomputed ``dissimilarity`` is always stored.  The cost depends on M
only through the distances ‖Mᵀ(x_i − x_j)‖, so the manifold is Grassmann.

**Landmarks** (``landmarks=m``): the stress over the n·m pairs (i, ℓ) with ℓ in m landmark
rows drawn uniformly (seeded), scaled by n/m — an unbiased estimate of Eq. 4's Σ_ij — in
O(n·m·r) time per evaluation instead of O(n²·r).  With rows i ∈ R = all rows and columns
ℓ ∈ C = the landmarks, u_iℓ = y_i − y_ℓ and the same Ω,

    ∇f = (n/m) (X_Rᵀ[diag(Ω1) Y_R − Ω Y_C] − X_Cᵀ[Ωᵀ Y_R − diag(Ωᵀ1) Y_C])           (L1)

(which for C = R and a symmetric Ω is 2XᵀL_ΩXM above), and the Hessian the same with
(Ω, Y) → (Ω, Z) + (Ω′, Y).  It is an approximation: its minimizer is not the exact one.

**Sampled rows** (``rows=s``, with landmarks): R is a uniform sample of s rows too, drawn
independently of the landmarks, and the scale is (n/s)(n/m): the same unbiased estimate of
Σ_ij from s·m pairs, in O(s·m·r) time per evaluation whatever n is.  Its error depends on s
and m, not on n.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
from scipy.spatial.distance import squareform

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method, Objective
from ldr.data import arrays
from ldr.data.rows import moments, take_rows
from ldr.data.validation import check_data, check_magnitude, check_rank, check_rows, is_lazy
from ldr.objectives.transport import take

__all__ = ["MDS", "SMOOTHING_ROWS", "STORE_MAX"]

#: the n×n dissimilarities are stored up to this many rows (8·n² bytes: 128 MiB); a block's
#: rows are recomputed from X beyond
STORE_MAX = 4096
#: the default smoothing is 1e-6 × the median positive dissimilarity among this many seeded
#: rows (all rows below it): a scale, which a sample's median fixes as well as every pair's
SMOOTHING_ROWS = 2000


def _pdist(X: np.ndarray, metric: str) -> np.ndarray:
    """The ``metric`` distances between the rows of X, each pair once (condensed)."""
    from sklearn.metrics import pairwise_distances

    return squareform(pairwise_distances(X, metric=metric), checks=False)


def _check_dissimilarity(D, n: int) -> np.ndarray:
    D = check_data(D, "dissimilarity", min_samples=1)
    if D.shape != (n, n):
        raise ParameterError("dissimilarity", f"must be n×n with n = {n} samples, got {D.shape}")
    scale = max(float(np.abs(D).max()), 1e-300)
    if np.abs(D - D.T).max() > 1e-10 * scale:
        raise ParameterError("dissimilarity", "must be symmetric; symmetrize it as (D + Dᵀ)/2")
    if D.min() < 0:
        raise ParameterError("dissimilarity", "must be non-negative")
    if np.abs(np.diag(D)).max() > 1e-12 * scale:
        raise ParameterError("dissimilarity", "the diagonal d_X(x_i, x_i) must be 0")
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0.0)
    return D


class MDS(Objective):
    """Linear Kruskal–Shepard MDS: minimize Σ_ij (δ_ij − ‖Mᵀ(x_i − x_j)‖)² over orthonormal M.

    Parameters
    ----------
    X : array (n_samples, n_features), np.memmap or Dask array
        X of another array namespace (a PyTorch tensor on the CPU or a GPU, CuPy, ...)
        keeps its rows, landmarks and Euclidean dissimilarities there, in its float dtype:
        cost, gradient, HVPs, Φ and stress are computed there, ``ldr.solve`` iterates there
        (another metric is computed on the host, a block of rows at a time).  A Dask array
        or memmap with ``landmarks`` and ``rows`` is read once over its chunks
        for the mean and the scatter, and then only the sampled rows and the landmarks are
        gathered: memory O((s + m)·d + d²), whatever n is (without them it is refused: every
        row's pairs need X in memory).
    r : int, 1 ≤ r < n_features
    dissimilarity : array (n_samples, n_samples), optional
        Precomputed δ_ij (symmetric, non-negative, zero diagonal).  Default: ``metric``
        distances of X (stored up to 4096 samples, recomputed per block beyond).
    metric : str
        Any :func:`sklearn.metrics.pairwise_distances` metric, used when ``dissimilarity`` is
        not given (default ``"euclidean"``).
    smoothing : float, optional
        Smoothing of the projected distances (module docstring); default 1e-6 × the median
        positive dissimilarity among at most ``SMOOTHING_ROWS`` = 2000 seeded rows (every
        row below it).
    block_size : int, optional
        Rows per block of the n×n accumulations (default: blocks of about 2²¹ numbers).
    landmarks : int, optional
        m: the stress over the pairs (i, landmark) only, scaled by n/m (module docstring,
        (L1)); None (default): all pairs, exact.
    rows : int, optional
        With ``landmarks``: s, the stress over the pairs (i, landmark) with i in a uniform
        sample of s rows, scaled by (n/s)(n/m) (module docstring); None (default): all rows.
    random_state : int, default 0
        Seed of the landmarks, the rows (and the subsample for ``smoothing``).
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    mean_, delta (the n×n dissimilarities, formed on request when not stored; n×m with
    landmarks, s×m with sampled rows), smoothing, landmarks_ (indices, or None), rows_
    (the sampled rows' indices, or None for all rows), X (the centered rows the cost sums
    over: all, or the sampled ones)

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((60, 4)) * [3, 2, 1, 0.5]
    >>> obj = ldr.objectives.MDS(X, 2)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.stress(res.M) <= obj.stress(obj.heuristic()))
    True

    Default solver: ``"trust-region"``, whose accepted steps decrease the stress; ISM runs
    on the stress too but can stall short of a critical point.
    """

    method = Method("mds", "metric MDS: Kruskal-Shepard stress of the projection",
                    memory=lambda n, sizes: _memory(n))

    default_solver = "trust-region"

    def __init__(self, X, r: int, dissimilarity=None, metric: str = "euclidean",
                 smoothing: float | None = None, block_size: int | None = None,
                 landmarks: int | None = None, rows: int | None = None, random_state=0,
                 manifold: str = "grassmann", *, eps="deprecated"):
        smoothing = renamed_value(type(self).__name__, "eps", "smoothing", eps, smoothing)
        lazy = (is_lazy(X) or isinstance(X, np.memmap)) and landmarks is not None \
            and rows is not None
        if lazy:   # one pass over the chunks: n, the mean and the scatter; rows gathered below
            if dissimilarity is not None:
                raise ParameterError("dissimilarity", "a precomputed n×n dissimilarity is in "
                                     "memory: pass X in memory with it")
            stats = moments(X, name="X")
            n = int(stats.n)
            d = int(stats.scatter.shape[0])
        else:
            X = check_rows(X, "X")  # X's namespace and device: only read
            n, d = X.shape
        r = check_rank(r, d)
        if landmarks is not None and (isinstance(landmarks, bool) or not isinstance(
                landmarks, numbers.Integral) or not 2 <= landmarks <= n):
            raise ParameterError("landmarks", f"must be None or an integer in [2, n_samples = "
                                 f"{n}], got {landmarks!r}")
        if rows is not None and (landmarks is None or isinstance(rows, bool) or not isinstance(
                rows, numbers.Integral) or not 2 <= rows <= n):
            raise ParameterError("rows", (f"must be None or an integer in [2, n_samples = {n}], "
                                          f"got {rows!r}") if landmarks is not None else
                                 "a row sample needs landmarks (it samples the pairs (row, "
                                 "landmark)); give landmarks, or rows=None")
        rng = np.random.default_rng(random_state)
        self.landmarks_ = None if landmarks is None else np.sort(
            rng.choice(n, int(landmarks), replace=False))
        self.rows_ = None if rows is None or rows == n else np.sort(
            rng.choice(n, int(rows), replace=False))
        self.n_samples = n
        if lazy and self.rows_ is None:   # rows = n: every row, read whole
            X = check_data(take_rows(X, np.arange(n)), "X")
            lazy = False
        if lazy:   # only the sampled rows and the landmarks are read into memory
            self.mean_ = np.asarray(arrays.to_host(stats.shift + stats.offset), dtype=float)
            self._scatter = np.asarray(arrays.to_host(stats.scatter), dtype=float)
            self._landmark_rows = np.asarray(take_rows(X, self.landmarks_), dtype=float) \
                - self.mean_
            self.X = np.asarray(take_rows(X, self.rows_), dtype=float) - self.mean_
            check_magnitude(self.X, "X")
        else:
            xp = arrays.namespace(X)
            mean = xp.mean(X, axis=0)
            self.mean_ = np.asarray(arrays.to_host(mean), dtype=float)
            centered = X - mean
            # the heuristic's scatter, of every row (d×d, on the host)
            self._scatter = np.asarray(arrays.to_host(centered.T @ centered), dtype=float)
            self._landmark_rows = None if self.landmarks_ is None else take(centered,
                                                                            self.landmarks_)
            self.X = centered if self.rows_ is None else take(centered, self.rows_)
        self.metric = metric
        self._delta = None
        n_rows = self.X.shape[0]
        sub = np.sort(np.random.default_rng(random_state).choice(
            n_rows, min(n_rows, SMOOTHING_ROWS), replace=False))
        if dissimilarity is not None:
            given = _check_dissimilarity(dissimilarity, n)
            sample = given if self.rows_ is None else given[self.rows_]
            if self.landmarks_ is not None:
                sample = sample[:, self.landmarks_]
            self._delta = arrays.like(sample, self.X)
            picked = np.arange(n) if self.rows_ is None else self.rows_
            positive = squareform(given[np.ix_(picked[sub], picked[sub])], checks=False)
        else:
            if n <= STORE_MAX or (self.landmarks_ is not None
                                  and n_rows * len(self.landmarks_) <= STORE_MAX**2):
                self._delta = self._distances(slice(0, n_rows))
                if self.landmarks_ is None:
                    self._delta = 0.5 * (self._delta + self._delta.T)
            else:
                self._distances(slice(0, 1))  # the metric's error, now
            positive = _pdist(arrays.to_host(take(self.X, sub)), metric)
        positive = positive[positive > 0]
        if positive.size == 0:
            raise ParameterError("X", "all dissimilarities are 0 (every sample is the same); "
                             "nothing to scale")
        if smoothing is None:
            smoothing = 1e-6 * float(np.median(positive))
        elif isinstance(smoothing, bool) or not isinstance(smoothing, numbers.Real) \
                or not np.isfinite(smoothing) or smoothing <= 0:
            raise ParameterError("smoothing", "the distance smoothing must be a positive number, "
                                              f"got {smoothing!r}")
        cols = n if self.landmarks_ is None else len(self.landmarks_)
        if block_size is None:
            block_size = max(1, min(self.X.shape[0], 2**21 // (cols * r)))
        elif isinstance(block_size, bool) or not isinstance(block_size, numbers.Integral) \
                or block_size < 1:
            raise ParameterError("block_size", f"must be a positive integer, got {block_size!r}")
        self.smoothing = float(smoothing)
        self.block_size = int(block_size)
        self.shape = (d, r)
        self.manifold = manifold

    def _cols(self) -> np.ndarray:
        return self.X if self.landmarks_ is None else self._landmark_rows

    def _project(self, M):
        """(X_R M, X_C M): the rows' and the columns' projections (autograd-traceable)."""
        xp = arrays.namespace(M)
        Y = xp.matmul(self.X, M)
        return Y, (Y if self.landmarks_ is None else xp.matmul(self._landmark_rows, M))

    def _point(self, M):
        """M as an array of the rows' namespace, device and float dtype."""
        return arrays.as_point(M, self.X)

    def _distances(self, sl):
        """Rows ``sl`` of δ (against the landmarks, if any), from X, in X's namespace:
        Euclidean as √max(‖a‖² + ‖b‖² − 2aᵀb, 0) (scikit-learn's ``euclidean_distances``
        form) there, another metric by :func:`sklearn.metrics.pairwise_distances` on the
        host; d(x_i, x_i) = 0 exactly."""
        A = self.X[sl, :]
        B = self._cols()
        xp = arrays.namespace(A)
        if self.metric == "euclidean":
            squares = (xp.sum(A * A, axis=1)[:, None] + xp.sum(B * B, axis=1)[None, :]
                       - 2.0 * (A @ B.T))
            D = xp.sqrt(xp.clip(squares, 0.0, None))
        else:
            try:
                from sklearn.metrics import pairwise_distances

                D = arrays.like(pairwise_distances(arrays.to_host(A), arrays.to_host(B),
                                                   metric=self.metric), A)
            except (TypeError, ValueError) as exc:
                raise ParameterError("metric", f"{exc}") from None
        i = np.arange(sl.start, min(sl.stop, self.X.shape[0]))
        rows = i if self.rows_ is None else self.rows_[i]  # the rows' own indices
        cols = np.arange(B.shape[0]) if self.landmarks_ is None else self.landmarks_
        where = arrays.device(D)
        own = xp.asarray(rows, device=where)[:, None] == xp.asarray(cols, device=where)[None, :]
        return xp.where(own, xp.zeros_like(D), D)

    @property
    def delta(self) -> np.ndarray:
        """The dissimilarities (n×n, n×m with landmarks, s×m with sampled rows); formed here
        when not stored."""
        return self._delta if self._delta is not None else self._distances(
            slice(0, self.X.shape[0]))

    def _blocks(self):
        """(rows, δ of those rows) per block; δ recomputed when it is not stored."""
        n = self.X.shape[0]
        b = self.block_size
        for i in range(0, n, b):
            sl = slice(i, min(i + b, n))
            yield sl, (self._delta[sl, :] if self._delta is not None else self._distances(sl))

    @property
    def _scale(self) -> float:
        """(n/s)(n/m) with landmarks (an unbiased estimate of Σ_ij; s = n without sampled
        rows), else 1."""
        if self.landmarks_ is None:
            return 1.0
        n = self.n_samples
        return (n / self.X.shape[0]) * (n / len(self.landmarks_))

    # -- cost (autograd-traceable) ------------------------------------------------------------
    def cost(self, M):
        M = M if arrays.traced(M) else self._point(M)
        xp = arrays.namespace(M)
        Y, Yc = self._project(M)
        smoothing = self.smoothing
        total = 0.0
        for sl, delta in self._blocks():
            diff = Y[sl, :][:, None, :] - Yc[None, :, :]
            s = xp.sqrt(xp.sum(diff**2, axis=2) + smoothing**2)
            total = total + xp.sum((delta - (s - smoothing)) ** 2)
        return self._scale * total

    def stress(self, M) -> float:
        """Kruskal's stress-1, √(Σ(δ_ij − ‖Mᵀ(x_i − x_j)‖)² / Σ δ_ij²), exact distances (no ε),
        over the pairs the cost sums (all, or (i, landmark))."""
        M = self._point(M)
        xp = arrays.namespace(M)
        Y, Yc = self._project(M)
        num = den = 0.0
        for sl, delta in self._blocks():
            dist = xp.sqrt(xp.sum((Y[sl, :][:, None, :] - Yc[None, :, :]) ** 2, axis=2))
            num += float(xp.sum((delta - dist) ** 2))
            den += float(xp.sum(delta**2))
        return float(np.sqrt(num / den))

    # -- closed-form oracles ------------------------------------------------------------------
    def _omega(self, Y, Yc, sl, delta):
        """(differences u, s, Ω) for the rows ``sl``."""
        xp = arrays.namespace(Y)
        diff = Y[sl, :][:, None, :] - Yc[None, :, :]
        s = xp.sqrt(xp.sum(diff * diff, axis=2) + self.smoothing**2)
        omega = 2.0 - 2.0 * (delta + self.smoothing) / s
        return diff, s, omega

    def _pairs_times(self, om, A, Ac, sl, out_rows, out_cols):
        """Add rows ``sl`` of diag(Ω1)A_R − ΩA_C to ``out_rows`` and ΩᵀA_R − diag(Ωᵀ1)A_C to
        ``out_cols`` ((L1); A = Y, or Z for the Hessian)."""
        xp = arrays.namespace(om)
        out_rows[sl, :] += xp.sum(om, axis=1)[:, None] * A[sl, :] - om @ Ac
        out_cols += om.T @ A[sl, :] - xp.sum(om, axis=0)[:, None] * Ac

    def _combine(self, rows, cols):
        """X_Rᵀ rows − X_Cᵀ cols, times n/m (L1); 2XᵀL_Ω(·) when the columns are all rows."""
        return self._scale * (self.X.T @ rows - self._cols().T @ cols)

    def egrad(self, M):
        Y, Yc = self._project(self._point(M))
        xp = arrays.namespace(Y)
        rows = xp.zeros_like(Y)
        cols = xp.zeros_like(Yc)
        for sl, delta in self._blocks():
            _, _, om = self._omega(Y, Yc, sl, delta)
            self._pairs_times(om, Y, Yc, sl, rows, cols)
        return self._combine(rows, cols)

    def phi(self, M):
        """Φ with ∇f = 2ΦM: (1/2)(n/m)(X_Rᵀ diag(Ω1) X_R − X_RᵀΩX_C − X_CᵀΩᵀX_R
        + X_Cᵀ diag(Ωᵀ1) X_C), symmetrized."""
        Y, Yc = self._project(self._point(M))
        xp = arrays.namespace(Y)
        Xc = self._cols()
        d = self.X.shape[1]
        P = xp.zeros((d, d), dtype=Y.dtype, device=arrays.device(Y))
        colsum = xp.zeros((Xc.shape[0],), dtype=Y.dtype, device=arrays.device(Y))
        for sl, delta in self._blocks():
            _, _, om = self._omega(Y, Yc, sl, delta)
            P += self.X[sl, :].T @ (xp.sum(om, axis=1)[:, None] * self.X[sl, :] - 2.0 * om @ Xc)
            colsum += xp.sum(om, axis=0)
        P += Xc.T @ (colsum[:, None] * Xc)
        return 0.5 * self._scale * 0.5 * (P + P.T)

    def ehvp(self, M, V):
        Y, Yc = self._project(self._point(M))
        Z, Zc = self._project(self._point(V))
        xp = arrays.namespace(Y)
        rows = xp.zeros_like(Y)
        cols = xp.zeros_like(Yc)
        for sl, delta in self._blocks():
            diff, s, om = self._omega(Y, Yc, sl, delta)
            uw = xp.sum(diff * (Z[sl, :][:, None, :] - Zc[None, :, :]), axis=2)
            omp = 2.0 * (delta + self.smoothing) * uw / s**3
            self._pairs_times(om, Z, Zc, sl, rows, cols)
            self._pairs_times(omp, Y, Yc, sl, rows, cols)
        return self._combine(rows, cols)

    def heuristic(self) -> np.ndarray:
        d, r = self.shape
        _, V = scipy.linalg.eigh(self._scatter, subset_by_index=[d - r, d - 1])
        return V[:, ::-1].copy()

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) M."""
        return self.mean_, M


def _memory(n: int) -> float:
    """Bytes of the oracles' arrays: the stored n×n δ and its blocks (8·3.1·n², measured) up
    to ``STORE_MAX`` rows, blocks of about 2²¹ numbers (a few of them) beyond."""
    return (8 * 3.1 * n**2 if n <= STORE_MAX else 0.0) + 2**27
