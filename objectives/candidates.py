"""Sampled candidate sets for the pairwise sums of terms (NCA's samples, LMNN's samples): a
mini-batch's terms at O(b·(K + m)) pairs instead of O(b·n).

A term i of NCA or of the large-margin cost sums over all other samples j (NCA's softmax
denominator Σ_j e^{−D_ij} and numerator Σ_{j: z_j = z_i} e^{−D_ij}; LMNN's impostors
Σ_{ℓ: z_ℓ ≠ z_i} h(1 + d_it − D_iℓ)).  Exact, one epoch of mini-batches costs n² pairs, as
much as a full evaluation (10¹⁰ at n = 10⁵).  Here each sum over j is split into

* the K **neighbours** N_i of i in the embedding u = Mᵀx (exact search,
  :func:`~ldr.objectives.neighbors.exact_search`; computed at the run's first batch and
  again whenever the stochastic solver refreshes them, :meth:`Candidates.refresh` — at the
  epochs where its step has shrunk by the first epoch's factor,
  :mod:`ldr.solvers.stochastic`), taken exactly (weight 1), and
* the rest F_i, estimated from m columns R drawn uniformly without replacement from all n
  (one draw per batch, seeded by the batch's indices, so that the same batch gets the same
  columns — SVRG's two passes, a power iteration's finite differences), each j ∈ R ∩ F_i
  weighted by n/m:

      Σ_j g_ij  ≈  Σ_{j ∈ N_i} g_ij + (n/m) Σ_{j ∈ R ∩ F_i} g_ij,    P(j ∈ R) = m/n      (C1)

an unbiased estimate of every such sum whatever N is (stale neighbours only add variance).
The near terms carry most of the mass where the metric has grown (NCA's softmax is then
concentrated on a few neighbours; LMNN's active impostors are near), the uniform sample
where it has not.  LMNN's cost is linear in these sums: its batch estimates are unbiased.
NCA's p_i is a ratio of two of them: its estimate is biased by O(1/m) where the far part
matters, which is why a stochastic NCA run ends with an exact check (the driver's).

Rows read a chunk at a time (a Dask array or memmap, :class:`ChunkCandidates`): a batch's
terms lie in one chunk, its neighbours are searched among that chunk's rows and its columns
are drawn from a uniform pool of all rows — the same estimate (C1), unbiased whatever the
neighbours are.

Gradients: for pair weights W_ik = ∂(batch cost)/∂D_ik on the candidate pairs,
∂/∂M = 2 Σ W_ik (x_i − x_k)(u_i − u_k)ᵀ (:func:`pair_gradient`).
"""

from __future__ import annotations

import zlib

import numpy as np

from ldr.data import arrays
from ldr.objectives.neighbors import nearest_neighbors

__all__ = ["NEAREST_CANDIDATES", "POOL_COLUMNS", "SAMPLED_COLUMNS", "Candidates",
           "ChunkCandidates", "block_sqdist", "far_weights", "gathered_sqdist",
           "pair_gradient"]

#: K, the nearest samples taken exactly: where the map has grown, NCA's softmax mass and
#: LMNN's active impostors lie among a sample's nearest others; 32 is a few times LMNN's
#: default 3 targets and small beside m, so the exact part costs a small share of a batch
NEAREST_CANDIDATES = 32
#: m, the columns sampled uniformly: the far part of each sum is estimated from m of n terms,
#: unbiased with a relative standard error of order 1/√m (about 4% at 512) whatever n is, at
#: O(b·m) pairs per batch of b samples
SAMPLED_COLUMNS = 512
#: P, the pool the columns of rows read a chunk at a time are drawn from (:class:`ChunkCandidates`):
#: a uniform sample of all rows, drawn afresh each epoch; any P ≥ m keeps (C1) unbiased, and a
#: batch's m columns are then a fraction m/P of the pool
POOL_COLUMNS = 16 * SAMPLED_COLUMNS


class Candidates:
    """The neighbour lists and column samples of (C1) for one objective's batches.

    ``neighbours`` K (0: none, every sum is sampled), ``sample`` m (≥ n: every column, exact),
    ``seed`` the seed of the column draws."""

    def __init__(self, n: int, neighbours: int, sample: int, seed: int = 0):
        self.n = int(n)
        self.K = int(min(max(neighbours, 0), self.n - 1))
        self.m = int(min(max(sample, 1), self.n))
        self.seed = int(seed)
        self._nbrs: np.ndarray | None = None
        self._pos: np.ndarray | None = None
        self._at: bytes | None = None

    @property
    def exact(self) -> bool:
        return self.m >= self.n

    def refresh(self, X, M) -> None:
        """Recompute the K nearest neighbours of every row of the embedding XM (n×r), in X's
        namespace (:func:`~ldr.objectives.neighbors.nearest_neighbors`); nothing to do where M
        is the point of the last search."""
        at = np.ascontiguousarray(arrays.to_host(M), dtype=float).tobytes()
        if at == self._at:
            return
        self._at = at
        if self.K == 0 or self.exact:
            self._nbrs = np.zeros((self.n, 0), dtype=np.intp)
            return
        nbrs, _ = nearest_neighbors(X @ M, self.K, "exact")
        self._nbrs = nbrs.astype(np.intp) if arrays.numpy_fast_path(nbrs) else nbrs

    def neighbours(self, idx: np.ndarray, X, M) -> np.ndarray:
        """N_I (b×K host indices), searched at M (XM the embedding) for the first batch."""
        if self._nbrs is None:
            self.refresh(X, M)
        if arrays.numpy_fast_path(self._nbrs):
            return self._nbrs[idx]
        xp = arrays.namespace(self._nbrs)   # the batch's lists read from the device
        at = xp.asarray(idx, device=arrays.device(self._nbrs))
        return np.asarray(arrays.to_host(xp.take(self._nbrs, at, axis=0)), dtype=np.intp)

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """R: m columns drawn uniformly without replacement, seeded by the batch's indices."""
        if self.exact:
            return np.arange(self.n)
        rng = np.random.default_rng([self.seed, zlib.crc32(np.ascontiguousarray(
            idx, dtype=np.int64).tobytes())])
        return np.sort(rng.choice(self.n, size=self.m, replace=False))

    def far_weights(self, idx: np.ndarray, N: np.ndarray, R: np.ndarray) -> np.ndarray:
        """The b×m weights of the sampled columns in (C1): n/m, 0 on i itself and on N_i."""
        if self._pos is None:
            self._pos = np.full(self.n, -1, dtype=np.intp)
        return far_weights(self._pos, self.n / self.m, idx, N, R)

    def rows(self, X, z, idx: np.ndarray, M):
        """The batch's candidate rows (the ``rows`` of NCA's sampled term,
        ``objectives/nca.py``) from the rows X in memory and their class codes z, in X's
        namespace (the indices and the weights are drawn on the host)."""
        xp = arrays.namespace(X)
        idx = np.asarray(idx, dtype=np.intp)
        N = self.neighbours(idx, X, M)
        R = self.columns(idx)
        w = self.far_weights(idx, N, R)

        def taken(A, at):   # whole rows (np.take: faster than fancy indexing)
            return xp.take(A, xp.asarray(at, device=arrays.device(A)), axis=0)

        zN = xp.reshape(taken(z, N.ravel()), N.shape)
        return (taken(X, idx), taken(z, idx), taken(X, N.ravel()), zN, taken(X, R),
                taken(z, R), arrays.like(w, X))


def far_weights(pos: np.ndarray, weight: float, idx: np.ndarray, N: np.ndarray,
                R: np.ndarray) -> np.ndarray:
    """The b×m weights of (C1)'s sampled columns: ``weight`` (n/m), 0 where a column is the
    batch row itself or one of its neighbours.  Rows are positions in one frame (the rows in
    memory, or a chunk); R's entries outside the frame are −1 and never excluded.  ``pos`` is
    a table over the frame, −1 everywhere, set on R's entries and restored: O(m + b·K)."""
    w = np.full((idx.shape[0], R.shape[0]), weight)
    inside = np.flatnonzero(R >= 0)
    pos[R[inside]] = inside
    for rows, cols in ((np.arange(idx.shape[0]), idx),
                       (np.repeat(np.arange(N.shape[0]), N.shape[1]), N.ravel())):
        at = pos[cols]
        hit = at >= 0
        w[rows[hit], at[hit]] = 0.0
    pos[R[inside]] = -1
    return w


def gathered_sqdist(UI, UN):
    """(u_i − u_{N_it}) (b×K×r) and its squared norms (b×K), in UI's namespace."""
    diff = UI[:, None, :] - UN
    return diff, arrays.namespace(UI).sum(diff * diff, axis=2)


def block_sqdist(UI, UR):
    """‖u_i − u_j‖² for the batch rows against the sampled columns (b×m), clipped at 0, in
    UI's namespace."""
    xp = arrays.namespace(UI)
    D = UI @ UR.T
    D *= -2.0
    D += xp.sum(UI * UI, axis=1)[:, None]
    D += xp.sum(UR * UR, axis=1)[None, :]
    return arrays.maximum_inplace(D, 0.0)


def pair_gradient(XI, UI, gathered: list[tuple], XR, UR, Wf):
    """∂/∂M of a batch cost whose derivative in D_ik is W_ik, i.e. 2 Σ W_ik (x_i − x_k)
    (u_i − u_k)ᵀ, for the batch rows ``XI`` (b×d, embedded ``UI``), over gathered pairs
    ``(XG (b·K)×d, du b×K×r, W b×K)`` and the block of sampled columns
    ``XR`` (m×d, embedded ``UR``) with weights ``Wf`` (b×m), all in one namespace."""
    xp = arrays.namespace(XI)
    row = xp.sum(Wf, axis=1)
    G = XI.T @ (row[:, None] * UI - Wf @ UR) - XR.T @ (Wf.T @ UI - xp.sum(Wf, axis=0)[:, None]
                                                       * UR)
    for XG, du, W in gathered:   # Σ_i x_i (Σ_t W_it du_it)ᵀ − Σ_(i,t) x_{k_it} (W_it du_it)ᵀ
        if du.shape[1] == 0:
            continue
        Wdu = W[:, :, None] * du
        G += XI.T @ xp.sum(Wdu, axis=1)
        G -= XG.T @ xp.reshape(Wdu, (-1, du.shape[2]))
    return 2.0 * G


class ChunkCandidates:
    """(C1)'s candidate sets for rows read a chunk at a time (:class:`ChunkedRows
    <ldr.objectives.chunked_rows.ChunkedRows>`: a Dask array or memmap).

    An epoch visits the chunks in a random order and takes its batches from one chunk at a
    time (:meth:`batch_order`), so each chunk is read once an epoch.  A batch row's
    neighbours N_i are its K nearest among its chunk's rows in the embedding at the point of
    the last :meth:`refresh` (searched when the chunk is read), and the columns R are m rows drawn
    from a **pool** of P rows sampled uniformly from all n; the next epoch's pool is drawn at
    an epoch's start and its rows are taken from the chunks as they are read (the first
    pool is gathered).  Every row is in R with probability (P/n)(m/P) = m/n, so (C1) stays
    unbiased whatever N is; the pool only correlates the batches of one epoch.  Batches that
    span chunks (a sampled start's) gather their rows, and their neighbours are searched
    among them.  Memory: a chunk, the pool and the class codes — nothing of X's size."""

    def __init__(self, rows, z: np.ndarray, neighbours: int, sample: int, pool: int,
                 seed: int = 0):
        self.data = rows
        self.z = z
        self.n = rows.shape[0]
        self.K = int(min(max(neighbours, 0), self.n - 1))
        self.P = int(min(max(pool, sample, 1), self.n))
        self.m = int(min(max(sample, 1), self.P))
        self.seed = int(seed)
        self._epoch = 0
        self._pool = self._draw(0)
        self._pool_rows = rows.take(self._pool)
        self._next: np.ndarray | None = None
        self._next_rows: np.ndarray | None = None
        self._current: dict = {}
        self._gathered: dict = {}
        self._stale = False
        self._at: np.ndarray | None = None
        self._held: np.ndarray | None = None
        self._held_frame: dict | None = None

    def release(self) -> None:
        """Drop the chunk in memory and the gathered batches (a fitted estimator keeps the
        objective: it keeps the pool, not a chunk)."""
        self._current = {}
        self._gathered = {}
        self.hold(None)

    def hold(self, terms: np.ndarray | None) -> None:
        """Serve every batch within ``terms`` (sorted row indices: a stochastic solver's fixed
        sample, evaluated again at each of its start's estimates) from one frame of those rows,
        gathered once, their neighbours searched among them, where they are no more rows than
        the largest chunk (the client holds a chunk either way); None drops it.  Without it,
        the sample's batches, ordered by row, read every chunk again at each estimate.  (C1)
        stays unbiased: only the neighbour sets change."""
        largest = int(np.max(np.diff(self.data.bounds)))
        held = terms is not None and len(terms) <= largest
        self._held = np.asarray(terms, dtype=np.intp) if held else None
        self._held_frame = None

    def _draw(self, epoch: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, 1, epoch])
        return np.sort(rng.choice(self.n, size=self.P, replace=False))

    def refresh(self, M: np.ndarray) -> None:
        """The stochastic solvers' refresh: the neighbours are searched at M from now on (the
        chunk in memory again at its next batch); nothing to do where M is the point of the
        last search."""
        if self._at is not None and np.array_equal(M, self._at):
            return
        self._at = np.array(M, dtype=float, copy=True)
        self._stale = True

    def batch_order(self, rng: np.random.Generator, batch_size: int) -> list[np.ndarray]:
        """An epoch's batches: the chunks in a random order, each chunk's rows permuted and
        cut into batches of ``batch_size``; the pool the last epoch collected becomes the
        pool, and the next one is drawn."""
        if self._next is not None:
            missing = np.isnan(self._next_rows[:, 0])
            if missing.any():   # chunks the last epoch did not read (a partial epoch)
                self._next_rows[missing] = self.data.take(self._next[missing])
            self._pool = self._next
            self._pool_rows = self._next_rows
        self._epoch += 1
        self._next = self._draw(self._epoch)
        self._next_rows = np.full((self.P, self.data.shape[1]), np.nan)
        if self._current.get("chunk") is not None:   # the chunk in memory is not read again
            self._take_next(self._current["X"], self._current["chunk"])
        order = []
        bounds = self.data.bounds
        for c in rng.permutation(self.data.n_chunks):
            rows = bounds[c] + rng.permutation(bounds[c + 1] - bounds[c])
            order.extend(rows[i:i + batch_size] for i in range(0, rows.shape[0], batch_size))
        return order

    def _read(self, c: int, M: np.ndarray) -> dict:
        """Chunk c in memory, its next-pool rows taken, its neighbours searched at M."""
        lo = self.data.bounds[c]
        hi = self.data.bounds[c + 1]
        X = self.data.read(c)
        self._take_next(X, c)
        return self._frame_of(X, np.arange(lo, hi), M, chunk=c)

    def _take_next(self, X: np.ndarray, c: int) -> None:
        """The next pool's rows that chunk c (its rows X) holds."""
        if self._next is None:
            return
        lo = self.data.bounds[c]
        hi = self.data.bounds[c + 1]
        a, b = np.searchsorted(self._next, [lo, hi])
        self._next_rows[a:b] = X[self._next[a:b] - lo]

    def _frame_of(self, X: np.ndarray, ids: np.ndarray, M: np.ndarray, chunk=None) -> dict:
        """The rows X (their indices ids) with their neighbours, searched at the point of the
        last refresh (M at the first search): as the rows in memory, whose neighbours change
        only at a refresh, so that a batch's estimate at two nearby points (a sampled start's
        finite differences) uses the same candidates."""
        if self._at is None:
            self._at = np.array(M, dtype=float, copy=True)
        K = min(self.K, X.shape[0] - 1)
        nbrs = (nearest_neighbors(X @ self._at, K, "exact")[0].astype(np.intp) if K > 0
                else np.zeros((X.shape[0], 0), dtype=np.intp))
        return {"chunk": chunk, "X": X, "ids": ids, "nbrs": nbrs,
                "pos": np.full(X.shape[0], -1, dtype=np.intp)}

    def _frame(self, idx: np.ndarray, M: np.ndarray) -> dict:
        if self._held is not None:
            at = np.minimum(np.searchsorted(self._held, idx), self._held.shape[0] - 1)
            if np.array_equal(self._held[at], idx):
                if self._held_frame is None:
                    self._held_frame = self._frame_of(self.data.take(self._held), self._held, M)
                return self._held_frame
        c = self.data.chunk_of(int(idx[0]))
        lo = self.data.bounds[c]
        hi = self.data.bounds[c + 1]
        if idx.min() >= lo and idx.max() < hi:
            if self._current.get("chunk") != c:
                self._current = self._read(c, M)
                self._stale = False
            elif self._stale:
                frame = self._current
                frame.update(self._frame_of(frame["X"], frame["ids"], M, chunk=c))
                self._stale = False
            return self._current
        key = np.ascontiguousarray(idx).tobytes()   # across chunks: gathered (and kept)
        if key not in self._gathered:
            if len(self._gathered) >= 64:
                self._gathered.clear()
            ids = np.unique(idx)
            self._gathered[key] = self._frame_of(self.data.take(ids), ids, M)
        return self._gathered[key]

    def take(self, idx: np.ndarray, cols: np.ndarray, M: np.ndarray) -> np.ndarray:
        """The rows ``cols`` (any shape of indices, flattened) for the batch ``idx``: from the
        batch's chunk where it holds them (LMNN's targets are searched in their row's chunk),
        else gathered."""
        frame = self._frame(np.asarray(idx, dtype=np.intp), M)
        ids = frame["ids"]
        cols = np.asarray(cols, dtype=np.intp).ravel()
        at = np.minimum(np.searchsorted(ids, cols), ids.shape[0] - 1)
        inside = ids[at] == cols
        if inside.all():
            return np.take(frame["X"], at, axis=0)
        key = cols.tobytes()     # a gathered batch's rows outside it: gathered once, kept
        if key not in frame.setdefault("outside", {}):
            out = np.empty((cols.shape[0], self.data.shape[1]))
            out[inside] = frame["X"][at[inside]]
            outside = np.unique(cols[~inside])
            out[~inside] = self.data.take(outside)[np.searchsorted(outside, cols[~inside])]
            frame["outside"][key] = out
        return frame["outside"][key]

    def rows(self, idx: np.ndarray, M: np.ndarray):
        """The batch's candidate rows (the ``rows`` of NCA's sampled term,
        ``objectives/nca.py``)."""
        idx = np.asarray(idx, dtype=np.intp)
        frame = self._frame(idx, M)
        ids = frame["ids"]
        local = np.searchsorted(ids, idx)
        N = frame["nbrs"][local]
        rng = np.random.default_rng([self.seed, zlib.crc32(np.ascontiguousarray(
            idx, dtype=np.int64).tobytes())])
        pick = np.sort(rng.choice(self.P, size=self.m, replace=False))
        R = self._pool[pick]
        at = np.minimum(np.searchsorted(ids, R), ids.shape[0] - 1)
        alias = np.where(ids[at] == R, at, -1)     # a sampled row that is in the frame
        X = frame["X"]
        wf = far_weights(frame["pos"], self.n / self.m, local, N, alias)
        return (np.take(X, local, axis=0), self.z[idx], np.take(X, N.ravel(), axis=0),
                self.z[ids[N]], np.take(self._pool_rows, pick, axis=0), self.z[R], wf)
