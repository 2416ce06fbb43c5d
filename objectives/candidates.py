"""Sampled candidate sets for the pairwise sums of terms (NCA's samples, LMNN's samples): a
mini-batch's terms at O(b·(K + m)) pairs instead of O(b·n).

A term i of NCA or of the large-margin cost sums over all other samples j (NCA's softmax
denominator Σ_j e^{−D_ij} and numerator Σ_{j: z_j = z_i} e^{−D_ij}; LMNN's impostors
Σ_{ℓ: z_ℓ ≠ z_i} h(1 + d_it − D_iℓ)).  Exact, one epoch of mini-batches costs n² pairs, as
much as a full evaluation (10¹⁰ at n = 10⁵).  Here each sum over j is split into

* the K **neighbours** N_i of i in the embedding u = Mᵀx (scikit-learn's
  ``NearestNeighbors``; computed at the run's first batch and again whenever the stochastic
  solver refreshes them, :meth:`Candidates.refresh` — at the epochs where its step has
  shrunk by the first epoch's factor, :mod:`ldr.solvers.stochastic`), taken exactly
  (weight 1), and
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

Gradients: for pair weights W_ik = ∂(batch cost)/∂D_ik on the candidate pairs,
∂/∂M = 2 Σ W_ik (x_i − x_k)(u_i − u_k)ᵀ (:func:`pair_gradient`).
"""

from __future__ import annotations

import zlib

import numpy as np

from ldr.objectives.neighbors import nearest_neighbors

__all__ = ["NEAREST_CANDIDATES", "SAMPLED_COLUMNS", "Candidates", "block_sqdist",
           "gather", "gathered_sqdist", "pair_gradient"]

#: K, the nearest samples taken exactly: where the map has grown, NCA's softmax mass and
#: LMNN's active impostors lie among a sample's nearest others; 32 is a few times LMNN's
#: default 3 targets and small beside m, so the exact part costs a small share of a batch
NEAREST_CANDIDATES = 32
#: m, the columns sampled uniformly: the far part of each sum is estimated from m of n terms,
#: unbiased with a relative standard error of order 1/√m (about 4% at 512) whatever n is, at
#: O(b·m) pairs per batch of b samples
SAMPLED_COLUMNS = 512


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

    def refresh(self, X: np.ndarray, M: np.ndarray) -> None:
        """Recompute the K nearest neighbours of every row of the embedding XM (n×r); nothing
        to do where M is the point of the last search."""
        at = np.ascontiguousarray(M, dtype=float).tobytes()
        if at == self._at:
            return
        self._at = at
        if self.K == 0 or self.exact:
            self._nbrs = np.zeros((self.n, 0), dtype=np.intp)
            return
        nbrs, _ = nearest_neighbors(X @ M, self.K, "exact")
        self._nbrs = nbrs.astype(np.intp)

    def neighbours(self, idx: np.ndarray, X: np.ndarray, M: np.ndarray) -> np.ndarray:
        """N_I (b×K), searched at M (XM the embedding) for the first batch."""
        if self._nbrs is None:
            self.refresh(X, M)
        return self._nbrs[idx]

    def columns(self, idx: np.ndarray) -> np.ndarray:
        """R: m columns drawn uniformly without replacement, seeded by the batch's indices."""
        if self.exact:
            return np.arange(self.n)
        rng = np.random.default_rng([self.seed, zlib.crc32(np.ascontiguousarray(
            idx, dtype=np.int64).tobytes())])
        return np.sort(rng.choice(self.n, size=self.m, replace=False))

    def far_weights(self, idx: np.ndarray, N: np.ndarray, R: np.ndarray) -> np.ndarray:
        """The b×m weights of the sampled columns in (C1): n/m, 0 on i itself and on N_i
        (looked up in a table of the n positions, set on R's entries and reset after:
        O(m + b·K) a batch)."""
        if self._pos is None:
            self._pos = np.full(self.n, -1, dtype=np.intp)
        pos = self._pos
        pos[R] = np.arange(R.shape[0])
        w = np.full((idx.shape[0], R.shape[0]), self.n / self.m)
        for rows, cols in ((np.arange(idx.shape[0]), idx),
                           (np.repeat(np.arange(N.shape[0]), N.shape[1]), N.ravel())):
            at = pos[cols]
            hit = at >= 0
            w[rows[hit], at[hit]] = 0.0
        pos[R] = -1
        return w


def gathered_sqdist(UI: np.ndarray, UN: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u_i − u_{N_it}) (b×K×r) and its squared norms (b×K)."""
    diff = UI[:, None, :] - UN
    return diff, np.einsum("ikr,ikr->ik", diff, diff)


def block_sqdist(UI: np.ndarray, UR: np.ndarray) -> np.ndarray:
    """‖u_i − u_j‖² for the batch rows against the sampled columns (b×m), clipped at 0."""
    D = UI @ UR.T
    D *= -2.0
    D += np.einsum("ij,ij->i", UI, UI)[:, None]
    D += np.einsum("ij,ij->i", UR, UR)[None, :]
    return np.maximum(D, 0.0, out=D)


def gather(X: np.ndarray, cols: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``X[cols]`` (cols b×K, gathered once: ``cols.size`` × d) and their embedding
    reshaped to b×K×r."""
    XG = X[cols.ravel()]
    return XG, (XG @ M).reshape(cols.shape[0], cols.shape[1], M.shape[1])


def pair_gradient(XI: np.ndarray, UI: np.ndarray,
                  gathered: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                  XR: np.ndarray, UR: np.ndarray, Wf: np.ndarray) -> np.ndarray:
    """∂/∂M of a batch cost whose derivative in D_ik is W_ik, i.e. 2 Σ W_ik (x_i − x_k)
    (u_i − u_k)ᵀ, for the batch rows ``XI`` (b×d, embedded ``UI``), over gathered pairs
    ``(XG (b·K)×d, du b×K×r, W b×K)`` (:func:`gather`) and the block of sampled columns
    ``XR`` (m×d, embedded ``UR``) with weights ``Wf`` (b×m)."""
    row = Wf.sum(axis=1)
    G = XI.T @ (row[:, None] * UI - Wf @ UR) - XR.T @ (Wf.T @ UI - Wf.sum(axis=0)[:, None]
                                                       * UR)
    for XG, du, W in gathered:   # Σ_i x_i (Σ_t W_it du_it)ᵀ − Σ_(i,t) x_{k_it} (W_it du_it)ᵀ
        if du.shape[1] == 0:
            continue
        Wdu = W[:, :, None] * du
        G += XI.T @ Wdu.sum(axis=1)
        G -= XG.T @ Wdu.reshape(-1, du.shape[2])
    return 2.0 * G
