"""The numerics of rows → second-order statistics: :class:`~ldr.data.statistics.Moments`,
one chunk's moments and their lossless merge, in the namespace and on the device of the rows
(NumPy, PyTorch, CuPy, ...; one implementation, written against the array API).

**Numerics.**  Each chunk k is shifted by c_k = fl(mean of the chunk) — a difference
x − c_k of two nearby floats is exact (Sterbenz) — and keeps its count n_k, its exact-mean
offset u_k = mean(x − c_k) and its centered scatter S_k = Σ (x − c_k − u_k)(x − c_k − u_k)ᵀ,
computed as YᵀY − n_k u_k u_kᵀ with Y = X − c_k (u_k is rounding-sized: no second centred
copy), or as XᵀX − n_k c_k c_kᵀ without any copy where that loses at most a factor 2 of
accuracy (every column's mean within one standard deviation of 0; ``_uncentred_scatter``).
Two consecutive segments A, B merge (Chan, Golub & LeVeque 1979) in A's shift:

    Δ = (c_B − c_A + u_B) − u_A,   u = u_A + (n_B/n) Δ,   S = S_A + S_B + (n_A n_B / n) ΔΔᵀ.

Means are only ever formed as c + u at the end, so data with ``|mean| ≫ std`` (say mean 10⁶,
std 1) keep every digit of their variance: no quantity of size ``|mean|`` is squared or
subtracted from another one of its size except exactly.  The same holds for

* class statistics (LDA): per class its count and offset u_c; the within-class scatter W
  merges as S does, class by class, S_w = W/n, S_b = Σ_c n_c (u_c − u)(u_c − u)ᵀ / n;
* lagged products (MAF) L = Σ_t (x_t − m)(x_{t+δ} − m)ᵀ: a segment carries its first and
  last δ rows, so the pairs that straddle a chunk boundary are added when two segments
  merge, and L is moved from a segment's mean m_P to the merged mean m by
  L_P(m) = L_P + a eᵀ + e bᵀ + p eeᵀ, e = m_P − m, a = −Σ_tail (x − m_P),
  b = −Σ_head (x − m_P), p = max(n_P − δ, 0) (the pair sums, since Σ (x − m_P) = 0);
* difference products (SFA) D = Σ_t (x_{t+δ} − x_t)(x_{t+δ} − x_t)ᵀ, shift-free.

Validation runs on each chunk when it is read (finite entries, numeric, two dimensions, a
safe magnitude, as many labels as rows) and raises the same ``ValueError`` naming the
argument as ``ldr.data.validation.check_data``, with the rows where the problem is.

The sources of chunks (arrays, memmaps, Dask arrays, iterators) are :mod:`ldr.data.rows`.

References
----------
Chan, Golub & LeVeque (1979), Updating formulae and a pairwise algorithm for computing
sample variances, Technical Report STAN-CS-79-773, Stanford University.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.validation import check_chunk, check_chunk_labels, check_magnitude


@dataclasses.dataclass
class Moments:
    """Counts, means and centered second-order sums of rows, mergeable without loss.

    The mean is ``shift + offset`` (``offset`` small and accurate, see the module docstring).
    The arrays are of the rows' namespace and device (:meth:`on_host` copies them to NumPy);
    the labels are NumPy.

    Attributes
    ----------
    n : number of rows (with frequency weights, their sum: a float)
    shift, offset : (d,) the mean is shift + offset
    scatter : (d, d) Σ (x − mean)(x − mean)ᵀ
    labels, class_counts, class_offsets : classes (sorted), their counts and mean offsets
        (class mean = shift + class offset), or None without labels
    within : (d, d) Σ_i (x_i − mean_{c_i})(x_i − mean_{c_i})ᵀ, or None
    lag : δ of the lagged and difference products, or None
    lagged : (d, d) Σ_t (x_t − mean)(x_{t+δ} − mean)ᵀ, or None
    diff : (d, d) Σ_t (x_{t+δ} − x_t)(x_{t+δ} − x_t)ᵀ, or None
    head, tail : the first and last min(δ, n) rows (raw), for the pairs across a boundary
    """

    n: int
    shift: np.ndarray
    offset: np.ndarray
    scatter: np.ndarray
    labels: np.ndarray | None = None
    class_counts: np.ndarray | None = None
    class_offsets: np.ndarray | None = None
    within: np.ndarray | None = None
    lag: int | None = None
    lagged: np.ndarray | None = None
    diff: np.ndarray | None = None
    head: np.ndarray | None = None
    tail: np.ndarray | None = None

    @property
    def d(self) -> int:
        return self.shift.shape[0]

    @property
    def mean(self) -> np.ndarray:
        return self.shift + self.offset

    def covariance(self, ddof: int = 0) -> np.ndarray:
        """Σ (x − mean)(x − mean)ᵀ / (n − ddof), symmetric."""
        return _sym(self.scatter) / (self.n - ddof)

    def class_scatter(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(S_w, S_b, class_means)`` of LDA (survey Eq. 5), each scatter divided by n."""
        if self.labels is None:
            raise ParameterError("y", "these statistics were computed without class labels")
        dev = (self.class_offsets - self.offset) * ((self.class_counts / self.n) ** 0.5)[:, None]
        return _sym(self.within) / self.n, dev.T @ dev, self.shift + self.class_offsets

    def lagged_covariance(self, adjusted: bool = True) -> np.ndarray:
        """Σ_δ = ½ (C_δ + C_δᵀ), C_δ = Σ_t (x_t − mean)(x_{t+δ} − mean)ᵀ / (n − δ), or divided
        by n when not ``adjusted`` (statsmodels' ``acovf(adjusted=False)``, the divisor that
        keeps every autocorrelation vᵀΣ_δv / vᵀΣv in [−1, 1]; MAF's)."""
        self._need("lagged")
        return _sym(self.lagged) / (self.n - self.lag if adjusted else self.n)

    def diff_moment(self) -> np.ndarray:
        """Σ_t (x_{t+δ} − x_t)(x_{t+δ} − x_t)ᵀ / (n − δ), symmetric."""
        self._need("diff")
        return _sym(self.diff) / (self.n - self.lag)

    def block(self, rows: slice, cols: slice) -> np.ndarray:
        """A block of the covariance (divided by n − 1): e.g. CCA's Σ_ab of stacked views."""
        return self.scatter[rows, cols] / (self.n - 1)

    def project(self, U: np.ndarray) -> Moments:
        """The moments of the projected rows ``x ↦ Uᵀx`` (U: d×k), exactly: every statistic
        is linear or quadratic in the rows, so each is mapped by U (no pass over the rows)."""
        U = arrays.like(np.asarray(arrays.to_host(U), dtype=float), self.scatter)
        if U.ndim != 2 or U.shape[0] != self.d:
            raise ParameterError("U", f"expected a basis of shape ({self.d}, k), got "
                                      f"{tuple(U.shape)}")

        def quad(S):
            return None if S is None else U.T @ S @ U

        def rows(A):
            return None if A is None else A @ U

        return dataclasses.replace(
            self, shift=self.shift @ U, offset=self.offset @ U, scatter=quad(self.scatter),
            class_offsets=rows(self.class_offsets), within=quad(self.within),
            lagged=quad(self.lagged), diff=quad(self.diff), head=rows(self.head),
            tail=rows(self.tail))

    def on_host(self) -> Moments:
        """These moments with every array as NumPy on the host."""
        return dataclasses.replace(self, **{
            f.name: arrays.to_host(getattr(self, f.name)) for f in dataclasses.fields(self)
            if arrays.foreign(getattr(self, f.name)) is not None})

    def _need(self, what: str) -> None:
        if getattr(self, what) is None:
            raise ParameterError("X", f"these statistics were computed without the lag-{what} "
                             "products; compute them with moments(..., lag=δ)")


def _sym(S):
    return 0.5 * (S + S.T)


def _outer(a, b):
    return a[:, None] * b[None, :]


#: below this many entries of Y, NumPy's :func:`class_sums` adds the rows with ``np.add.at``
#: (building the sparse one-hot matrix costs more than small tables' sums), above it by the
#: sparse product (``np.add.at``'s per-row loop costs more)
# benchmark: benchmarks/bench_real.py --no-cv
ADD_AT_ENTRIES = 10_000


def class_sums(Y, codes, k: int):
    """``(counts, sums)``: the number of rows of each of the k classes and the k×d sums of the
    rows of ``Y`` in each (``codes``: each row's class index, in Y's namespace).

    NumPy adds a class's rows one at a time, in row order, from zero — by a sparse one-hot
    product (CSR) or, for small Y, ``np.add.at``: the same bits, and no n×k array; this is
    the one NumPy-only path of the statistics.  Other namespaces (the array API has no
    scatter-add) take one (n×k) one-hot product on the device."""
    xp = arrays.namespace(Y)
    n = Y.shape[0]
    if xp is np:
        counts = np.bincount(codes, minlength=k).astype(float)
        if Y.size <= ADD_AT_ENTRIES:
            sums = np.zeros((k, Y.shape[1]))
            np.add.at(sums, codes, Y)
            return counts, sums
        onehot = scipy.sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(k, n))
        return counts, onehot @ Y
    classes = xp.arange(k, device=arrays.device(Y))
    onehot = xp.astype(codes[:, None] == classes[None, :], Y.dtype)
    return xp.sum(onehot, axis=0), onehot.T @ Y


def chunk_moments(X, y=None, lag: int | None = None, diff: bool = False, name: str = "X",
                  start: int | None = None, y_name: str = "y",
                  width: int | None = None, validated: bool = False,
                  weights=None) -> Moments:
    """:class:`Moments` of one chunk of rows, validated (:func:`~ldr.data.validation.check_chunk`:
    the finiteness from the column means, which a NaN or infinity reaches), computed in the
    chunk's namespace and on its device (NumPy: float64; another namespace: its real float
    dtype, integers float64); ``start`` is its first row number, ``width`` the number of
    features the whole array declares (a chunk of another width is an error naming its
    rows).  The labels ``y`` are read on the host unless they are in X's namespace (then
    their classes are found there and only the classes are read back).  ``validated``: the
    caller checked X already (:func:`~ldr.data.rows.moments`), and it is read as it is.

    ``weights`` (n,), non-negative with a positive sum (checked by the caller,
    :func:`check_weights`), are frequency weights: the moments are those of the rows each
    repeated its weight's times — count n = Σ w_i, mean u = Σ w_i y_i / n, scatter
    Σ w_i (y_i − u)(y_i − u)ᵀ (and per class the same), so that integer weights give the
    moments of the repeated rows.  With ``lag``, the series is held: sample i lasts w_i time
    steps (:func:`held_pairs`), so that integer weights give the lagged and difference
    products of the series with each sample repeated in place."""
    if not validated:
        X = check_chunk(X, name, start, values=False)
    xp = arrays.namespace(X)
    n, d = X.shape
    where = "" if start is None else f" at rows {start}..{start + n - 1}"
    if width is not None and d != width:
        raise ParameterError(name, f"has a chunk{where} with {d} features where the array "
                             f"declares {width}: its chunks change width mid-way; rebuild it "
                             "with blocks of one shape")
    if n == 0:
        zeros = xp.zeros((d, d), dtype=X.dtype, device=arrays.device(X))
        return Moments(0, zeros[0, :], zeros[0, :], zeros, lag=lag,
                       **_empty_extras(zeros, y is not None, lag, diff))
    c = xp.mean(X, axis=0)
    if not validated:
        if not arrays.all_finite(c):  # a NaN or infinity in X, or sums that overflow
            check_chunk(X, name, start)
        check_magnitude(X, name)
    if weights is not None:
        out = _weighted_moments(X, y, c, arrays.like(weights, X), y_name, start)
        if lag is not None:
            _weighted_lagged(out, X - c, np.asarray(arrays.to_host(weights), dtype=float),
                             lag, diff)
        return out
    if y is None and lag is None:
        scatter = _uncentred_scatter(X, c, xp)
        if scatter is not None:  # X is never copied: two reads of it in all
            return Moments(n, c, xp.zeros_like(c), scatter, lag=lag)
    Y = X - c  # exact where |x − c| ≤ |c| (Sterbenz)
    u = xp.mean(Y, axis=0)
    # Σ (y − u)(y − u)ᵀ = YᵀY − n·uuᵀ: u is rounding-sized, so no second centred copy of X
    out = Moments(n, c, u, Y.T @ Y - n * _outer(u, u), lag=lag)
    if y is not None:
        labels, codes = _chunk_labels(y, n, xp, arrays.device(X), y_name, start)
        counts, sums = class_sums(Y, codes, labels.shape[0])
        offsets = sums / counts[:, None]
        Z = Y - xp.take(offsets, codes, axis=0)
        out.labels = labels
        out.class_counts = counts
        out.class_offsets = offsets
        out.within = Z.T @ Z
    if lag is not None:
        Yc = Y - u
        out.lagged = Yc[:-lag, :].T @ Yc[lag:, :] if n > lag else xp.zeros_like(out.scatter)
        if diff:
            Dx = Y[lag:, :] - Y[:-lag, :] if n > lag else Y[:0, :]
            out.diff = Dx.T @ Dx
        out.head = xp.asarray(X[:lag, :], copy=True)  # copies: the chunk is not kept alive
        out.tail = xp.asarray(X[max(n - lag, 0):, :], copy=True)
    return out


def check_weights(sample_weight, n_samples: int) -> np.ndarray:
    """``sample_weight`` as a float64 NumPy array of length ``n_samples`` with finite,
    non-negative entries and a positive sum; a ParameterError naming it otherwise (None:
    None)."""
    if sample_weight is None:
        return None
    try:
        w = np.asarray(arrays.to_host(sample_weight), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError("sample_weight", f"must be numbers ({exc})") from None
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ParameterError("sample_weight", f"expected shape ({n_samples},), one weight per "
                             f"sample, got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ParameterError("sample_weight", "weights must be finite and non-negative")
    if not np.sum(w) > 0:
        raise ParameterError("sample_weight", "every sample has zero weight (the weights "
                             "sum to 0): no sample counts")
    return w


def _weighted_moments(X, y, c, w, y_name, start) -> Moments:
    """:func:`chunk_moments` with frequency weights ``w`` (in X's namespace)."""
    xp = arrays.namespace(X)
    Y = X - c
    total = xp.sum(w)
    u = (w @ Y) / total
    Yw = Y * w[:, None]
    out = Moments(float(total), c, u, Yw.T @ Y - total * _outer(u, u))
    if y is not None:
        labels, codes = _chunk_labels(y, X.shape[0], xp, arrays.device(X), y_name, start)
        k = labels.shape[0]
        _, sums = class_sums(Yw, codes, k)
        counts = class_sums(w[:, None], codes, k)[1][:, 0]
        if not bool(xp.all(counts > 0)):
            empty = [labels[i] for i in np.flatnonzero(arrays.to_host(counts) <= 0)]
            raise ParameterError("sample_weight", f"class(es) {empty} have zero total weight: "
                                 "drop their samples, or give them a positive weight")
        offsets = sums / counts[:, None]
        Z = Y - xp.take(offsets, codes, axis=0)
        out.labels = labels
        out.class_counts = counts
        out.class_offsets = offsets
        out.within = (Z * w[:, None]).T @ Z
    return out


def held_pairs(weights: np.ndarray, lag: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (i, j) of a held series at lag δ and their weights c_ij.

    Sample i is held over the interval I_i = [s_i, s_i + w_i), s_i = Σ_{k<i} w_k, and the
    lagged products are those of the function x(t) over t ∈ [0, Σw − δ):
    ∫ x(t) x(t + δ)ᵀ dt = Σ_ij c_ij x_i x_jᵀ with c_ij the length of I_i ∩ (I_j − δ).  For integer
    weights these are the lag-δ pairs of the series with sample i repeated w_i times (the
    integral over [p, p + 1) is the pair at positions p, p + δ); unit weights give the pairs
    (i, i + δ).  Two interval partitions of one line meet in fewer than 2n pieces, so there
    are fewer than 2n pairs.  Returns the index arrays ``i``, ``j`` and ``c`` (c > 0)."""
    w = np.asarray(weights, dtype=float)
    end = np.cumsum(w)
    begin = end - w
    first = np.searchsorted(end, begin + lag, side="right")  # the first j with e_j − δ > s_i
    stop = np.searchsorted(begin, end + lag, side="left")  # past the last j with s_j − δ < e_i
    counts = np.maximum(stop - first, 0)
    i = np.repeat(np.arange(w.shape[0]), counts)
    j = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(i.shape[0])
    c = np.minimum(end[i], end[j] - lag) - np.maximum(begin[i], begin[j] - lag)
    keep = c > 0
    return i[keep], j[keep], c[keep]


def _weighted_lagged(out: Moments, Y, weights: np.ndarray, lag: int, diff: bool) -> None:
    """The lagged (and difference) products of the held series of shifted rows ``Y`` with
    weights (:func:`held_pairs`), into ``out``; a held series' moments do not merge with a
    next segment (no head and tail rows)."""
    xp = arrays.namespace(Y)
    device = arrays.device(Y)
    i, j, c = held_pairs(weights, lag)
    i = xp.asarray(i, device=device)
    j = xp.asarray(j, device=device)
    c = arrays.like(c, Y)
    Yc = Y - out.offset
    out.lag = lag
    out.lagged = (xp.take(Yc, i, axis=0) * c[:, None]).T @ xp.take(Yc, j, axis=0)
    if diff:
        Dx = xp.take(Y, j, axis=0) - xp.take(Y, i, axis=0)
        out.diff = (Dx * c[:, None]).T @ Dx


def _uncentred_scatter(X, c, xp):
    """S = XᵀX − n·ccᵀ, without the centred copy X − c, where that loses at most a factor 2
    of accuracy; else None.  The rounding of S_jk is about ε·√(G_jj G_kk) with G = XᵀX, that
    is ε·√((1 + ρ_j)(1 + ρ_k))·√(S_jj S_kk) with ρ_j = n c_j²/S_jj (the squared mean over the
    variance): the centred path's error times (1 + ρ) at most.  Accepted when every
    ρ_j ≤ 1 (each column's mean within one standard deviation of 0, as for standardized
    data), which saves two of the five passes over X."""
    n = X.shape[0]
    S = X.T @ X - n * _outer(c, c)
    var = xp.linalg.diagonal(S)
    return S if bool(xp.all(var > 0) & xp.all(n * c * c <= var)) else None


def _chunk_labels(y, n, xp, device, y_name, start):
    """``(classes, codes)`` of one chunk's labels: the sorted distinct values (NumPy, on the
    host) and each row's index among them (in X's namespace, on its device).  Labels in X's
    namespace are sorted there (an n-row sort on the device) and only the classes read back;
    others are checked and sorted on the host."""
    if arrays.foreign(y) is None or arrays.namespace(y) is not xp \
            or not hasattr(xp, "unique_inverse"):
        labels, codes = np.unique(check_chunk_labels(arrays.to_host(y), n, y_name, start),
                                  return_inverse=True)
        return labels, xp.asarray(codes.reshape(-1), device=device)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n:  # check_chunk_labels words both errors
        check_chunk_labels(arrays.to_host(y), n, y_name, start)
    if xp.isdtype(y.dtype, "real floating") and not arrays.all_finite(y):
        raise ParameterError(y_name, "labels contain NaN or infinity")
    values, codes = xp.unique_inverse(y)
    return arrays.to_host(values), xp.reshape(xp.asarray(codes, device=device), (-1,))


def _empty_extras(zeros, labelled, lag, diff):
    """The class and lag fields of an empty chunk's moments (``zeros``: a d×d zero array of
    the chunk's namespace, device and dtype)."""
    extras = {}
    if labelled:
        extras.update(labels=np.array([]), class_counts=zeros[0, :0],
                      class_offsets=zeros[:0, :], within=zeros)
    if lag is not None:
        extras.update(lagged=zeros, head=zeros[:0, :], tail=zeros[:0, :])
        if diff:
            extras["diff"] = zeros
    return extras


# --- merging -----------------------------------------------------------------------------------
def merge(a: Moments, b: Moments) -> Moments:
    """The :class:`Moments` of the rows of ``a`` followed by those of ``b`` (order matters only
    for the lagged and difference products), in their namespace and on their device."""
    if b.n == 0:
        return a
    if a.n == 0:
        return b
    if a.d != b.d:
        raise ParameterError("X", f"chunks with different numbers of features ({a.d} and {b.d})")
    n = a.n + b.n
    c = a.shift
    ub = (b.shift - c) + b.offset  # B's mean offset in A's shift
    delta = ub - a.offset
    u = a.offset + (b.n / n) * delta
    out = Moments(n, c, u, a.scatter + b.scatter + (a.n * b.n / n) * _outer(delta, delta),
                  lag=a.lag)
    if a.labels is not None:
        _merge_classes(out, a, b, (b.shift - c) + b.class_offsets)
    if a.lag is not None:
        if a.head is None or b.head is None:
            raise ParameterError("sample_weight", "the moments of a weighted (held) series do "
                                 "not extend with more rows: fit the whole series at once")
        _merge_lagged(out, a, b, ub)
    return out


def _merge_classes(out: Moments, a: Moments, b: Moments, b_offsets) -> None:
    """The classes of ``a`` and ``b`` (sorted labels on the host): counts and offsets placed
    among the union's classes by one-hot k×k_a and k×k_b products (a class absent from one
    side has count 0 there), and Chan's merge of each class's within-class scatter, which
    adds nothing for a class seen on one side only."""
    xp = arrays.namespace(a.within)
    labels = np.union1d(a.labels, b.labels)
    k = labels.shape[0]

    def placed(own):  # k × k_own, 1 where union class i is the side's class j
        rows = np.searchsorted(labels, own)
        onehot = np.zeros((k, own.shape[0]))
        onehot[rows, np.arange(own.shape[0])] = 1.0
        return arrays.like(onehot, a.within)

    Ea = placed(a.labels)
    Eb = placed(b.labels)
    na = Ea @ a.class_counts
    nb = Eb @ b.class_counts
    ua = Ea @ a.class_offsets
    delta = Eb @ b_offsets - ua
    counts = na + nb
    weighted = delta * xp.sqrt(na * nb / counts)[:, None]
    out.labels = labels
    out.class_counts = counts
    out.class_offsets = ua + (nb / counts)[:, None] * delta
    out.within = a.within + b.within + weighted.T @ weighted


def _moved(L, head, tail, e, p: int):
    """L_P about the merged mean: L + a eᵀ + e bᵀ + p eeᵀ (module docstring); ``head`` and
    ``tail`` are already relative to the segment's own mean."""
    xp = arrays.namespace(L)
    a = -xp.sum(tail, axis=0)
    b = -xp.sum(head, axis=0)
    return L + _outer(a, e) + _outer(e, b) + p * _outer(e, e)


def _last(A, k: int):
    """The last min(k, rows) rows of A."""
    return A[max(A.shape[0] - k, 0):, :]


def _merge_lagged(out: Moments, a: Moments, b: Moments, ub) -> None:
    xp = arrays.namespace(a.lagged)
    lag = a.lag
    c = a.shift
    u = out.offset
    ta = a.tail - c  # exact differences, in A's shift
    hb = b.head - c
    La = _moved(a.lagged, a.head - c - a.offset, ta - a.offset, a.offset - u,
                max(a.n - lag, 0))
    Lb = _moved(b.lagged, hb - ub, b.tail - c - ub, ub - u, max(b.n - lag, 0))
    window = xp.concat([ta, hb], axis=0)  # rows n_A − len(tail_A) ... n_A + len(head_B) − 1
    k = max(0, min(ta.shape[0], window.shape[0] - lag))  # the pairs (i, i + lag) across
    lagged = La + Lb
    if k:
        Z = window - u
        lagged = lagged + Z[:k, :].T @ Z[lag:lag + k, :]
    out.lagged = lagged
    if a.diff is not None:
        dx = window[lag:lag + k, :] - window[:k, :]
        out.diff = a.diff + b.diff + dx.T @ dx
    out.head = xp.concat([a.head, b.head], axis=0)[:lag, :]
    out.tail = _last(xp.concat([a.tail, b.tail], axis=0), lag)


def merge_all(parts) -> Moments:
    """Merge consecutive :class:`Moments` in order (a balanced tree: rounding grows as log)."""
    parts = list(parts)
    if not parts:
        raise ParameterError("X", "no rows (the iterator of chunks was empty)")
    while len(parts) > 1:
        parts = [merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


