"""The k nearest neighbours of every row: exact search, or approximate past a measured size.

Exact search is a k-d tree (scipy's :class:`~scipy.spatial.cKDTree`) in at most
:data:`TREE_MAX_FEATURES` dimensions — an embedding's, where it takes about O(n log n) — and
scikit-learn's brute-force :class:`~sklearn.neighbors.NearestNeighbors` beyond, O(n²·d) time
for all n rows: the choice scikit-learn's ``algorithm="auto"`` makes, with scipy's tree.
Rows of another array namespace (a PyTorch tensor, on a GPU or not; CuPy) are searched
exactly in that namespace and on their device (:func:`strip_search`): strips of rows against
all rows, their squared distances ‖x_i‖² + ‖x_j‖² − 2 x_iᵀx_j by one matrix product and the k
smallest of each row kept — brute force, O(n²·d), the form a GPU computes fastest (as
faiss's flat GPU index).
The approximate search is NN-descent (Dong, Charikar & Li, 2011) from pynndescent: it
refines a random k-NN graph by the rule that a neighbour of a neighbour is likely a
neighbour, in about O(n^1.14·d) time (the paper's measured exponent), plus a fixed
compilation cost of numba's code (about 20 s, once per process).

``neighbors="auto"`` searches exactly up to :data:`EXACT_MAX_SAMPLES` rows and approximately
beyond (rows of another namespace: exactly at any size; NN-descent runs on NumPy rows
only).  An approximate graph's **recall** is measured on every call: the share of the k
exact nearest neighbours it found, over :data:`RECALL_SAMPLE` rows drawn from the seed, whose
exact neighbours cost O(RECALL_SAMPLE·n·d).  A neighbour found counts when it is no farther
than the k-th exact one, so ties (duplicated rows) are not counted as misses.

References
----------
W. Dong, M. Charikar, K. Li (2011), "Efficient k-nearest neighbor graph construction for
generic similarity measures", Proceedings of WWW 2011, 577–586.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays

__all__ = ["EXACT_MAX_SAMPLES", "GRAPH_DEGREE", "NEIGHBORS", "RECALL_SAMPLE",
           "STRIP_ENTRIES", "TREE_MAX_FEATURES", "NeighborSearch", "check_n_neighbors",
           "drop_self", "exact_search", "keep_nearest", "nearest_neighbors",
           "neighbor_recall", "recall_sample", "resolve_neighbors", "smallest", "strip_search"]

NEIGHBORS = ("auto", "exact", "approximate")
# benchmark: benchmarks/bench_neighbors.py
#: ``neighbors="auto"`` searches exactly up to this many rows, about where the exact search's
#: quadratic time meets NN-descent's, which includes a fixed compilation (measured at d = 50,
#: k = 5, on one core; the figures are on the docs' pairwise-scale page)
EXACT_MAX_SAMPLES = 100_000
#: NN-descent's graph degree: pynndescent's own default (30), or k + 1 when that is larger;
#: the k nearest of each row's list are kept
GRAPH_DEGREE = 30
#: rows on which an approximate graph's recall is measured against exact search
RECALL_SAMPLE = 256
#: exact search uses a k-d tree in at most this many features (scikit-learn's rule for its
#: ``algorithm="auto"``: past it a tree prunes too little to beat brute force); the tree is
#: scipy's cKDTree, which answers the same queries faster than scikit-learn's KDTree
TREE_MAX_FEATURES = 15
#: squared distances per strip of :func:`strip_search` (2²⁴: 128 MB in float64)
STRIP_ENTRIES = 2**24


@dataclass(frozen=True)
class NeighborSearch:
    """How a k-nearest-neighbour graph was found.

    Attributes
    ----------
    method : {"exact", "approximate", "chunks"}
        Exact search, NN-descent over all rows, or each row's neighbours searched among the
        rows of its chunk (rows read a chunk at a time), by the ``neighbors`` rule there.
    n_neighbors : int
        k.
    recall : float or None
        For an approximate graph, the share of the exact k nearest neighbours over all rows
        that it holds, over ``sample`` rows (1 is exact); None for exact search.
    sample : int
        The rows the recall was measured on (0 for exact search).
    chunks : int
        The chunks searched (1 unless ``method`` is "chunks").
    """

    method: str
    n_neighbors: int
    recall: float | None = None
    sample: int = 0
    chunks: int = 1

    def describe(self, n_samples: int) -> str | None:
        """None for exact search; else a sentence naming the approximation and its recall."""
        if self.method == "exact":
            return None
        how = "NN-descent, pynndescent" if self.method == "approximate" else \
            f"each row's neighbours searched in its chunk, {self.chunks} chunks"
        return (f"approximate {self.n_neighbors}-nearest-neighbour graph of {n_samples} rows "
                f"({how}): it holds {self.recall:.1%} of the exact neighbours over all rows, "
                f"measured on {self.sample} rows")


def resolve_neighbors(neighbors: str, n_samples: int) -> str:
    """``"exact"`` or ``"approximate"``: what ``neighbors`` means at ``n_samples`` rows."""
    if not isinstance(neighbors, str) or neighbors not in NEIGHBORS:
        raise ParameterError("neighbors", f"expected one of {NEIGHBORS}, got {neighbors!r}")
    if neighbors == "auto":
        return "exact" if n_samples <= EXACT_MAX_SAMPLES else "approximate"
    return neighbors


def drop_self(indices: np.ndarray, k: int) -> np.ndarray:
    """Each row's first k indices other than the row itself (rows of ``indices`` hold k + 1
    candidates in increasing distance; a duplicated row may come before the row itself)."""
    n = indices.shape[0]
    own = indices == np.arange(n)[:, None]
    keep = ~own
    # a row whose own index is absent drops its farthest candidate instead
    keep[~own.any(axis=1), -1] = False
    return indices[keep].reshape(n, k)


def check_n_neighbors(n_neighbors) -> int:
    """k as an int, or a ParameterError unless it is a positive integer."""
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral) \
            or n_neighbors < 1:
        raise ParameterError("n_neighbors", f"must be a positive integer, got {n_neighbors!r}")
    return int(n_neighbors)


def nearest_neighbors(X: np.ndarray, n_neighbors: int, neighbors: str = "auto",
                      random_state: int | None = 0, measure: bool = True
                      ) -> tuple[np.ndarray, NeighborSearch]:
    """``(indices, search)``: the ``n_neighbors`` nearest rows of each row of X (Euclidean),
    itself excluded, shape (n, k), nearest first, and how they were found.

    ``neighbors``: ``"exact"``, ``"approximate"`` (NN-descent; its recall is measured, module
    docstring) or ``"auto"`` (exact up to :data:`EXACT_MAX_SAMPLES` rows).  ``random_state``
    seeds NN-descent and the rows the recall is measured on; ``measure=False`` leaves the
    recall unmeasured (None), for a caller that measures it against more rows than X.

    X of another namespace than NumPy is searched exactly there (:func:`strip_search`; indices
    in its namespace, on its device) under "auto" or "exact"; "approximate" is refused.
    """
    n = X.shape[0]
    k = check_n_neighbors(n_neighbors)
    if k >= n:
        raise ParameterError("n_neighbors", f"must be smaller than n_samples = {n} (a sample is "
                                            f"not its own neighbour), got {k}")
    method = resolve_neighbors(neighbors, n)
    if arrays.foreign(X) is not None:
        if neighbors == "approximate":
            raise ParameterError("neighbors", "the approximate search (NN-descent) runs on NumPy "
                                 "rows; rows of another namespace are searched exactly on "
                                 "their device (neighbors='auto' or 'exact'), or pass "
                                 "np.asarray(X)")
        return strip_search(X, k), NeighborSearch("exact", k)
    if method == "exact":
        return drop_self(exact_search(X, k + 1), k), NeighborSearch("exact", k)
    import pynndescent

    degree = min(max(GRAPH_DEGREE, k + 1), n)
    index = pynndescent.NNDescent(X, n_neighbors=degree, random_state=random_state)
    found = index.neighbor_graph[0][:, :k + 1]
    if (found < 0).any():
        raise RuntimeError(f"NN-descent left some of the {k + 1} nearest candidates unfound "
                           f"({n} rows); use neighbors='exact'")
    indices = drop_self(found, k)
    if not measure:
        return indices, NeighborSearch("approximate", k)
    sample = min(RECALL_SAMPLE, n)
    recall = neighbor_recall(X, indices, sample, random_state)
    return indices, NeighborSearch("approximate", k, recall, sample)


def exact_search(X: np.ndarray, k: int) -> np.ndarray:
    """The k nearest rows of each row of X (itself among them), nearest first: a k-d tree in
    at most :data:`TREE_MAX_FEATURES` features, brute force beyond (module docstring)."""
    if X.shape[1] <= TREE_MAX_FEATURES:
        from scipy.spatial import cKDTree

        return cKDTree(X).query(X, k=k)[1].reshape(X.shape[0], k)
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors(
        X, return_distance=False)


def smallest(D, k: int):
    """The column indices of the k smallest entries of each row of D, smallest first (ties in
    any order): NumPy's ``argpartition``, PyTorch's ``topk``, else a sort of the rows."""
    xp = arrays.namespace(D)
    if xp is np:
        part = np.argpartition(D, k - 1, axis=1)[:, :k] if k < D.shape[1] else \
            np.broadcast_to(np.arange(D.shape[1]), D.shape)
        order = np.argsort(np.take_along_axis(D, part, axis=1), axis=1, kind="stable")
        return np.take_along_axis(part, order, axis=1)
    if hasattr(xp, "topk"):     # PyTorch: a partial selection, as argpartition
        return xp.topk(D, k, dim=1, largest=False, sorted=True).indices
    return xp.argsort(D, axis=1, stable=True)[:, :k]


def strip_search(X, k: int):
    """The k nearest rows of each row of X other than itself, nearest first, in X's namespace
    and on its device (module docstring): strips of rows, each with its squared distances
    to all rows (at most :data:`STRIP_ENTRIES` of them) and its own column set to ∞.  A
    duplicated row's twin comes first (distance 0).  Memory: a strip; time O(n²·d)."""
    xp = arrays.namespace(X)
    n = X.shape[0]
    sq = xp.sum(X * X, axis=1)
    step = max(1, STRIP_ENTRIES // n)
    columns = xp.arange(n, device=arrays.device(X))
    found = []
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        D = sq[lo:hi, None] + sq[None, :] - 2.0 * (X[lo:hi, :] @ X.T)
        D = xp.where(columns[None, :] == columns[lo:hi, None], xp.inf, D)
        found.append(smallest(D, k))
    return xp.concat(found, axis=0)


def recall_sample(n: int, random_state: int | None = 0) -> np.ndarray:
    """The rows (sorted) an approximate graph's recall is measured on: ``RECALL_SAMPLE`` of n
    (all of them when fewer), drawn from ``random_state``."""
    return np.sort(np.random.default_rng(random_state).choice(n, min(RECALL_SAMPLE, n),
                                                              replace=False))


def keep_nearest(D: np.ndarray, k: int) -> np.ndarray:
    """The k + 1 smallest entries of each row of D (squared distances), ascending, padded with
    ∞ when D has fewer columns: the candidates for a sampled row's k exact neighbours and
    itself, kept as the rows are read a chunk at a time (``keep_nearest(np.hstack([kept,
    new]), k)`` merges two sets)."""
    D = np.asarray(D, dtype=float)
    if D.shape[1] < k + 1:
        D = np.hstack([D, np.full((D.shape[0], k + 1 - D.shape[1]), np.inf)])
    return np.sort(np.partition(D, k, axis=1)[:, :k + 1], axis=1)


def neighbor_recall(X: np.ndarray, indices: np.ndarray, sample: int = RECALL_SAMPLE,
                    random_state: int | None = 0) -> float:
    """The share of the exact k nearest neighbours that ``indices`` (n × k) holds, over
    ``sample`` rows drawn from ``random_state``: a neighbour counts when it is no farther than
    the k-th exact neighbour of its row."""
    from sklearn.neighbors import NearestNeighbors

    n, k = indices.shape
    rows = np.sort(np.random.default_rng(random_state).choice(n, min(sample, n),
                                                              replace=False))
    exact = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(X).kneighbors(
        X[rows], return_distance=False)
    # both sets' distances by differences (scikit-learn's expansion rounds close pairs apart);
    # the row itself, at distance 0, is among the k + 1 exact candidates
    kth = np.linalg.norm(X[exact] - X[rows][:, None, :], axis=2).max(axis=1)
    found = np.linalg.norm(X[indices[rows]] - X[rows][:, None, :], axis=2)
    return float(np.mean(found <= kth[:, None]))
