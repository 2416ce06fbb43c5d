"""The numerics of rows → second-order statistics: :class:`~ldr.data.statistics.Moments`,
one chunk's moments and their lossless merge.

**Numerics.**  Each chunk k is shifted by c_k = fl(mean of the chunk) — a difference
x − c_k of two nearby floats is exact (Sterbenz) — and keeps its count n_k, its exact-mean
offset u_k = mean(x − c_k) and its centered scatter S_k = Σ (x − c_k − u_k)(x − c_k − u_k)ᵀ.
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

Validation runs on each chunk when it is read (finite entries, numeric, two dimensions, as
many labels as rows) and raises the same ``ValueError`` naming the argument as
``ldr.data.validation.check_data``, with the rows where the problem is.

The sources of chunks (arrays, memmaps, Dask arrays, iterators) are :mod:`ldr.data.rows`;
each chunk is validated by :func:`ldr.data.validation.check_chunk` when it is read.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse

from ldr.data import arrays
from ldr.data.validation import check_chunk, check_chunk_labels, check_labels
from ldr.errors import ParameterError


@dataclasses.dataclass
class Moments:
    """Counts, means and centered second-order sums of rows, mergeable without loss.

    The mean is ``shift + offset`` (``offset`` small and accurate, see the module docstring).

    Attributes
    ----------
    n : number of rows
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
        U = np.asarray(U, dtype=float)
        if U.ndim != 2 or U.shape[0] != self.d:
            raise ParameterError("U", f"expected a basis of shape ({self.d}, k), got {U.shape}")

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
        """These moments with every array as NumPy on the host (those of
        ``namespace_moments`` are in the rows' namespace and on their device)."""
        return dataclasses.replace(self, **{
            f.name: arrays.to_host(getattr(self, f.name)) for f in dataclasses.fields(self)
            if arrays.foreign(getattr(self, f.name)) is not None})

    def _need(self, what: str) -> None:
        if getattr(self, what) is None:
            raise ParameterError("X", f"these statistics were computed without the lag-{what} "
                             "products; compute them with moments(..., lag=δ)")


def _sym(S: np.ndarray) -> np.ndarray:
    return 0.5 * (S + S.T)


#: below this many entries of Y, :func:`_class_sums` adds the rows with ``np.add.at`` (about
#: 20 µs on a 150×4 table against 250 µs for building the sparse one-hot matrix); above it
#: ``np.add.at``'s per-row loop is the slower one
_ADD_AT_ENTRIES = 10_000


def _class_sums(Y: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """The k×d sums of the rows of ``Y`` in each class (``codes``: each row's class index).
    Both ways add a class's rows one at a time, in row order, from zero (the sparse one-hot
    product's CSR loop and ``np.add.at``), so they give the same bits (tested)."""
    n = Y.shape[0]
    if Y.size <= _ADD_AT_ENTRIES:
        out = np.zeros((k, Y.shape[1]))
        np.add.at(out, codes, Y)
        return out
    onehot = scipy.sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(k, n))
    return onehot @ Y


def chunk_moments(X, y=None, lag: int | None = None, diff: bool = False, name: str = "X",
                  start: int | None = None, y_name: str = "y",
                  width: int | None = None) -> Moments:
    """:class:`Moments` of one chunk of rows (validated); ``start`` is its first row number,
    ``width`` the number of features the whole array declares (a chunk of another width is
    an error naming its rows)."""
    X = check_chunk(X, name, start)
    n, d = X.shape
    if width is not None and d != width:
        where = "" if start is None else f" at rows {start}..{start + n - 1}"
        raise ParameterError(name, f"has a chunk{where} with {d} features where the array "
                             f"declares {width}: its chunks change width mid-way; rebuild it "
                             "with blocks of one shape")
    if n == 0:
        return Moments(0, np.zeros(d), np.zeros(d), np.zeros((d, d)), lag=lag,
                       **_empty_extras(d, y is not None, lag, diff))
    c = X.mean(axis=0)
    Y = X - c  # exact where |x − c| ≤ |c| (Sterbenz)
    u = Y.mean(axis=0)
    Yc = Y - u
    out = Moments(n, c, u, Yc.T @ Yc, lag=lag)
    if y is not None:
        labels, codes = np.unique(check_chunk_labels(y, n, y_name, start),
                                  return_inverse=True)
        codes = codes.reshape(-1)
        counts = np.bincount(codes, minlength=len(labels)).astype(float)
        offsets = _class_sums(Y, codes, len(labels)) / counts[:, None]
        Z = Y - offsets[codes]
        out.labels, out.class_counts, out.class_offsets, out.within = (
            labels, counts, offsets, Z.T @ Z)
    if lag is not None:
        out.lagged = Yc[:-lag].T @ Yc[lag:] if n > lag else np.zeros((d, d))
        if diff:
            Dx = Y[lag:] - Y[:-lag] if n > lag else np.zeros((0, d))
            out.diff = Dx.T @ Dx
        out.head, out.tail = X[:lag].copy(), X[-lag:].copy()
    return out


def namespace_moments(X, y=None, lag: int | None = None, diff: bool = False,
                      name: str = "X", y_name: str = "y") -> Moments:
    """:class:`Moments` of rows of another array namespace than NumPy (a PyTorch tensor, on a
    GPU or not), computed there, as :func:`chunk_moments` computes them: every statistic is an
    array of that namespace, on that device, in X's float dtype (an integer X is float64).
    The labels ``y`` are read on the host (n labels, once) for their classes; the class sums
    are one (n × classes) one-hot product on the device."""
    xp = arrays.namespace(X)
    if X.ndim != 2:
        raise ParameterError(name, f"expected a 2-D array (samples as rows), got shape "
                                   f"{tuple(X.shape)}")
    if not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64)
    n, d = X.shape
    c = xp.mean(X, axis=0)
    # a NaN or infinity in X reaches its column's mean: one pass fewer than checking X itself
    if not arrays.all_finite(c):
        if not arrays.all_finite(X):
            raise ParameterError(name, "contains NaN or infinity; remove or impute those rows")
        raise ParameterError(name, "the column sums overflow its float dtype; rescale X")
    if y is None and lag is None:
        scatter = _uncentred_scatter(X, c, xp)
        if scatter is not None:  # X is never copied: two reads of it in all
            return Moments(n, c, xp.zeros_like(c), scatter, lag=lag)
    Y = X - c  # exact where |x − c| ≤ |c| (Sterbenz)
    u = xp.mean(Y, axis=0)
    # Σ (y − u)(y − u)ᵀ = YᵀY − n·uuᵀ: u is rounding-sized, so no second centred copy of X
    out = Moments(n, c, u, Y.T @ Y - n * (u[:, None] * u[None, :]), lag=lag)
    if y is not None:
        dev = arrays.device(X)
        labels, codes = _device_labels(y, n, xp, dev, y_name)
        onehot = xp.astype(codes[:, None] == xp.arange(len(labels), device=dev)[None, :],
                           X.dtype)
        counts = xp.sum(onehot, axis=0)
        offsets = (onehot.T @ Y) / counts[:, None]
        Z = Y - onehot @ offsets
        out.labels, out.class_counts, out.class_offsets, out.within = (
            labels, counts, offsets, Z.T @ Z)
    if lag is not None:
        Yc = Y - u
        out.lagged = Yc[:-lag, :].T @ Yc[lag:, :] if n > lag else xp.zeros_like(out.scatter)
        if diff:
            Dx = Y[lag:, :] - Y[:-lag, :] if n > lag else Y[:0, :]
            out.diff = Dx.T @ Dx
        out.head, out.tail = X[:lag, :], X[max(n - lag, 0):, :]
    return out


def _uncentred_scatter(X, c, xp):
    """S = XᵀX − n·ccᵀ, without the centred copy X − c, where that loses at most a factor 2
    of accuracy; else None.  The rounding of S_jk is about ε·√(G_jj G_kk) with G = XᵀX, that
    is ε·√((1 + ρ_j)(1 + ρ_k))·√(S_jj S_kk) with ρ_j = n c_j²/S_jj (the squared mean over the
    variance): the centred path's error times (1 + ρ) at most.  Accepted when every
    ρ_j ≤ 1 (each column's mean within one standard deviation of 0, as for standardized
    data), which saves two of the five passes over X (on a GPU, where PCA is bandwidth-bound,
    nearly half its time)."""
    n = X.shape[0]
    S = X.T @ X - n * (c[:, None] * c[None, :])
    var = xp.linalg.diagonal(S)
    return S if bool(xp.all(var > 0) & xp.all(n * c * c <= var)) else None


def _device_labels(y, n, xp, device, y_name):
    """``(classes, codes)`` as :func:`~ldr.data.validation.check_labels` gives them, for
    labels in X's namespace: the unique values found there (an n-row sort on the device,
    not on the host), only the classes (a few values) read back, the codes kept there."""
    if arrays.foreign(y) is None or arrays.namespace(y) is not xp \
            or not hasattr(xp, "unique_inverse"):
        labels, codes = check_labels(arrays.to_host(y), n, y_name)
        return labels, xp.asarray(codes, device=device)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n:  # check_labels words both errors
        check_labels(arrays.to_host(y), n, y_name)
    if xp.isdtype(y.dtype, "real floating") and not arrays.all_finite(y):
        raise ParameterError(y_name, "labels contain NaN or infinity")
    values, codes = xp.unique_inverse(y)
    labels = arrays.to_host(values)
    if labels.shape[0] < 2:
        raise ParameterError(y_name, f"at least two classes are needed, got {labels.shape[0]} "
                                     f"({labels.tolist()!r})")
    return labels, xp.reshape(xp.asarray(codes, device=device), (-1,))


def _empty_extras(d, labelled, lag, diff):
    extras = {}
    if labelled:
        extras.update(labels=np.array([]), class_counts=np.zeros(0),
                      class_offsets=np.zeros((0, d)), within=np.zeros((d, d)))
    if lag is not None:
        extras.update(lagged=np.zeros((d, d)), head=np.zeros((0, d)), tail=np.zeros((0, d)))
        if diff:
            extras["diff"] = np.zeros((d, d))
    return extras


# --- merging -----------------------------------------------------------------------------------
def merge(a: Moments, b: Moments) -> Moments:
    """The :class:`Moments` of the rows of ``a`` followed by those of ``b`` (order matters only
    for the lagged and difference products)."""
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
    out = Moments(n, c, u, a.scatter + b.scatter + (a.n * b.n / n) * np.outer(delta, delta),
                  lag=a.lag)
    if a.labels is not None:
        _merge_classes(out, a, b, (b.shift - c) + b.class_offsets)
    if a.lag is not None:
        _merge_lagged(out, a, b, ub)
    return out


def _merge_classes(out: Moments, a: Moments, b: Moments, b_offsets: np.ndarray) -> None:
    labels = np.union1d(a.labels, b.labels)
    k, d = len(labels), a.d
    counts = np.zeros(k)
    ia, ib = np.searchsorted(labels, a.labels), np.searchsorted(labels, b.labels)
    counts[ia] += a.class_counts
    counts[ib] += b.class_counts
    offsets = np.zeros((k, d))
    offsets[ia] = a.class_offsets
    within = a.within + b.within
    both = np.isin(b.labels, a.labels)
    # classes seen in both: Chan's merge of their within-class scatter
    jb = ib[both]
    na, nb = counts[jb] - b.class_counts[both], b.class_counts[both]
    delta = b_offsets[both] - offsets[jb]
    offsets[jb] += (nb / (na + nb))[:, None] * delta
    weighted = delta * np.sqrt(na * nb / (na + nb))[:, None]
    within = within + weighted.T @ weighted
    offsets[ib[~both]] = b_offsets[~both]
    out.labels, out.class_counts, out.class_offsets, out.within = labels, counts, offsets, within


def _moved(L: np.ndarray, head: np.ndarray, tail: np.ndarray, e: np.ndarray, p: int
           ) -> np.ndarray:
    """L_P about the merged mean: L + a eᵀ + e bᵀ + p eeᵀ (module docstring); ``head`` and
    ``tail`` are already relative to the segment's own mean."""
    a, b = -tail.sum(axis=0), -head.sum(axis=0)
    return L + np.outer(a, e) + np.outer(e, b) + p * np.outer(e, e)


def _merge_lagged(out: Moments, a: Moments, b: Moments, ub: np.ndarray) -> None:
    lag, c = a.lag, a.shift
    u = out.offset
    ta, hb = a.tail - c, b.head - c  # exact differences, in A's shift
    ha, tb = a.head - c, b.tail - c
    La = _moved(a.lagged, ha - a.offset, ta - a.offset, a.offset - u, max(a.n - lag, 0))
    Lb = _moved(b.lagged, hb - ub, tb - ub, ub - u, max(b.n - lag, 0))
    window = np.vstack([ta, hb])  # rows n_A − len(tail_A) ... n_A + len(head_B) − 1
    i = np.arange(max(0, min(len(ta), len(window) - lag)))
    lagged = La + Lb
    if i.size:
        Z = window - u
        lagged = lagged + Z[i].T @ Z[i + lag]
    out.lagged = lagged
    if a.diff is not None:
        dx = window[i + lag] - window[i]
        out.diff = a.diff + b.diff + dx.T @ dx
    out.head = np.vstack([a.head, b.head])[:lag]
    out.tail = np.vstack([a.tail, b.tail])[-lag:]


def merge_all(parts) -> Moments:
    """Merge consecutive :class:`Moments` in order (a balanced tree: rounding grows as log)."""
    parts = list(parts)
    if not parts:
        raise ParameterError("X", "no rows (the iterator of chunks was empty)")
    while len(parts) > 1:
        parts = [merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


