"""Rows read a block at a time: the metric-learning and approximate-HSIC objectives' data when
X is a Dask array or a ``np.memmap`` (out of memory), and the same interface on an array.

The objectives see the rows standardized, x̃ = (x − x̄)/c (``objectives/dml.py``, "Units"),
with x̄ and c from one pass over the chunks (:func:`ldr.data.rows.moments`).
:class:`ChunkedRows` gives what their oracles read: a chunk of standardized rows, chosen rows
(gathered from the chunks that hold them), the embedding U = X̃M (n×r, one pass) and X̃ᵀG
for an n×r G (one pass) — never an n×d array.  A Dask array's chunks are its own (rows
rechunked to whole features); a memmap's are blocks of about 64 MiB
(:func:`ldr.data.rows.chunk_bounds`).  :meth:`ChunkedRows.map` maps a function over the chunks'
standardized rows (on the workers of a ``dask.distributed`` client: only its results come
back); :class:`RowBlocks` does the same over blocks of an array's rows, in this process, so
that a computation written for one block serves both.
"""

from __future__ import annotations

import numpy as np

from ldr.data.rows import chunk_bounds, known_chunks, map_chunks, merged, take_rows
from ldr.data.validation import is_lazy

__all__ = ["ChunkedRows", "RowBlocks", "standardized"]


class ChunkedRows:
    """The standardized rows (X − mean)/unit of a lazy X (module docstring).

    Parameters
    ----------
    X : Dask array or np.memmap, (n_samples, n_features)
    mean : (n_features,)
    unit : float or (n_features,)
        c, the rows' RMS scale about the mean (or each feature's scale).

    Attributes
    ----------
    bounds : (n_chunks + 1,) int
        The chunks' first rows, and n.
    """

    #: rows a chunk's task hands :meth:`map`'s function at a time
    block_rows = 4096

    def __init__(self, X, mean: np.ndarray, unit: float):
        self.X = known_chunks(X, "X").rechunk({1: -1}) if is_lazy(X) else X
        self.mean = np.asarray(mean, dtype=float)
        self.unit = float(unit) if np.isscalar(unit) else np.asarray(unit, dtype=float)
        n, d = self.X.shape
        self.bounds = chunk_bounds(self.X)
        self.shape = (int(n), int(d))
        self._kept: dict = {}

    @property
    def n_chunks(self) -> int:
        return self.bounds.shape[0] - 1

    def chunk_of(self, i: int) -> int:
        """The chunk holding row i."""
        return int(np.searchsorted(self.bounds, i, side="right")) - 1

    #: the blocks are not computed in this process (their results are pickled back)
    in_process = False

    def _scaled(self, A) -> np.ndarray:
        return standardized(A, self.mean, self.unit)

    def read(self, c: int) -> np.ndarray:
        """Chunk c's standardized rows (a copy in memory)."""
        lo = self.bounds[c]
        hi = self.bounds[c + 1]
        block = self.X[lo:hi]
        return self._scaled(block.compute() if is_lazy(block) else block)

    def take(self, rows: np.ndarray, keep: bool = False) -> np.ndarray:
        """The standardized rows ``rows`` (sorted indices), gathered from the chunks that hold
        them; with ``keep``, kept for the next call with the same indices (a seeded draw that
        each round of an alternation asks for again: gathered once, not once a round)."""
        if not keep:
            return self._scaled(take_rows(self.X, rows))
        key = np.asarray(rows).tobytes()
        if key not in self._kept:
            self._kept[key] = self._scaled(take_rows(self.X, rows))
        return self._kept[key].copy()

    def release(self) -> None:
        """Drop the rows :meth:`take` kept (at the end of a fit)."""
        self._kept.clear()

    def _blocks(self):
        for c in range(self.n_chunks):
            yield self.bounds[c], self.bounds[c + 1], self.read(c)

    def embed(self, M: np.ndarray) -> np.ndarray:
        """U = X̃M (n×r), one pass."""
        U = np.empty((self.shape[0], M.shape[1]))
        for lo, hi, block in self._blocks():
            U[lo:hi] = block @ M
        return U

    def tdot(self, G: np.ndarray) -> np.ndarray:
        """X̃ᵀG (d×r) for G (n×r), one pass."""
        out = np.zeros((self.shape[1], G.shape[1]))
        for lo, hi, block in self._blocks():
            out += block.T @ G[lo:hi]
        return out

    def map(self, fn, *args, sliced=(), how="sum"):
        """``fn(rows, start, *args, *slices)`` over the rows by blocks, the results merged by
        ``how`` (:func:`ldr.data.rows.merged`), with ``rows`` a block of at most ``block_rows``
        standardized rows of a chunk (a chunk's task runs its blocks in turn, so that a worker
        holds one block's temporaries, not a chunk's) and ``slices`` its rows of each (n, ...)
        array in ``sliced``: a chunk's blocks are merged in its task, so only one result a
        chunk comes back (:func:`ldr.data.rows.map_chunks`: a Dask array's chunks as tasks),
        and the chunks' results are merged in row order."""
        return merged(map_chunks(self.X, scaled_call, fn, self.mean, self.unit,
                                 self.block_rows, how, len(args), *args, sliced=sliced,
                                 bounds=self.bounds, label=fn.__name__), how)


def standardized(A, mean, unit) -> np.ndarray:
    """(A − mean)/unit in a new float64 array (a chunk's values may be a view of the caller's
    rows: never changed in place)."""
    A = np.array(A, dtype=float)
    A -= mean
    A /= unit
    return A


def scaled_call(block, start, fn, mean, unit, block_rows, how, n_args, *rest):
    """``fn`` on a chunk's standardized rows, ``block_rows`` at a time, the results merged
    by ``how`` (:func:`ldr.data.rows.merged`; a task of :meth:`ChunkedRows.map`): ``rest``
    holds fn's ``n_args`` arguments, then the chunk's slices."""
    rows = standardized(block, mean, unit)
    args = rest[:n_args]
    slices = rest[n_args:]
    out = []
    for lo in range(0, rows.shape[0], block_rows):
        hi = lo + block_rows
        out.append(fn(rows[lo:hi], start + lo, *args,
                      *[None if a is None else a[lo:hi] for a in slices]))
    return merged(out, how)


class RowBlocks:
    """An array's rows (already standardized) by blocks of ``block_size``, with
    :class:`ChunkedRows`' interface: :meth:`map` runs in this process, so a pass may keep
    what a block computed for the next pass."""

    in_process = True

    def __init__(self, X: np.ndarray, block_size: int):
        self.X = X
        self.shape = X.shape
        n = X.shape[0]
        self.bounds = np.r_[np.arange(0, n, max(1, int(block_size))), n].astype(np.intp)

    def take(self, rows: np.ndarray, keep: bool = False) -> np.ndarray:
        """The rows ``rows`` (a copy, in the array's namespace; ``keep`` is
        :class:`ChunkedRows`' and changes nothing here)."""
        return take_rows(self.X, rows)

    def map(self, fn, *args, sliced=(), how="sum"):
        """``fn(rows, start, *args, *slices)`` on each block in this process, the results
        merged by ``how`` (:func:`ldr.data.rows.merged`), as :meth:`ChunkedRows.map`."""
        return merged(map_chunks(self.X, fn, *args, sliced=sliced, bounds=self.bounds), how)
