"""Rows in, second-order statistics out: one pass over an ndarray, a Dask array or chunks.

Every second-order objective (PCA, orthogonal LDA, MAF, SFA, CCA, PPCA, factor analysis)
depends on its data X (n × d, samples as rows) only through d×d statistics.  This module is
the one place that computes them, from

* a NumPy array (one chunk; an ``np.memmap`` is read in row chunks, never copied whole);
* a ``dask.array.Array`` (or a Dask DataFrame, through ``to_dask_array(lengths=True)``): one
  task per row block, merged in a tree of tasks, computed with whatever scheduler is active —
  Dask's local threads by default, the cluster under a ``dask.distributed.Client``;
* an iterator of NumPy chunks (rows in order), e.g. read from files one at a time; for
  labelled data each item is a pair ``(X_chunk, y_chunk)``;
* a :class:`Moments` already computed (passed through after checking it holds what is asked).

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
``ldr._validation.check_data``, with the rows where the problem is.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterator

import numpy as np
import scipy.sparse

#: rows per chunk when a NumPy memmap is read in pieces (about 64 MB of float64 at d = 100)
MEMMAP_CHUNK_BYTES = 64 * 2**20


def is_lazy(X) -> bool:
    """Whether ``X`` is a Dask collection (array or DataFrame); never imports Dask."""
    return hasattr(X, "__dask_graph__") and not isinstance(X, np.ndarray)


def is_chunked(X) -> bool:
    """Whether ``X`` is read in pieces: a Dask collection, an iterator of chunks, a memmap or
    :class:`Moments` — anything :func:`moments` accepts without an in-memory copy."""
    return (is_lazy(X) or isinstance(X, (Iterator, np.memmap, Moments)))


def _nbytes(n) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def refuse_lazy(X, name: str, method: str, pairwise: bool = False) -> None:
    """Raise a ValueError, stating the memory needed, when ``X`` is a Dask collection.

    For methods that need the data (and, with ``pairwise``, an n×n matrix) in memory.
    Nothing is computed: n comes from the known chunk sizes.
    """
    if not is_lazy(X):
        return
    shape = tuple(getattr(X, "shape", ()))
    n = shape[0] if shape else float("nan")
    d = shape[1] if len(shape) > 1 else (len(getattr(X, "columns", ())) or float("nan"))
    if isinstance(n, numbers.Number) and np.isfinite(n) and np.isfinite(d):
        data = 8 * int(n) * int(d)
        need = f"{_nbytes(data)} for the n×d float64 data (n = {int(n)}, d = {int(d)})"
        if pairwise:
            need += f" plus {_nbytes(8 * int(n) ** 2)} for each n×n matrix it forms"
    else:
        need = (f"8·n·d bytes for the data (d = {d}, n unknown: Dask does not know its chunk "
                "sizes)" + (" plus 8·n² bytes for each n×n matrix it forms" if pairwise else ""))
    raise ValueError(
        f"{name}: {method} needs its data in memory and does not accept a Dask array: it "
        f"would need at least {need}. Compute it first ({name}.compute()) if that fits, or "
        "subsample; the methods that scale out are PCA, OrthogonalLDA, MAF, SFA, CCA, "
        "OrthogonalCCA, PPCA and FactorAnalysis.")


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
            raise ValueError("y: these statistics were computed without class labels")
        dev = (self.class_offsets - self.offset) * np.sqrt(self.class_counts / self.n)[:, None]
        return _sym(self.within) / self.n, dev.T @ dev, self.shift + self.class_offsets

    def lagged_covariance(self) -> np.ndarray:
        """Σ_δ = ½ (C_δ + C_δᵀ), C_δ = Σ_t (x_t − mean)(x_{t+δ} − mean)ᵀ / (n − δ)."""
        self._need("lagged")
        return _sym(self.lagged) / (self.n - self.lag)

    def diff_moment(self) -> np.ndarray:
        """Σ_t (x_{t+δ} − x_t)(x_{t+δ} − x_t)ᵀ / (n − δ), symmetric."""
        self._need("diff")
        return _sym(self.diff) / (self.n - self.lag)

    def block(self, rows: slice, cols: slice) -> np.ndarray:
        """A block of the covariance (divided by n − 1): e.g. CCA's Σ_ab of stacked views."""
        return self.scatter[rows, cols] / (self.n - 1)

    def _need(self, what: str) -> None:
        if getattr(self, what) is None:
            raise ValueError(f"X: these statistics were computed without the lag-{what} "
                             "products; compute them with moments(..., lag=δ)")


def _sym(S: np.ndarray) -> np.ndarray:
    return 0.5 * (S + S.T)


# --- one chunk ---------------------------------------------------------------------------------
def check_chunk(X, name: str, start: int | None) -> np.ndarray:
    where = "" if start is None else f" (rows {start}..{start + len(X) - 1})"
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name}: expected 2-D chunks of shape (n_rows, n_features), got "
                         f"shape {X.shape}{where}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name}: must be numeric, got dtype {X.dtype}{where}")
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name}: Input contains NaN or infinity{where}")
    from ldr._validation import check_magnitude

    check_magnitude(X, name)
    return X


def _check_chunk_labels(y, n_rows: int, name: str, start: int | None) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n_rows:
        where = "" if start is None else f" at rows {start}..{start + n_rows - 1}"
        raise ValueError(f"{name}: has a chunk of shape {y.shape}{where} where X has "
                         f"{n_rows} rows; one label per row is needed")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name}: labels contain NaN or infinity")
    return y


def chunk_moments(X, y=None, lag: int | None = None, diff: bool = False, name: str = "X",
                  start: int | None = None, y_name: str = "y") -> Moments:
    """:class:`Moments` of one chunk of rows (validated); ``start`` is its first row number."""
    X = check_chunk(X, name, start)
    n, d = X.shape
    if n == 0:
        return Moments(0, np.zeros(d), np.zeros(d), np.zeros((d, d)), lag=lag,
                       **_empty_extras(d, y is not None, lag, diff))
    c = X.mean(axis=0)
    Y = X - c  # exact where |x − c| ≤ |c| (Sterbenz)
    u = Y.mean(axis=0)
    Yc = Y - u
    out = Moments(n, c, u, Yc.T @ Yc, lag=lag)
    if y is not None:
        labels, codes = np.unique(_check_chunk_labels(y, n, y_name, start),
                                  return_inverse=True)
        codes = codes.reshape(-1)
        counts = np.bincount(codes, minlength=len(labels)).astype(float)
        onehot = scipy.sparse.csr_matrix((np.ones(n), (codes, np.arange(n))),
                                         shape=(len(labels), n))
        offsets = (onehot @ Y) / counts[:, None]
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
        raise ValueError(f"X: chunks with different numbers of features ({a.d} and {b.d})")
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
        raise ValueError("X: no rows (the iterator of chunks was empty)")
    while len(parts) > 1:
        parts = [merge(parts[i], parts[i + 1]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


# --- inputs --------------------------------------------------------------------------------------
def _check_lag(lag) -> int | None:
    if lag is None:
        return None
    if isinstance(lag, bool) or not isinstance(lag, numbers.Integral) or lag < 1:
        raise ValueError(f"lag: the time lag must be a positive integer number of samples, "
                         f"got {lag!r}")
    return int(lag)


def moments(X, y=None, *, lag: int | None = None, diff: bool = False, name: str = "X",
            y_name: str = "y", min_samples: int = 2, progress: bool = False,
            chunk_bytes: int = MEMMAP_CHUNK_BYTES) -> Moments:
    """One pass over the rows ``X`` (and labels ``y``): their :class:`Moments`.

    Parameters
    ----------
    X : ndarray, np.memmap, dask array or DataFrame, iterator of chunks, or Moments
        Samples as rows (in time order when ``lag`` is given).  An iterator yields NumPy
        chunks, or pairs ``(X_chunk, y_chunk)`` when labelled (then leave ``y`` None).
    y : labels (ndarray or dask array), one per row, optional
    lag : int, optional
        Also the lagged products at this lag (MAF); with ``diff``, the difference products
        (SFA).
    min_samples : the fewest rows accepted (checked after the pass for chunked input)
    progress : a tqdm bar over the chunks (iterators and the local Dask scheduler)
    chunk_bytes : size of the row chunks a memmap is read in

    Examples
    --------
    >>> import numpy as np
    >>> X = 1e6 + np.random.default_rng(0).standard_normal((1000, 3))
    >>> st = moments(iter(np.array_split(X, 7)), lag=1)    # seven chunks, in time order
    >>> Z = X - X.mean(axis=0)
    >>> bool(np.allclose(st.covariance(), Z.T @ Z / 1000, rtol=1e-12, atol=0))
    True
    >>> L = Z[:-1].T @ Z[1:] / 999
    >>> bool(np.allclose(st.lagged_covariance(), (L + L.T) / 2, rtol=1e-9, atol=1e-15))
    True
    """
    lag = _check_lag(lag)
    if isinstance(X, Moments):
        out = X
        if y is not None:
            raise ValueError(f"{y_name}: pass the labels with the rows, not with precomputed "
                             "statistics")
    elif is_lazy(X) or (y is not None and is_lazy(y)):
        out = _dask_moments(X, y, lag, diff, name, y_name, progress)
    elif isinstance(X, Iterator):
        if y is not None:
            raise ValueError(f"{y_name}: with an iterator of chunks, yield (X_chunk, y_chunk) "
                             "pairs instead of passing y")
        out = _iter_moments(X, lag, diff, name, y_name, progress)
    elif isinstance(X, np.memmap):
        out = _iter_moments(_memmap_chunks(X, y, chunk_bytes, name), lag, diff, name, y_name,
                            progress)
    else:
        out = _array_moments(X, y, lag, diff, name, y_name)
    _check_result(out, y is not None or out.labels is not None, lag, diff, name, min_samples)
    return out


def _array_moments(X, y, lag, diff, name, y_name) -> Moments:
    from ldr._validation import check_data

    X = check_data(X, name, min_samples=1)
    if y is not None:
        from ldr._validation import check_labels

        check_labels(y, X.shape[0], y_name)
    return chunk_moments(X, y, lag, diff, name, None, y_name)


def _check_result(out: Moments, labelled, lag, diff, name, min_samples) -> None:
    if out.n < min_samples:
        raise ValueError(f"{name}: Found array with {out.n} sample(s) while a minimum of "
                         f"{min_samples} is required.")
    if labelled and out.labels is None:
        raise ValueError("y: these statistics were computed without class labels")
    if labelled and len(out.labels) < 2:
        raise ValueError(f"y: at least two classes are needed, got {len(out.labels)} "
                         f"({out.labels.tolist()!r})")
    if lag is not None and out.lag != lag:
        raise ValueError(f"lag: these statistics hold lag {out.lag}, not {lag}")
    if diff and out.diff is None:
        raise ValueError(f"{name}: these statistics were computed without difference products")


def _memmap_chunks(X, y, chunk_bytes, name):
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array, got shape {X.shape}")
    step = max(1, int(chunk_bytes // max(1, 8 * X.shape[1])))
    for start in range(0, X.shape[0], step):
        part = np.array(X[start:start + step], dtype=np.float64)
        yield part if y is None else (part, np.asarray(y[start:start + step]))


def _iter_moments(chunks, lag, diff, name, y_name, progress) -> Moments:
    if progress:
        from tqdm.auto import tqdm

        chunks = tqdm(chunks, desc="chunks", unit="chunk")
    parts, start, labelled = [], 0, None
    for item in chunks:
        pair = isinstance(item, tuple)
        if labelled is None:
            labelled = pair
        elif pair != labelled:
            raise ValueError(f"{name}: the iterator mixes (X, y) pairs and bare chunks")
        Xk, yk = item if pair else (item, None)
        part = chunk_moments(Xk, yk, lag, diff, name, start, y_name)
        start += part.n
        parts.append(part)
        if len(parts) >= 64:  # keep memory bounded: merge as we go, in a balanced way
            parts = _fold(parts)
    return merge_all(parts)


def _fold(parts):
    """Merge the oldest pairs so that at most ~log2(n) partial results are held."""
    head = merge_all(parts[:32])
    return [head, *parts[32:]]


# --- Dask ----------------------------------------------------------------------------------------
def as_dask_array(X, name):
    if hasattr(X, "to_dask_array"):  # a Dask DataFrame or Series
        X = X.to_dask_array(lengths=True)
    if not hasattr(X, "to_delayed"):
        import dask.array as da

        X = da.asarray(X)
    return X


def _dask_moments(X, y, lag, diff, name, y_name, progress) -> Moments:
    import dask

    X = as_dask_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (n_samples, n_features), got "
                         f"a Dask array with shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name}: must be numeric, got dtype {X.dtype}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    row_chunks = X.chunks[0]
    known = all(np.isfinite(c) for c in row_chunks)
    if y is not None:
        y = as_dask_array(y, y_name)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"{y_name}: expected a 1-D array of labels, got shape {y.shape}")
        y_known = all(np.isfinite(c) for c in y.chunks[0])
        if known and y_known:
            if y.shape[0] != X.shape[0]:
                raise ValueError(f"{y_name}: has {y.shape[0]} labels but {name} has "
                                 f"{X.shape[0]} samples; they must match")
            y = y.rechunk((row_chunks,))
        elif y.numblocks[0] != X.numblocks[0]:  # unknown sizes: blocks must pair one to one
            raise ValueError(f"{name}: the Dask arrays' chunk sizes are unknown and {name}, "
                             f"{y_name} have different numbers of blocks; build them with "
                             "to_dask_array(lengths=True) or call compute_chunk_sizes()")
    starts = np.concatenate([[0], np.cumsum(row_chunks)[:-1]]) if known else \
        [None] * len(row_chunks)
    xb = X.to_delayed().ravel()
    yb = y.to_delayed().ravel() if y is not None else [None] * len(xb)
    task = dask.delayed(chunk_moments, pure=True)
    parts = [task(b, c, lag, diff, name, None if s is None else int(s), y_name)
             for b, c, s in zip(xb, yb, starts)]
    join = dask.delayed(_merge_many, pure=True)
    while len(parts) > 1:  # a tree of merges, 8 at a time, in row order
        parts = [join(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    if progress and not _distributed_active():
        with _TqdmCallback(len(xb)):
            return dask.compute(parts[0])[0]
    return dask.compute(parts[0])[0]


def _merge_many(*parts) -> Moments:
    return merge_all(parts)


def _distributed_active() -> bool:
    try:
        from distributed import default_client

        default_client()
        return True
    except (ImportError, ValueError):
        return False


def _TqdmCallback(total: int):
    """A Dask (local scheduler) callback that advances a tqdm bar per chunk read."""
    from dask.callbacks import Callback
    from tqdm.auto import tqdm

    class Bar(Callback):
        def _start(self, dsk):
            self.bar = tqdm(total=total, desc="chunks", unit="chunk")

        def _posttask(self, key, result, dsk, state, worker_id):
            name = key[0] if isinstance(key, tuple) else key
            if str(name).startswith("chunk_moments"):
                self.bar.update(1)

        def _finish(self, dsk, state, errored):
            self.bar.close()

    return Bar()


def map_rows(X, fn, n_features: int, n_out: int, name: str = "X"):
    """``fn`` applied to each row block of the Dask array ``X``: a lazy (n × n_out) Dask array
    (``map_blocks``), so a pipeline stays out of core.  ``fn`` maps an ndarray block of rows
    to its n_out columns (e.g. an objective's ``transform``)."""
    X = as_dask_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (n_samples, n_features), got "
                         f"a Dask array with shape {X.shape}")
    if X.shape[1] != n_features:
        raise ValueError(f"{name}: has {X.shape[1]} features, but the estimator was fitted "
                         f"with {n_features}")
    X = X.rechunk({1: -1})
    return X.map_blocks(_apply_block, fn, chunks=(X.chunks[0], (n_out,)), dtype=np.float64,
                        meta=np.empty((0, n_out)))


def _apply_block(block, fn):
    return np.asarray(fn(block), dtype=np.float64)
