"""Graph-based projections: LPP and NPE (survey §3.1.8, Eq. 17–20).

Rows of X are samples; W is a sparse n×n weight matrix on a neighbourhood graph (k nearest
neighbours, exact or approximate past a measured size (:mod:`ldr.objectives.neighbors`), or an
ε-ball from :mod:`sklearn.neighbors`), D = diag(W1), L = D − W.

**LPP** (He & Niyogi, 2004).  Heat-kernel weights on the symmetrized graph (i ~ j when either
is among the other's neighbours), Eq. 17:  W_ij = exp(−‖x_i − x_j‖² / τ).  Then

    Σ_ij W_ij ‖Mᵀx_i − Mᵀx_j‖² = 2 tr(Mᵀ S_L M),    S_L = XᵀLX,
    S_D = Σ_i D_ii (x_i − μ_D)(x_i − μ_D)ᵀ,          μ_D = Σ_i D_ii x_i / Σ_i D_ii.

**NPE** (He et al., 2005).  LLE's barycentric reconstruction weights: row i of W holds the
weights, summing to one, that best reconstruct x_i from its k nearest neighbours (local Gram
matrix regularized by ``lle_reg``·trace, as in scikit-learn's LLE).  Then

    S_L = Xᵀ(I − W)ᵀ(I − W)X = Σ_i ‖x_i − Σ_j W_ij x_j‖²-scatter,    S_D = (X − μ)ᵀ(X − μ).

Both methods want projections in which neighbours stay close *relative to* the spread of the
projected data, and come in two forms (``form``):

* ``"ratio"`` (default) — an orthogonal projection Y = (X − μ)M, cost the quotient of traces

      f(M) = tr(MᵀS_L M) / tr(MᵀS_D M)        over orthonormal d×r M (Grassmann),

  i.e. :class:`~ldr.objectives.quotient.QuotientOfTraces` with A = −S_L, B = S_D.  Gradient
  2(S_L − f S_D)M / tr(MᵀS_DM), Φ(M) = (S_L − f(M) S_D)/tr(MᵀS_DM), pencil (−S_L, S_D).
  ``heuristic()`` is the LPP/NPE eigenvector recipe: the r generalized eigenvectors of
  S_L v = λ S_D v with the *smallest* λ (Eq. 18's solution), orthonormalized.  Like LDA's,
  that recipe solves the ratio trace, not this quotient of traces, so solvers improve on it.
* ``"whitened"`` — Eq. 19/20 verbatim: with C = S_D^{-1/2} S_L S_D^{-1/2},

      f(M) = tr(MᵀCM) / r        (Eq. 19 divided by the constant r = tr(MᵀM)),

  the mapping Y = (X − μ) S_D^{-1/2} M (``transform``) is not an orthogonal projection, and
  its P = MᵀS_D^{-1/2} satisfies Eq. 18's constraint P S_D Pᵀ = I.  This is the same
  quotient of traces in whitened coordinates (A = −C, B = I), so the eigenvector recipe (the
  r smallest eigenvectors of C, spanning S_D^{1/2}·(LPP's generalized eigenvectors)) is its
  exact global optimum.

In both forms ``ratio(M)`` is f(M) itself: the neighbour scatter over the (degree-weighted)
variance of the projection, a positive number, smaller is better (LPP's lies in [0, 2]).

**Sums over edges, in the rows' namespace.**  The graph is held as index arrays — each row's k
nearest neighbours, or an ε-ball graph's pairs (``Edges``) — never as an n×n matrix, and
every statistic is a sum over strips of edges: LPP's with W = A + Aᵀ, A_ij = c_ij w_ij (c = ½
on a pair listed both ways), S_L = Σ_e a_e (x_i − x_j)(x_i − x_j)ᵀ and S_D, μ_D from the
edges' endpoints (``lpp_sums``); NPE's reconstruction errors from each row's list
(``npe_sums``).  Gathers, products and batched solves only, so rows of another array
namespace (a PyTorch tensor, on a GPU or not) are searched and summed there, on their device
(:func:`ldr.objectives.neighbors.strip_search`), by the same code as NumPy rows.

**Rows read a chunk at a time** (a Dask array or ``np.memmap``).  The statistics are sums over
rows and edges, so each chunk gives its share: its rows' k-nearest-neighbour graph **within the
chunk** (searched by the ``neighbors`` rule at the chunk's size), its weights (LPP's heat width
τ, unless given, the median squared edge length of the chunk's graph: the in-memory rule
applied to each chunk), its S_L and the moments of its rows (weighted by degree for LPP),
merged without loss (:func:`ldr.data.statistics.merge`).  A Dask array's chunks are read on
the workers, one task each, and only d×d sums come back (:func:`ldr.data.rows.map_chunks`).
The graph is approximate: in the same pass ``RECALL_SAMPLE`` seeded rows are compared with
every row, and the recall against the exact graph over all rows is stated (``search_``).  One
chunk gives the in-memory statistics.

Deviations from the survey's text (kept deliberately, verified in tests/test_graph.py):

* Eq. 18–20 write XDXᵀ and XXᵀ with raw data.  Here they are centered (S_D about the
  degree-weighted mean μ_D, NPE's about the mean); otherwise the answer depends on where the
  origin is.  S_L is unchanged by centering (L1 = 0, (I − W)1 = 0).
* The survey says NPE's W "is the same in LPP"; in He et al. (2005) it is LLE's
  reconstruction weights (rows summing to one), without which (I − W) is no reconstruction
  error.  NPE here uses the reconstruction weights.
"""

from __future__ import annotations

import numbers
from functools import partial
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method
from ldr.data import arrays
from ldr.data.rows import chunk_bounds, lazy_rows, map_chunks, take_rows
from ldr.data.statistics import Moments, chunk_moments, merge_all
from ldr.data.validation import (
    check_chunk,
    check_magnitude,
    check_nonsingular,
    check_rank,
    check_rows,
    eigh_nonsingular,
    is_lazy,
    shrink,
)
from ldr.objectives.neighbors import (
    NeighborSearch,
    check_n_neighbors,
    keep_nearest,
    nearest_neighbors,
    recall_sample,
    resolve_neighbors,
)
from ldr.objectives.quotient import QuotientOfTraces

__all__ = ["LPP", "NPE"]

FORMS = ("ratio", "whitened")
#: numbers per chunk of the edge-wise passes (2²⁰: 8 MB), so that no nnz × d array is formed
EDGE_ENTRIES = 2**20


# --- neighbourhood graphs ----------------------------------------------------------------------
class Edges(NamedTuple):
    """A neighbourhood graph's edges as index arrays in the rows' namespace and on their device.

    A symmetric graph's weight matrix is W = A + Aᵀ with A_ij = c_e w_e on each listed edge
    e = (i, j): a pair listed both ways (k-NN lists in which each is among the other's
    nearest, or every pair of an ε-ball graph) has share c = ½ on each listing, any other
    pair c = 1; a directed graph (NPE's lists) is W = A with c = 1.  So for any edge function
    g(i, j) symmetric in i and j, Σ_ij W_ij g(i, j) = 2 Σ_e c_e w_e g(i_e, j_e), with no
    scatter into rows.
    """

    rows: object
    """(m,) each edge's i."""
    cols: object
    """(m,) each edge's j."""
    share: object
    """(m,) c: ½ for a pair listed both ways in a symmetric graph, else 1."""
    lists: object
    """(n, k) the k-nearest-neighbour lists (row i's edges are i·k … i·k + k − 1), or None
    for an ε-ball graph."""
    symmetric: bool
    n: int

    def sparse(self, weights=None) -> sp.csr_matrix:
        """W (CSR, sorted indices; NumPy edges only) for edge weights w (default 1: the 0/1
        adjacency)."""
        w = self.share if weights is None else self.share * weights
        A = sp.csr_matrix((w, (self.rows, self.cols)), shape=(self.n, self.n))
        W = (A + A.T).tocsr() if self.symmetric else A
        W.sort_indices()
        return W

    def once(self):
        """(m,) bool: the edges that list each pair of the graph once (a pair listed both ways
        counts at its listing with i < j)."""
        return (self.share == 1.0) | (self.rows < self.cols)


def knn_edges(indices, symmetric: bool) -> Edges:
    """The edges of the k-nearest-neighbour lists ``indices`` (n × k, no self loops, in any
    namespace): row i's neighbours, or with ``symmetric`` i ~ j when either is among the
    other's (He & Niyogi's rule; a mutual pair gets share ½ on each listing)."""
    xp = arrays.namespace(indices)
    n, k = indices.shape
    where = arrays.device(indices)
    rows = xp.reshape(xp.broadcast_to(xp.arange(n, device=where)[:, None], (n, k)), (-1,))
    cols = xp.reshape(indices, (-1,))
    if symmetric:  # j's list holds i: by strips of edges, no m × k array
        step = max(1, EDGE_ENTRIES // k)
        parts = []
        for e in range(0, n * k, step):
            f = min(e + step, n * k)
            parts.append(xp.any(xp.take(indices, cols[e:f], axis=0) == rows[e:f, None], axis=1))
        mutual = xp.concat(parts)
        share = 1.0 - 0.5 * xp.astype(mutual, xp.float64)
    else:
        share = xp.ones(n * k, dtype=xp.float64, device=where)
    return Edges(rows, cols, share, indices, symmetric, n)


def ball_edges(G: sp.csr_matrix, symmetric: bool) -> Edges:
    """The edges of an ε-ball graph's adjacency G (CSR; symmetric, every pair listed both
    ways)."""
    rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))
    share = np.full(G.nnz, 0.5 if symmetric else 1.0)
    return Edges(rows, G.indices.copy(), share, None, symmetric, G.shape[0])


def neighbor_edges(X, n_neighbors: int | None = None, radius: float | None = None,
                   symmetric: bool = True, neighbors: str = "auto",
                   random_state: int | None = 0) -> tuple[Edges, NeighborSearch | None]:
    """``(edges, search)``: the k-nearest-neighbour or ε-ball graph of rows X, ``search`` how
    the k nearest neighbours were found (None for an ε-ball).

    ``symmetric=True`` joins i and j when either is among the other's k nearest neighbours
    (He & Niyogi's rule); ``False`` keeps row i = the neighbours of x_i (LLE/NPE).  Exactly one
    of ``n_neighbors`` and ``radius`` is given.  ``neighbors`` and ``random_state``: exact or
    approximate k-NN search (:func:`ldr.objectives.neighbors.nearest_neighbors`; rows of
    another namespace are searched exactly there).  An ε-ball graph is found on NumPy rows
    (scikit-learn's :func:`~sklearn.neighbors.radius_neighbors_graph`).  Raises a
    ``ValueError`` when k ≥ n, when the graph has no edge, or when a sample has no neighbour
    (ε-ball too small).
    """
    if (n_neighbors is None) == (radius is None):
        raise ValueError("n_neighbors, radius: give exactly one of them (k nearest neighbours "
                         "or an ε-ball graph)")
    if n_neighbors is not None:
        indices, search = nearest_neighbors(X, n_neighbors, neighbors, random_state)
        return knn_edges(indices, symmetric), search
    if resolve_neighbors(neighbors, 0) == "approximate":  # checks it; "auto" is exact
        raise ParameterError("neighbors", "approximate search finds k nearest neighbours; "
                             "an ε-ball graph (radius) is found exactly")
    if isinstance(radius, bool) or not isinstance(radius, numbers.Real) \
            or not np.isfinite(radius) or radius <= 0:
        raise ParameterError("radius", f"must be a positive number, got {radius!r}")
    if arrays.foreign(X) is not None:
        raise ParameterError("radius", "an ε-ball graph is found on NumPy rows; for rows of "
                             "another namespace pass n_neighbors (searched on their device), "
                             "or pass np.asarray(X)")
    from sklearn.neighbors import radius_neighbors_graph

    G = radius_neighbors_graph(X, float(radius), mode="connectivity", include_self=False)
    G = sp.csr_matrix(G, dtype=float)
    if symmetric:
        G = G.maximum(G.T).tocsr()
    G.eliminate_zeros()
    G.sort_indices()
    if G.nnz == 0:
        raise ParameterError("radius", f"the ε-ball graph with radius={radius} has no edge; "
                             "increase radius or use n_neighbors")
    isolated = np.flatnonzero(np.diff(G.indptr) == 0)
    if isolated.size:
        raise ParameterError("radius", f"{isolated.size} sample(s) have no neighbour within "
                             f"radius={radius} (e.g. sample {int(isolated[0])}), so their "
                             "degree is 0; increase radius or use n_neighbors")
    return ball_edges(G, symmetric), None


def _edge_strips(edges: Edges, width: int):
    """Slices of the edges, each at most ``EDGE_ENTRIES`` numbers of ``width`` per edge."""
    m = edges.rows.shape[0]
    step = max(1, EDGE_ENTRIES // max(width, 1))
    return [slice(e, min(e + step, m)) for e in range(0, m, step)]


def edge_lengths(X, edges: Edges):
    """(m,) ‖x_i − x_j‖² on every edge, by differences (duplicated samples are at 0), by strips
    of edges: no m × d array."""
    xp = arrays.namespace(X)
    parts = []
    for e in _edge_strips(edges, X.shape[1]):
        diff = xp.take(X, edges.rows[e], axis=0) - xp.take(X, edges.cols[e], axis=0)
        parts.append(xp.sum(diff * diff, axis=1))
    return xp.concat(parts) if parts else xp.zeros(0, dtype=X.dtype, device=arrays.device(X))


def heat_width(sq, edges: Edges) -> float:
    """τ's default: the median squared edge length, each pair of the graph counted once."""
    xp = arrays.namespace(sq)
    once = edges.once()
    count = int(xp.sum(xp.astype(once, xp.int64)))
    ordered = xp.sort(xp.where(once, sq, xp.inf))
    return 0.5 * (float(ordered[(count - 1) // 2]) + float(ordered[count // 2]))


def heat_weights(X, edges: Edges, tau: float | None = None) -> tuple:
    """``(w, τ)``: w_e = exp(−‖x_i − x_j‖²/τ) on every edge (Eq. 17), in X's namespace.

    τ defaults to the median squared edge length (:func:`heat_width`).  Distances are
    computed on the edges only, so duplicated samples get weight 1 (not a dropped
    zero-distance entry).
    """
    xp = arrays.namespace(X)
    sq = edge_lengths(X, edges)
    if tau is None:
        tau = heat_width(sq, edges)
        if not tau > 0:
            raise ParameterError("tau", "the median squared edge length is 0 (duplicated samples); "
                             "pass tau > 0 explicitly")
    elif isinstance(tau, bool) or not isinstance(tau, numbers.Real) or not np.isfinite(tau) \
            or tau <= 0:
        raise ParameterError("tau", f"the heat-kernel width must be a positive number, got {tau!r}")
    return xp.exp(-sq / tau), float(tau)


def reconstruction_weights(X, lists, reg: float = 1e-3):
    """LLE's reconstruction weights of the k-nearest-neighbour lists (n × k), in X's namespace:
    row i minimizes ‖x_i − Σ_j w_j x_j‖² over its neighbours j, subject to Σ_j w_j = 1; the
    local Gram matrix C = ZZᵀ (Z the neighbours less x_i) is regularized by ``reg``·tr(C)
    (scikit-learn's convention), which makes it solvable when k > d.  Rows are solved in
    batches of local Gram matrices, as scikit-learn's ``barycenter_weights`` does."""
    xp = arrays.namespace(X)
    n, k = lists.shape
    d = X.shape[1]
    eye = arrays.eye_like(k, X)
    step = max(1, EDGE_ENTRIES // (k * max(d, k)))
    parts = []
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        near = xp.take(X, xp.reshape(lists[i0:i1, :], (-1,)), axis=0)
        Z = xp.reshape(near, (i1 - i0, k, d)) - X[i0:i1, None, :]
        C = Z @ xp.permute_dims(Z, (0, 2, 1))
        tr = xp.sum(xp.linalg.diagonal(C), axis=1)
        C = C + xp.where(tr > 0, reg * tr, reg)[:, None, None] * eye
        ones = xp.ones((i1 - i0, k, 1), dtype=X.dtype, device=arrays.device(X))
        w = xp.linalg.solve(C, ones)[:, :, 0]
        parts.append(w / xp.sum(w, axis=1, keepdims=True))
    return xp.concat(parts, axis=0)


def barycenter_weights(X: np.ndarray, G: sp.csr_matrix, reg: float = 1e-3) -> sp.csr_matrix:
    """LLE's reconstruction weights (:func:`reconstruction_weights`) on the graph G (CSR, NumPy
    rows), any number of neighbours a row: one local Gram matrix at a time (an ε-ball graph)."""
    counts = np.diff(G.indptr)
    if G.shape[0] and np.all(counts == counts[0]) and counts[0] > 0:
        w = reconstruction_weights(X, G.indices.reshape(-1, int(counts[0])), reg)
        return sp.csr_matrix((w.ravel(), G.indices.copy(), G.indptr.copy()), shape=G.shape)
    data = np.empty(G.nnz)
    for i in range(G.shape[0]):
        lo = G.indptr[i]
        hi = G.indptr[i + 1]
        Z = X[G.indices[lo:hi]] - X[i]
        C = Z @ Z.T
        tr = np.trace(C)
        C.flat[:: C.shape[0] + 1] += reg * tr if tr > 0 else reg
        w = scipy.linalg.solve(C, np.ones(hi - lo), assume_a="pos")
        data[lo:hi] = w / w.sum()
    return sp.csr_matrix((data, G.indices.copy(), G.indptr.copy()), shape=G.shape)


# --- the statistics, from rows in memory or a chunk at a time ---------------------------------
class GraphSums(NamedTuple):
    """A set of rows' share of LPP's or NPE's statistics (:func:`lpp_sums`, :func:`npe_sums`),
    in the rows' namespace."""

    S_L: object
    """(d, d): Σ over the graph's edges, XᵀLX (LPP) or Xᵀ(I − W)ᵀ(I − W)X (NPE)."""
    moments: Moments
    """The rows' moments, weighted by their degrees (LPP) or not (NPE): S_D and the mean."""
    weights: object
    """(m,) the weight of each listed edge (None once a chunk's sums leave their task)."""
    tau: float | None
    """LPP's heat width; None for binary weights and for NPE."""


def lpp_sums(X, edges: Edges, tau: float | None = None, weight: str = "heat") -> GraphSums:
    """LPP's sums over rows X and their graph (Eq. 17–18), in X's namespace: the heat weights
    w_e = e^{−‖xᵢ−xⱼ‖²/τ} on the edges (or 1, ``weight="binary"``), W = A + Aᵀ
    (:class:`Edges`), D = diag(W1) and, as sums over the listed edges with a_e = c_e w_e,

        S_L = XᵀLX = Σ_e a_e (x_i − x_j)(x_i − x_j)ᵀ,
        N = Σ_i D_ii = 2 Σ_e a_e,   μ_D = Σ_e a_e (x_i + x_j) / N,
        S_D = Σ_e a_e [(x_i − μ_D)(x_i − μ_D)ᵀ + (x_j − μ_D)(x_j − μ_D)ᵀ]

    on a symmetric graph (LPP's).  Memory: strips of edges."""
    xp = arrays.namespace(X)
    share = xp.astype(edges.share, X.dtype)
    if weight == "heat":
        w, tau_ = heat_weights(X, edges, tau)
    else:
        w = xp.ones_like(share)
        tau_ = None
    a = share * w
    c = xp.mean(X, axis=0)        # the moments about the column mean, for their rounding
    d = X.shape[1]
    S_L = xp.zeros((d, d), dtype=X.dtype, device=arrays.device(X))
    sums = xp.zeros(d, dtype=X.dtype, device=arrays.device(X))
    second = xp.zeros((d, d), dtype=X.dtype, device=arrays.device(X))
    for e in _edge_strips(edges, d):
        Yi = xp.take(X, edges.rows[e], axis=0) - c
        Yj = xp.take(X, edges.cols[e], axis=0) - c
        ae = a[e]
        diff = Yi - Yj
        S_L = S_L + (diff * ae[:, None]).T @ diff
        sums = sums + ae @ Yi + ae @ Yj
        second = second + (Yi * ae[:, None]).T @ Yi + (Yj * ae[:, None]).T @ Yj
    total = 2.0 * xp.sum(a)
    u = sums / total
    scatter = second - total * (u[:, None] * u[None, :])
    return GraphSums(S_L, Moments(float(total), c, u, scatter), w, tau_)


def npe_sums(X, edges: Edges, lle_reg: float = 1e-3) -> GraphSums:
    """NPE's sums over rows X and their neighbour lists (one row each), in X's namespace: W
    LLE's reconstruction weights (:func:`reconstruction_weights`), S_L = EᵀE with E = (I − W)X
    (about any point: (I − W)1 = 0) and the rows' moments.  An ε-ball graph (NumPy rows, any
    number of neighbours a row) takes :func:`barycenter_weights`."""
    xp = arrays.namespace(X)
    stats = chunk_moments(X, validated=True)
    Xc = X - stats.mean
    if edges.lists is None:
        G = edges.sparse()
        W = barycenter_weights(X, G, lle_reg)
        E = Xc - W @ Xc
        return GraphSums(E.T @ E, stats, W.data, None)
    w = reconstruction_weights(X, edges.lists, lle_reg)
    n, k = edges.lists.shape
    d = X.shape[1]
    S_L = xp.zeros((d, d), dtype=X.dtype, device=arrays.device(X))
    step = max(1, EDGE_ENTRIES // (k * max(d, 1)))
    for i0 in range(0, n, step):
        i1 = min(i0 + step, n)
        near = xp.take(Xc, xp.reshape(edges.lists[i0:i1, :], (-1,)), axis=0)
        E = Xc[i0:i1, :] - xp.sum(xp.reshape(near, (i1 - i0, k, d)) * w[i0:i1, :, None],
                                   axis=1)
        S_L = S_L + E.T @ E
    return GraphSums(S_L, stats, xp.reshape(w, (-1,)), None)


def chunk_sums(block, start: int, n_neighbors: int, symmetric: bool, sums, neighbors: str,
               random_state: int | None, sample: np.ndarray, S: np.ndarray) -> tuple:
    """One chunk's ``(GraphSums, nearest, found)``: its rows checked, their k-nearest-neighbour
    graph within the chunk (``neighbors`` resolved at the chunk's size), ``sums(X, edges)``
    (without the edge weights); ``nearest`` (s, k + 1) the smallest squared distances from
    the sampled rows S to the chunk's rows (by blocks of rows, no s × m array), ``found``
    those from the sampled rows in this chunk (global indices ``sample``, sorted) to their
    neighbours in its graph.  Memory: the chunk, its search (NN-descent's graph and trees
    past ``EXACT_MAX_SAMPLES`` rows) and its edges."""
    from scipy.spatial.distance import cdist

    X = check_chunk(block, "X", start)
    check_magnitude(X, "X")
    m = X.shape[0]
    indices, _ = nearest_neighbors(X, n_neighbors, resolve_neighbors(neighbors, m),
                                   random_state, measure=False)
    part = sums(X, knn_edges(indices, symmetric))
    nearest = np.full((S.shape[0], n_neighbors + 1), np.inf)
    step = max(1, EDGE_ENTRIES // max(S.shape[0], 1))   # no s × m array
    for lo in range(0, m, step):
        near = cdist(S, X[lo:lo + step], "sqeuclidean")
        nearest = keep_nearest(np.hstack([nearest, near]), n_neighbors)
    mine = sample[(sample >= start) & (sample < start + m)] - start
    found = np.zeros((0, n_neighbors))
    if mine.shape[0]:  # by the same arithmetic as ``nearest``: a tie with the k-th counts
        found = np.vstack([cdist(X[i:i + 1], X[indices[i]], "sqeuclidean") for i in mine])
    return part._replace(weights=None), nearest, found


def chunked_sums(X, n_neighbors: int, symmetric: bool, sums, neighbors: str = "auto",
                 random_state: int | None = 0) -> tuple[GraphSums, np.ndarray | None,
                                                        NeighborSearch]:
    """``(GraphSums, taus, search)`` of rows read a chunk at a time (a Dask array or memmap;
    module docstring): every chunk's :func:`chunk_sums` (on the workers for a Dask array),
    their S_L summed and moments merged; ``taus`` each chunk's heat width (None without);
    ``search`` the graph's recall against the exact one over all rows, measured on
    ``RECALL_SAMPLE`` rows drawn from ``random_state`` (a single chunk searched exactly is the
    exact graph: no recall).  Memory: a chunk per task; the rest
    is d×d."""
    k = check_n_neighbors(n_neighbors)
    resolve_neighbors(neighbors, 0)  # checks it
    if neighbors == "exact":
        raise ParameterError("neighbors", "rows read a chunk at a time (a Dask array or memmap) "
                             "search each row's neighbours in its chunk; for the exact search "
                             "over all rows, pass the rows in memory (np.asarray(X))")
    bounds = chunk_bounds(X)
    smallest = int(np.diff(bounds).min())
    if k >= smallest:
        raise ParameterError("n_neighbors", f"must be smaller than the rows of every chunk, "
                             f"where each row's neighbours are searched (the smallest holds "
                             f"{smallest}), got {k}; rechunk X into larger chunks")
    sample = recall_sample(int(bounds[-1]), random_state)
    S = np.asarray(take_rows(X, sample), dtype=np.float64)
    parts = map_chunks(X, chunk_sums, k, symmetric, sums, neighbors, random_state, sample, S)
    S_L = parts[0][0].S_L
    for part in parts[1:]:
        S_L = S_L + part[0].S_L
    stats = merge_all([part[0].moments for part in parts])
    nearest = keep_nearest(np.hstack([part[1] for part in parts]), k)
    found = np.vstack([part[2] for part in parts])
    recall = float(np.mean(found <= nearest[:, k:k + 1]))
    taus = [part[0].tau for part in parts]
    method = resolve_neighbors(neighbors, int(bounds[-1])) if len(parts) == 1 else "chunks"
    if method == "exact":   # one chunk searched exactly: the exact graph
        search = NeighborSearch("exact", k)
    else:
        search = NeighborSearch(method, k, recall, int(sample.shape[0]), len(parts))
    return (GraphSums(S_L, stats.on_host(), None, None),
            None if taus[0] is None else np.asarray(taus), search)


# --- the objectives ----------------------------------------------------------------------------
def _rows(X):
    """X checked in memory (in its namespace, on its device), or a Dask array or memmap kept
    to be read a chunk at a time (its shape checked here, its values as each chunk is
    read)."""
    if not (is_lazy(X) or isinstance(X, np.memmap)):
        return check_rows(X, "X")
    return lazy_rows(X, "X")


def weight_matrix(edges: Edges, part: GraphSums):
    """W (CSR) of the in-memory graph for NumPy rows; None for rows of another namespace
    (their edges' weights stay on the device)."""
    if arrays.foreign(part.weights) is not None:
        return None
    return edges.sparse(part.weights)


def _check_form(form):
    if form not in FORMS:
        raise ParameterError("form", f"expected one of {FORMS}, got {form!r}")
    return form


class _GraphQuotient(QuotientOfTraces):
    """Shared tail of LPP and NPE: S_L (neighbour scatter) over S_D (spread), in two forms."""

    S_L: np.ndarray
    S_D: np.ndarray
    mean_: np.ndarray
    whitener_: np.ndarray

    def _finish(self, S_L, S_D, r, shrinkage, form, manifold, what):
        d = S_L.shape[0]
        S_D = shrink(S_D, shrinkage)
        S_L, S_D = 0.5 * (S_L + S_L.T), 0.5 * (S_D + S_D.T)
        self.S_L = S_L
        self.S_D = S_D
        self.form = form
        # S_L, S_D in the rows' namespace; the checks and S_D^{-1/2} on a host copy (d×d)
        if form == "ratio":  # the check needs no eigendecomposition: a Cholesky decides
            check_nonsingular(arrays.to_host(S_D), "X", f"{what} S_D",
                              "the quotient is unbounded")
            self.whitener_ = arrays.eye_like(d, S_D)
            super().__init__(-S_L, S_D, r, manifold)
        else:
            evals, V = eigh_nonsingular(arrays.to_host(S_D), "X", f"{what} S_D",
                                        "the quotient is unbounded")
            self.whitener_ = arrays.like((V / np.sqrt(evals)) @ V.T, S_D)  # S_D^{-1/2}
            C = self.whitener_ @ S_L @ self.whitener_
            super().__init__(-C, arrays.eye_like(d, S_D), r, manifold)

    def ratio(self, M) -> float:
        """f(M): neighbour scatter over spread of the projection (positive, smaller is better)."""
        return -super().ratio(M)

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) W M, W the whitener (the identity for the ratio form)."""
        return self.mean_, self.whitener_ @ self._point(M)


class LPP(_GraphQuotient):
    """Locality preserving projections: minimize tr(MᵀS_LM)/tr(MᵀS_DM) (module docstring).

    Parameters
    ----------
    X : array (n_samples, n_features)
        NumPy, or an array of another namespace (a PyTorch tensor, CuPy), whose neighbours
        are searched exactly on its device and whose graph sums, S_L and S_D stay there
        (module docstring).
    r : int, 1 ≤ r < n_features
    n_neighbors : int, default 5 (when ``radius`` is not given)
        k of the symmetrized k-nearest-neighbour graph; must be < n_samples.
    radius : float, optional
        ε of the ε-ball graph ‖x_i − x_j‖ < ε instead (every sample needs a neighbour).
    tau : float, optional
        Heat-kernel width τ of Eq. 17 (default: the median squared edge length).
    weight : {"heat", "binary"}
        Heat-kernel weights, or He & Niyogi's "simple-minded" W_ij = 1 on edges.
    shrinkage : float in [0, 1]
        s in the shrinkage S_D ← (1 − s)S_D + s·tr(S_D)/d·I, for singular S_D (n ≤ d).
    form : {"ratio", "whitened"}
        Orthogonal projection with the quotient-of-traces cost, or Eq. 19 verbatim.
    manifold : {"grassmann", "stiefel"}
    neighbors : {"auto", "exact", "approximate"}, default "auto"
        k-nearest-neighbour search: exact, approximate (NN-descent, its recall measured), or
        exact up to :data:`ldr.objectives.neighbors.EXACT_MAX_SAMPLES` rows and approximate
        beyond (:func:`ldr.objectives.neighbors.nearest_neighbors`).
    random_state : int or None, default 0
        Seed of the approximate search and of the rows its recall is measured on.

    X may also be a Dask array or ``np.memmap``, read a chunk at a time (module docstring):
    k-nearest-neighbour graphs only, ``neighbors`` not "exact".

    Attributes
    ----------
    W_ (sparse weights; None for rows read in chunks), tau_ (τ; for rows read in chunks
    with ``tau`` None, each chunk's own, an array), mean_ (degree-weighted mean μ_D), S_L, S_D,
    whitener_ (S_D^{-1/2} for ``form="whitened"``, I otherwise), search_ (how the neighbours
    were found, a :class:`~ldr.objectives.neighbors.NeighborSearch`; None for an ε-ball)

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3, 1, 1, 1, 0.3]
    >>> obj = ldr.objectives.LPP(X, 2, n_neighbors=6)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.ratio(res.M) <= obj.ratio(obj.heuristic()))
    True

    Default solver: ``["ism", "trust-region"]``, as for every quotient of traces.
    """

    method = Method("lpp", "locality preserving projections, 10-NN heat-kernel graph",
                    options={"reg": "shrinkage"}, preset={"n_neighbors": 10})

    def __init__(self, X, r: int, n_neighbors: int | None = None, radius: float | None = None,
                 tau: float | None = None, weight: str = "heat", shrinkage: float = 0.0,
                 form: str = "ratio", manifold: str = "grassmann", neighbors: str = "auto",
                 random_state: int | None = 0, *, reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        X = _rows(X)
        r = check_rank(r, X.shape[1])
        form = _check_form(form)
        S_L, S_D, self.W_, self.tau_, self.mean_, self.search_ = lpp_scatters(
            X, n_neighbors, radius, tau, weight, neighbors, random_state)
        self._finish(S_L, S_D, r, shrinkage, form, manifold, "degree-weighted scatter XᵀDX")

    @classmethod
    def from_scatters(cls, scatters: tuple, r: int, shrinkage: float = 0.0,
                      form: str = "ratio", manifold: str = "grassmann") -> LPP:
        """The objective from ``lpp_scatters(X, ...)`` (this module), for a caller that has already
        built the graph (the estimator, which reads S_D before it fits)."""
        obj = cls.__new__(cls)
        S_L, S_D, obj.W_, obj.tau_, obj.mean_, obj.search_ = scatters
        obj._finish(S_L, S_D, check_rank(r, S_L.shape[0]), shrinkage, _check_form(form),
                    manifold, "degree-weighted scatter XᵀDX")
        return obj


class LPPScatters(NamedTuple):
    """LPP's statistics (:func:`lpp_scatters`)."""

    S_L: np.ndarray
    S_D: np.ndarray
    W: sp.csr_matrix
    tau: float | None
    mean: np.ndarray
    search: NeighborSearch | None


def lpp_scatters(X, n_neighbors: int | None = None, radius: float | None = None,
                 tau: float | None = None, weight: str = "heat", neighbors: str = "auto",
                 random_state: int | None = 0) -> LPPScatters:
    """LPP's statistics of rows X (Eq. 17–18): (S_L, S_D, W, τ, mean, search) with W the
    symmetrized graph's weights (heat kernel e^{−‖xᵢ−xⱼ‖²/τ}, or binary), D = diag(W1), the
    D-weighted mean m, S_L = (X − m)ᵀ(D − W)(X − m), S_D = (X − m)ᵀD(X − m), and how the
    neighbours were found (:func:`neighbor_edges`).  Rows read a chunk at a time (a Dask array
    or memmap) give the chunks' graphs' sums (module docstring): W is None and τ each chunk's
    width (an array, unless given).

    S_D can be singular where the covariance is not: a row whose heat weights underflow (an
    outlier far from its neighbours, degree ≈ 1e−50) drops out of it, and with it any
    direction only such rows span."""
    if n_neighbors is None and radius is None:
        n_neighbors = 5
    if weight not in ("heat", "binary"):
        raise ParameterError("weight", f"expected 'heat' or 'binary', got {weight!r}")
    if is_lazy(X) or isinstance(X, np.memmap):
        if radius is not None:
            raise ParameterError("radius", "an ε-ball graph is found among all rows at once; "
                                 "for rows read a chunk at a time (a Dask array or memmap) pass "
                                 "n_neighbors, or pass the rows in memory (np.asarray(X))")
        sums = partial(lpp_sums, tau=tau, weight=weight)
        part, taus, search = chunked_sums(X, n_neighbors, True, sums, neighbors, random_state)
        tau_ = taus if tau is None else (None if weight == "binary" else float(tau))
        return LPPScatters(part.S_L, part.moments.scatter, None, tau_, part.moments.mean,
                           search)
    edges, search = neighbor_edges(X, n_neighbors, radius, symmetric=True, neighbors=neighbors,
                                   random_state=random_state)
    part = lpp_sums(X, edges, tau, weight)
    return LPPScatters(part.S_L, part.moments.scatter, weight_matrix(edges, part), part.tau,
                       part.moments.mean, search)


class NPE(_GraphQuotient):
    """Neighbourhood preserving embedding: minimize tr(MᵀS_LM)/tr(MᵀS_DM) (module docstring).

    Parameters
    ----------
    X : array (n_samples, n_features)
    r : int, 1 ≤ r < n_features
    n_neighbors : int, default 5 (when ``radius`` is not given)
        Each sample is reconstructed from its k nearest neighbours; k < n_samples.
    radius : float, optional
        Reconstruct from the neighbours within distance ε instead.
    lle_reg : float
        Regularization of each local Gram matrix (relative to its trace), as in LLE.
    shrinkage : float in [0, 1]
        Shrinkage of S_D, for singular covariance (n ≤ d).
    form : {"ratio", "whitened"}
    manifold : {"grassmann", "stiefel"}
    neighbors, random_state :
        The k-nearest-neighbour search and its seed, as in :class:`LPP`.

    X may also be a Dask array or ``np.memmap``, read a chunk at a time, as in :class:`LPP`.

    Attributes
    ----------
    W_ (sparse reconstruction weights, rows sum to 1; None for rows read in chunks), mean_,
    S_L, S_D, whitener_, search_

    Examples
    --------
    >>> import numpy as np, ldr
    >>> X = np.random.default_rng(0).standard_normal((80, 5)) * [3, 1, 1, 1, 0.3]
    >>> obj = ldr.objectives.NPE(X, 2, n_neighbors=8)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.ratio(res.M) <= obj.ratio(obj.heuristic()))
    True

    Default solver: ``["ism", "trust-region"]``, as for every quotient of traces.
    """

    method = Method("npe", "neighbourhood preserving embedding, 10-NN graph",
                    options={"reg": "shrinkage"}, preset={"n_neighbors": 10})

    def __init__(self, X, r: int, n_neighbors: int | None = None, radius: float | None = None,
                 lle_reg: float = 1e-3, shrinkage: float = 0.0, form: str = "ratio",
                 manifold: str = "grassmann", neighbors: str = "auto",
                 random_state: int | None = 0, *, reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        X = _rows(X)
        r = check_rank(r, X.shape[1])
        form = _check_form(form)
        if isinstance(lle_reg, bool) or not isinstance(lle_reg, numbers.Real) \
                or not np.isfinite(lle_reg) or lle_reg <= 0:
            raise ParameterError("lle_reg", f"must be a positive number, got {lle_reg!r}")
        if n_neighbors is None and radius is None:
            n_neighbors = 5
        sums = partial(npe_sums, lle_reg=float(lle_reg))
        if is_lazy(X) or isinstance(X, np.memmap):
            if radius is not None:
                raise ParameterError("radius", "an ε-ball is found among all rows at once; for "
                                     "rows read a chunk at a time (a Dask array or memmap) pass "
                                     "n_neighbors, or pass the rows in memory (np.asarray(X))")
            part, _, self.search_ = chunked_sums(X, n_neighbors, False, sums, neighbors,
                                                 random_state)
            self.W_ = None
        else:
            edges, self.search_ = neighbor_edges(X, n_neighbors, radius, symmetric=False,
                                                 neighbors=neighbors, random_state=random_state)
            part = sums(X, edges)
            self.W_ = weight_matrix(edges, part)
        self.mean_ = part.moments.mean
        self._finish(part.S_L, part.moments.scatter, r, shrinkage, form, manifold,
                     "covariance XᵀX")
