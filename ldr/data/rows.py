"""Rows in, second-order statistics out: one pass over an ndarray, a Dask array or chunks.

Every second-order objective (PCA, orthogonal LDA, MAF, SFA, CCA, PPCA, factor analysis)
depends on its data X (n × d, samples as rows) only through d×d statistics.  This module is
the one place that computes them, from

* an in-memory array of any array namespace (NumPy, PyTorch, CuPy, ...: one chunk, computed
  in its namespace and on its device); an ``np.memmap`` is read in row chunks, never copied
  whole;
* a ``dask.array.Array`` (or a Dask DataFrame, through ``to_dask_array(lengths=True)``): one
  task per row block, merged in a tree of tasks, computed with whatever scheduler is active —
  Dask's local threads by default, the cluster under a ``dask.distributed.Client``;
* an iterator of NumPy chunks (rows in order), e.g. read from files one at a time; for
  labelled data each item is a pair ``(X_chunk, y_chunk)``;
* a :class:`~ldr.data.statistics.Moments` already computed (passed through after checking it
  holds what is asked).

The statistics themselves (:class:`~ldr.data.statistics.Moments`, their chunk-wise numerics
and merge) are :mod:`ldr.data.statistics`; every chunk is validated as it is read
(:func:`ldr.data.validation.check_chunk`: finite, numeric, two dimensions, one label per row),
with the rows where a problem is.
"""

from __future__ import annotations

import numbers
import uuid
from collections.abc import Iterator

import numpy as np

from ldr.core.errors import ChunkError, ParameterError
from ldr.data import arrays
from ldr.data.statistics import Moments, check_weights, chunk_moments, merge, merge_all
from ldr.data.validation import check_data, check_labels, is_lazy

#: rows per chunk when a NumPy memmap is read in pieces (about 64 MB of float64 at d = 100)
MEMMAP_CHUNK_BYTES = 64 * 2**20


def is_chunked(X) -> bool:
    """Whether ``X`` is read in pieces: a Dask collection, an iterator of chunks, a memmap or
    :class:`~ldr.data.statistics.Moments` — anything :func:`moments` accepts without an
    in-memory copy."""
    return (is_lazy(X) or isinstance(X, (Iterator, np.memmap, Moments)))


# --- inputs --------------------------------------------------------------------------------------
def _check_lag(lag) -> int | None:
    if lag is None:
        return None
    if isinstance(lag, bool) or not isinstance(lag, numbers.Integral) or lag < 1:
        raise ParameterError("lag", f"the time lag must be a positive integer number of samples, "
                         f"got {lag!r}")
    return int(lag)


def moments(X, y=None, *, lag: int | None = None, diff: bool = False, name: str = "X",
            y_name: str = "y", min_samples: int = 2, progress: bool = False,
            chunk_bytes: int = MEMMAP_CHUNK_BYTES, validated: bool = False,
            weights=None) -> Moments:
    """One pass over the rows ``X`` (and labels ``y``): their :class:`~ldr.data.statistics.Moments`.

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
    validated : an in-memory X (NumPy float64, or an array of another namespace in its float
        dtype) was validated by the caller — shape, finiteness and magnitude, as an
        estimator's ``fit`` does at its door — and is read as it is; chunked input is checked
        chunk by chunk all the same
    weights : (n,) frequency weights of an in-memory X, optional
        Checked by :func:`~ldr.data.statistics.check_weights`; the moments of the rows
        repeated by their weights, and with ``lag`` those of the series with each sample
        held for its weight's time steps (:func:`~ldr.data.statistics.chunk_moments`).

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
    if weights is not None:
        if isinstance(X, (Moments, Iterator, np.memmap)) or is_lazy(X) \
                or (y is not None and is_lazy(y)):
            raise ParameterError("sample_weight", "weights apply to rows in memory (pass a "
                                 "NumPy or namespace array)")
        if not validated and arrays.foreign(X) is None:
            X = check_data(X, name, min_samples=1, copy=False)
        out = chunk_moments(X, y, lag, diff, name, None, y_name, validated=validated,
                            weights=check_weights(weights, X.shape[0]))
        _check_result(out, y is not None, lag, diff, name, min_samples)
        return out
    if isinstance(X, Moments):
        out = X
        if y is not None:
            raise ParameterError(y_name, "pass the labels with the rows, not with precomputed "
                             "statistics")
    elif is_lazy(X) or (y is not None and is_lazy(y)):
        out = _dask_moments(X, y, lag, diff, name, y_name, progress)
    elif isinstance(X, Iterator):
        if y is not None:
            raise ParameterError(y_name, "with an iterator of chunks, yield (X_chunk, y_chunk) "
                             "pairs instead of passing y")
        out = _iter_moments(X, lag, diff, name, y_name, progress)
    elif isinstance(X, np.memmap):
        out = _iter_moments(_memmap_chunks(X, y, chunk_bytes, name), lag, diff, name, y_name,
                            progress)
    else:
        out = _array_moments(X, y, lag, diff, name, y_name, validated)
    _check_result(out, y is not None or out.labels is not None, lag, diff, name, min_samples)
    return out


def _array_moments(X, y, lag, diff, name, y_name, validated=False) -> Moments:
    """One chunk: an array of another namespace as it is (computed there), anything else
    through :func:`~ldr.data.validation.check_data` (DataFrames, lists: float64 NumPy)
    unless ``validated``."""
    if not validated and arrays.foreign(X) is None:
        X = check_data(X, name, min_samples=1, copy=False)
    if y is not None:  # labels of X's namespace are counted there, NumPy ones on the host
        if arrays.foreign(y) is None:
            check_labels(y, X.shape[0], y_name)
        elif y.shape not in ((X.shape[0],), (X.shape[0], 1)):
            check_labels(arrays.to_host(y), X.shape[0], y_name)  # words the error
    return chunk_moments(X, y, lag, diff, name, None, y_name, validated=validated)


def _check_result(out: Moments, labelled, lag, diff, name, min_samples) -> None:
    if out.n < min_samples:
        raise ParameterError(name, f"Found array with {out.n} sample(s) while a minimum of "
                         f"{min_samples} is required.")
    if labelled and out.labels is None:
        raise ParameterError("y", "these statistics were computed without class labels")
    if labelled and len(out.labels) < 2:
        raise ParameterError("y", f"at least two classes are needed, got {len(out.labels)} "
                         f"({out.labels.tolist()!r})")
    if lag is not None and out.lag != lag:
        raise ParameterError("lag", f"these statistics hold lag {out.lag}, not {lag}")
    if diff and out.diff is None:
        raise ParameterError(name, "these statistics were computed without difference products")


def _memmap_chunks(X, y, chunk_bytes, name):
    if X.ndim != 2:
        raise ParameterError(name, f"expected a 2-D array, got shape {X.shape}")
    step = max(1, int(chunk_bytes // max(1, 8 * X.shape[1])))
    for start in range(0, X.shape[0], step):
        part = np.array(X[start:start + step], dtype=np.float64)
        yield part if y is None else (part, np.asarray(y[start:start + step]))


def _iter_moments(chunks, lag, diff, name, y_name, progress) -> Moments:
    """The chunks' moments merged as they come, in a balanced tree: a stack of segments
    whose sizes (in chunks) are decreasing powers of two, two of one size merged at once (a
    binary counter), so at most log2(chunks) + 1 segments are held, and the rounding of the
    merges grows as the tree's depth."""
    if progress:
        from tqdm.auto import tqdm

        chunks = tqdm(chunks, desc="chunks", unit="chunk", mininterval=_bar_interval())
    stack = []  # (chunks in the segment, its moments), in row order
    start = 0
    labelled = None
    for item in chunks:
        pair = isinstance(item, tuple)
        if labelled is None:
            labelled = pair
        elif pair != labelled:
            raise ParameterError(name, "the iterator mixes (X, y) pairs and bare chunks")
        Xk, yk = item if pair else (item, None)
        part = chunk_moments(Xk, yk, lag, diff, name, start, y_name)
        start += part.n
        size = 1
        while stack and stack[-1][0] == size:
            part = merge(stack.pop()[1], part)
            size *= 2
        stack.append((size, part))
    if not stack:
        raise ParameterError(name, "no rows (the iterator of chunks was empty)")
    out = stack.pop()[1]
    while stack:
        out = merge(stack.pop()[1], out)
    return out


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
        raise ParameterError(name, f"expected a 2-D array of shape (n_samples, n_features), got "
                         f"a Dask array with shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ParameterError(name, f"must be numeric, got dtype {X.dtype}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    row_chunks = X.chunks[0]
    known = all(np.isfinite(c) for c in row_chunks)
    if y is not None:
        y = as_dask_array(y, y_name)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ParameterError(y_name, f"expected a 1-D array of labels, got shape {y.shape}")
        y_known = all(np.isfinite(c) for c in y.chunks[0])
        if known and y_known:
            if y.shape[0] != X.shape[0]:
                raise ParameterError(y_name, f"has {y.shape[0]} labels but {name} has "
                                 f"{X.shape[0]} samples; they must match")
            y = y.rechunk((row_chunks,))
        elif y.numblocks[0] != X.numblocks[0]:  # unknown sizes: blocks must pair one to one
            raise ParameterError(name, f"the Dask arrays' chunk sizes are unknown and {name}, "
                             f"{y_name} have different numbers of blocks; build them with "
                             "to_dask_array(lengths=True) or call compute_chunk_sizes()")
    starts = np.concatenate([[0], np.cumsum(row_chunks)[:-1]]) if known else \
        [None] * len(row_chunks)
    xb = X.to_delayed().ravel()
    yb = y.to_delayed().ravel() if y is not None else [None] * len(xb)
    task = dask.delayed(chunk_moments, pure=True)
    width = int(X.shape[1]) if np.isfinite(X.shape[1]) else None
    chunks = [task(b, c, lag, diff, name, None if s is None else int(s), y_name, width)
              for b, c, s in zip(xb, yb, starts)]
    join = dask.delayed(_merge_many, pure=True)
    parts = chunks
    while len(parts) > 1:  # a tree of merges, 8 at a time, in row order
        parts = [join(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
    try:
        if progress and not _distributed_active():
            with _TqdmCallback(len(xb)):
                return dask.compute(parts[0])[0]
        return dask.compute(parts[0])[0]
    except ParameterError:  # a chunk's data were refused: the message names its rows
        raise
    except Exception as exc:  # noqa: BLE001 - a chunk failed: find which, name it
        return _retry_by_chunk(exc, chunks, starts, row_chunks, name)


def _retry_by_chunk(exc: Exception, chunks, starts, sizes, name: str) -> Moments:
    """After a failed pass: every chunk recomputed alone, in row order, in this process.  The
    first that fails again raises a :class:`~ldr.core.errors.ChunkError` naming it (its exception
    chained); when none does (a transient fault) the chunks' moments are merged in the same
    tree as the pass — the same answer, every chunk counted once, never a partial sum."""
    import dask

    done = []
    for i, (part, start, size) in enumerate(zip(chunks, starts, sizes)):
        try:
            # in this process, one chunk at a time: a distributed scheduler would answer
            # with the error it keeps for the failed task
            done.append(dask.compute(part, scheduler="sync")[0])
        except ParameterError:
            raise
        except Exception as again:  # noqa: BLE001
            rows = None if start is None else (int(start), int(start + size - 1))
            raise ChunkError(name, i, rows, f"{type(again).__name__}: {again}") from again
    while len(done) > 1:
        done = [_merge_many(*done[i:i + 8]) for i in range(0, len(done), 8)]
    return done[0]


def _merge_many(*parts) -> Moments:
    return merge_all(parts)


def _distributed_active() -> bool:
    try:
        from distributed import default_client

        default_client()
        return True
    except (ImportError, ValueError):
        return False


def _bar_interval() -> float:
    """Seconds between a bar's updates: a terminal redraws one line, a log file gets a line
    per update (every 30 s)."""
    import sys

    return 0.1 if sys.stderr.isatty() else 30.0


def _TqdmCallback(total: int):
    """A Dask (local scheduler) callback that advances a tqdm bar per chunk read."""
    from dask.callbacks import Callback
    from tqdm.auto import tqdm

    class Bar(Callback):
        def _start(self, dsk):
            self.bar = tqdm(total=total, desc="chunks", unit="chunk",
                            mininterval=_bar_interval())

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
        raise ParameterError(name, f"expected a 2-D array of shape (n_samples, n_features), got "
                         f"a Dask array with shape {X.shape}")
    if X.shape[1] != n_features:
        raise ParameterError(name, f"has {X.shape[1]} features, but the estimator was fitted "
                         f"with {n_features}")
    X = X.rechunk({1: -1})
    return X.map_blocks(_apply_block, fn, chunks=(X.chunks[0], (n_out,)), dtype=np.float64,
                        meta=np.empty((0, n_out)))


def _apply_block(block, fn):
    return np.asarray(fn(block), dtype=np.float64)



def take_rows(X, rows: np.ndarray, name: str = "X") -> np.ndarray:
    """The rows ``rows`` (sorted indices) of an in-memory array, ``np.memmap`` or Dask array
    (or DataFrame) as a NumPy array: a Dask array's are gathered from the chunks that hold
    them (one task per chunk, the rest never read), so memory is O(len(rows)·d), not n·d.
    An array of another namespace (a PyTorch tensor, ...) gives its rows there, on its
    device."""
    xp = arrays.foreign(X)
    if xp is not None:
        return xp.take(X, xp.asarray(rows, device=arrays.device(X)), axis=0)
    if is_lazy(X):
        X = known_chunks(X, name)
        return np.asarray(X[rows].compute())
    return np.asarray(arrays.to_host(X))[rows]


def lazy_rows(X, name: str = "X"):
    """A Dask array (or DataFrame) or ``np.memmap`` kept to be read a chunk at a time: a Dask
    array with known chunk sizes (:func:`known_chunks`), and two dimensions, checked here;
    its values are checked as each chunk is read."""
    X = known_chunks(X, name) if is_lazy(X) else X
    if getattr(X, "ndim", None) != 2:
        raise ParameterError(name, f"expected a 2-D array of shape (n_samples, n_features), "
                             f"got shape {getattr(X, 'shape', None)}")
    return X


def chunk_bounds(X) -> np.ndarray:
    """(n_blocks + 1,) int: the first row of each row block that :func:`map_chunks` reads, and
    n.  A Dask array's blocks are its own (chunk sizes must be known); an ``np.memmap``'s hold
    about ``MEMMAP_CHUNK_BYTES`` of float64 rows each, a last block of less than half that
    joined to the one before it."""
    if is_lazy(X):
        sizes = np.asarray(known_chunks(X, "X").chunks[0], dtype=np.int64)
        return np.r_[0, np.cumsum(sizes)].astype(np.intp)
    n, d = X.shape
    step = max(1, int(MEMMAP_CHUNK_BYTES // max(1, 8 * d)))
    starts = np.arange(0, n, step)
    if starts.shape[0] > 1 and n - starts[-1] < step / 2:
        starts = starts[:-1]
    return np.r_[starts, n].astype(np.intp)


def map_chunks(X, fn, *args, sliced=(), bounds=None, label: str | None = None) -> list:
    """``[fn(block, start, *args, *slices) for each row block]``, in row order: ``block`` a NumPy
    array of the rows from ``start`` on (:func:`chunk_bounds`, or ``bounds``), as read,
    unchecked (an array of another namespace's: its own rows, on its device); ``slices`` the
    block's rows of each array in ``sliced`` (None stays None).  A Dask array's blocks (whole
    features) are read by one task each, with whatever scheduler is active (under a
    ``dask.distributed.Client``, on its workers: only ``fn``'s results come back, and each
    task carries its slices; the tasks are named after ``label``, default ``fn``'s name); an
    array's or ``np.memmap``'s are read in turn in this process.  Memory: a block at a time
    per worker and every result."""
    bounds = chunk_bounds(X) if bounds is None else bounds
    pieces = [[None if a is None else a[int(lo):int(hi), ...] for a in sliced]
              for lo, hi in zip(bounds[:-1], bounds[1:])]
    if not is_lazy(X):
        read = np.asarray if arrays.foreign(X) is None else _as_is  # a device's rows stay
        return [fn(read(X[int(lo):int(hi), ...]), int(lo), *args, *piece)
                for lo, hi, piece in zip(bounds[:-1], bounds[1:], pieces)]
    import dask

    blocks = known_chunks(X, "X").rechunk({1: -1}).to_delayed().ravel()
    task = dask.delayed(fn, pure=True)
    # the tasks named after the block function (``label``: the one a wrapper calls)
    name = f"{label or fn.__name__}-{uuid.uuid4().hex}"
    return list(dask.compute(*[task(b, int(lo), *args, *piece, dask_key_name=(name, i))
                               for i, (b, lo, piece)
                               in enumerate(zip(blocks, bounds[:-1], pieces))]))


def _as_is(block):
    return block


def merged(parts: list, how):
    """The results of consecutive row blocks as one: ``how`` "sum" adds them, "rows"
    concatenates them (arrays with a row per sample); a tuple of those for tuple results, an
    element None in every part stays None.  Merging merged results is merging the blocks'."""
    if not isinstance(how, str):
        return tuple(merged([part[i] for part in parts], h) for i, h in enumerate(how))
    if parts[0] is None:
        return None
    if how == "rows":
        return arrays.namespace(*parts).concat(parts)
    total = parts[0] + 0  # a new array (or number), the parts unchanged
    for part in parts[1:]:
        total += part
    return total


def known_chunks(X, name: str = "X"):
    """The Dask array (or DataFrame) ``X`` as a Dask array whose chunks' row counts are
    known, or a ParameterError saying how to know them."""
    X = as_dask_array(X, name)
    if not all(np.isfinite(c) for c in X.chunks[0]):
        raise ParameterError(name, "the Dask array's chunk sizes are unknown; build it with "
                             "to_dask_array(lengths=True) or call compute_chunk_sizes()")
    return X
