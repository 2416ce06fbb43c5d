"""k-means of the rows, in their own array namespace: the labels of the clustering estimators
(:class:`~ldr.estimators.WDAClustering`'s rounds and ``labels_``, the clustering HSICs'
``labels_``).

NumPy rows are clustered by scikit-learn's :class:`~sklearn.cluster.KMeans`.  scikit-learn's
KMeans has no array API support, so rows of another namespace (a PyTorch tensor on a GPU or
not, CuPy, array-api-strict) are clustered there by the same algorithm written against the
array API — the rows never leave their device; only the labels (n integers), the centers
(k × p) and scalars reach the host:

* **seeds**: greedy k-means++ (Arthur & Vassilvitskii 2007, with scikit-learn's greedy
  variant): the first center a uniform row, each next one the best of 2 + ⌊ln k⌋ rows drawn
  with probability ∝ D(x)², the squared distance to the nearest center so far — the one
  that lowers the potential Σ D(x)² most;
* **Lloyd's iteration**: labels l_i = argmin_c ‖z_i − μ_c‖², then μ_c = the mean of its
  rows (a cluster left empty keeps its center), until Σ_c ‖Δμ_c‖² ≤ tol · (the columns'
  mean variance) — scikit-learn's rule — or ``max_iter``; the labels of the last centers;
* the run of least inertia Σ_i ‖z_i − μ_{l_i}‖² of ``n_init`` seeded runs, or one run from
  given centers;
* the clusters named in the order of their first row (the first row's cluster is 0), so
  that one partition has one set of labels whichever seeds found it.

Both find a local minimum of the same cost from seeds of the same law; on clusters that are
well separated they give the same partition, not the same bits (their random draws differ).

Reference: D. Arthur, S. Vassilvitskii (2007), "k-means++: the advantages of careful
seeding", SODA 2007, 1027–1035.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from ldr.data import arrays
from ldr.objectives.candidates import block_sqdist

__all__ = ["centroids", "first_seen", "kmeans"]


def kmeans(Z, k: int, *, n_init: int = 10, init=None, random_state=None, max_iter: int = 300,
           tol: float = 1e-4) -> np.ndarray:
    """The k-means labels of the rows Z (n × p) as NumPy integers: from ``init`` (k × p
    centers, one run) or the best of ``n_init`` k-means++ seeded runs (``random_state``:
    scikit-learn's seed rule) — scikit-learn's KMeans for NumPy rows, the module's array API
    code in the rows' namespace otherwise (module docstring)."""
    if arrays.foreign(Z) is None:
        if init is not None:
            model = KMeans(k, init=np.asarray(init, dtype=float), n_init=1, max_iter=max_iter,
                           tol=tol)
        else:
            model = KMeans(k, n_init=n_init, random_state=random_state, max_iter=max_iter,
                           tol=tol)
        return first_seen(model.fit_predict(Z))
    xp = arrays.namespace(Z)
    limit = tol * float(xp.mean(xp.var(Z, axis=0)))
    if init is not None:
        return first_seen(_lloyd(Z, arrays.like(np.asarray(init, dtype=float), Z),
                                 max_iter, limit)[0])
    rng = np.random.default_rng(check_random_state(random_state).randint(2**31))
    best = None
    for _ in range(n_init):
        labels, inertia = _lloyd(Z, _seeds(Z, k, rng), max_iter, limit)
        if best is None or inertia < best[1]:
            best = (labels, inertia)
    return first_seen(best[0])


def first_seen(labels: np.ndarray) -> np.ndarray:
    """The labels renamed 0, 1, … in the order of their first row."""
    _, first, codes = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.intp)
    rank[np.argsort(first)] = np.arange(first.shape[0])
    return rank[codes.ravel()]


def centroids(Z, labels: np.ndarray, k: int) -> np.ndarray:
    """The k × p means of the rows Z (any namespace) of each label 0, …, k − 1 (host labels),
    on the host; NaN rows for a label without rows."""
    xp = arrays.namespace(Z)
    onehot = _onehot(xp.asarray(np.asarray(labels), device=arrays.device(Z)), k, Z)
    counts = np.asarray(arrays.to_host(xp.sum(onehot, axis=0)), dtype=float)
    sums = np.asarray(arrays.to_host(onehot.T @ Z), dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


def _onehot(labels, k: int, Z):
    """The n × k indicator of the labels (in Z's namespace and float dtype)."""
    xp = arrays.namespace(Z)
    codes = xp.arange(k, device=arrays.device(Z))
    return xp.astype(xp.astype(labels, codes.dtype)[:, None] == codes[None, :], Z.dtype)


def _seeds(Z, k: int, rng: np.random.Generator):
    """k centers by greedy k-means++ (module docstring)."""
    xp = arrays.namespace(Z)
    where = arrays.device(Z)
    n = Z.shape[0]
    trials = 2 + int(math.log(k))
    first = int(rng.integers(n))
    centers = [Z[first:first + 1, :]]
    closest = block_sqdist(Z, centers[0])[:, 0]
    potential = float(xp.sum(closest))
    for _ in range(1, k):
        cumulative = xp.cumulative_sum(closest)
        draws = xp.asarray(rng.random(trials) * potential, dtype=Z.dtype, device=where)
        picked = xp.clip(xp.searchsorted(cumulative, draws), 0, n - 1)
        candidates = xp.take(Z, picked, axis=0)
        reach = xp.minimum(closest[:, None], block_sqdist(Z, candidates))
        potentials = np.asarray(arrays.to_host(xp.sum(reach, axis=0)), dtype=float)
        best = int(np.argmin(potentials))
        closest = reach[:, best]
        potential = float(potentials[best])
        centers.append(candidates[best:best + 1, :])
    return xp.concat(centers, axis=0)


def _lloyd(Z, C, max_iter: int, limit: float) -> tuple[np.ndarray, float]:
    """Lloyd's iteration from the centers C: (host labels, inertia)."""
    xp = arrays.namespace(Z)
    k = C.shape[0]
    for _ in range(max_iter):
        onehot = _onehot(xp.argmin(block_sqdist(Z, C), axis=1), k, Z)
        counts = xp.sum(onehot, axis=0)
        means = (onehot.T @ Z) / xp.clip(counts, 1.0, None)[:, None]
        new = xp.where(counts[:, None] > 0, means, C)   # an empty cluster keeps its center
        shift = float(xp.sum((new - C) ** 2))
        C = new
        if shift <= limit:
            break
    D = block_sqdist(Z, C)
    labels = xp.argmin(D, axis=1)
    inertia = float(xp.sum(xp.min(D, axis=1)))
    return np.asarray(arrays.to_host(labels), dtype=np.intp), inertia
