"""Rows read a chunk at a time: the metric-learning objectives' data when X is a Dask array or
a ``np.memmap`` (out of memory).

The objectives see the rows standardized, x̃ = (x − x̄)/c (``objectives/dml.py``, "Units"),
with x̄ and c from one pass over the chunks (:func:`ldr.data.rows.moments`).
:class:`ChunkedRows` gives what their oracles read: a chunk of standardized rows, chosen rows
(gathered from the chunks that hold them), the embedding U = X̃M (n×r, one pass) and X̃ᵀG
for an n×r G (one pass) — never an n×d array.  A Dask array's chunks are its own (rows
rechunked to whole features); a memmap's are blocks of about 64 MiB
(:func:`ldr.data.rows.chunk_bounds`).
"""

from __future__ import annotations

import numpy as np

from ldr.data.rows import chunk_bounds, known_chunks, take_rows
from ldr.data.validation import is_lazy

__all__ = ["ChunkedRows"]


class ChunkedRows:
    """The standardized rows (X − mean)/unit of a lazy X (module docstring).

    Parameters
    ----------
    X : Dask array or np.memmap, (n_samples, n_features)
    mean : (n_features,)
    unit : float
        c, the rows' RMS scale about the mean.

    Attributes
    ----------
    bounds : (n_chunks + 1,) int
        The chunks' first rows, and n.
    """

    def __init__(self, X, mean: np.ndarray, unit: float):
        self.X = known_chunks(X, "X").rechunk({1: -1}) if is_lazy(X) else X
        self.mean = np.asarray(mean, dtype=float)
        self.unit = float(unit)
        n, d = self.X.shape
        self.bounds = chunk_bounds(self.X)
        self.shape = (int(n), int(d))

    @property
    def n_chunks(self) -> int:
        return self.bounds.shape[0] - 1

    def chunk_of(self, i: int) -> int:
        """The chunk holding row i."""
        return int(np.searchsorted(self.bounds, i, side="right")) - 1

    def _scaled(self, A) -> np.ndarray:
        """(A − mean)/unit in a new float64 array (a chunk's values may be a view of the
        caller's rows: never changed in place)."""
        A = np.array(A, dtype=float)
        A -= self.mean
        A /= self.unit
        return A

    def read(self, c: int) -> np.ndarray:
        """Chunk c's standardized rows (a copy in memory)."""
        lo = self.bounds[c]
        hi = self.bounds[c + 1]
        block = self.X[lo:hi]
        return self._scaled(block.compute() if is_lazy(block) else block)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The standardized rows ``rows`` (sorted indices), gathered from the chunks that hold
        them."""
        return self._scaled(take_rows(self.X, rows))

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
