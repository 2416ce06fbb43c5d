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
  that lowers the potential Σ D(x)² most — drawn as scikit-learn draws them, from one
  RandomState stream for the ``n_init`` runs (:func:`plusplus`);
* **Lloyd's iteration**: labels l_i = argmin_c ‖z_i − μ_c‖², then μ_c = the mean of its
  rows (a cluster left empty keeps its center), until Σ_c ‖Δμ_c‖² ≤ tol · (the columns'
  mean variance) — scikit-learn's rule — or ``max_iter``; the labels of the last centers;
* the run of least inertia Σ_i ‖z_i − μ_{l_i}‖² of ``n_init`` seeded runs, or one run from
  given centers;
* the clusters named in the order of their first row (the first row's cluster is 0), so
  that one partition has one set of labels whichever seeds found it.

Both draw the same seeds from the same stream (up to rounding at a draw's boundary) and run
Lloyd's iteration from them: the same partition but for rounding's ties, not the same bits.

Reference: D. Arthur, S. Vassilvitskii (2007), "k-means++: the advantages of careful
seeding", SODA 2007, 1027–1035.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.utils import check_random_state

from ldr.data import arrays
from ldr.data.rows import take_rows
from ldr.objectives.candidates import block_sqdist

__all__ = ["centroids", "first_seen", "kmeans", "plusplus"]


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
    rng = check_random_state(random_state)  # scikit-learn's KMeans: one stream, n_init seeds
    best = None
    for _ in range(n_init):
        labels, inertia = _lloyd(Z, take_rows(Z, plusplus(Z, k, rng)), max_iter, limit)
        if best is None or inertia < best[1]:
            best = (labels, inertia)
    return first_seen(best[0])


def plusplus(Z, k: int, random_state) -> np.ndarray:
    """The row indices of k centers by greedy k-means++ seeding (module docstring):
    scikit-learn's :func:`~sklearn.cluster.kmeans_plusplus` for NumPy rows; for another
    namespace the same algorithm with the same draws from ``random_state`` (a RandomState:
    the first center ``choice(n)``, then ``uniform(trials)`` scaled by the potential and
    searched in the cumulative D²), so the same centers up to rounding at a draw's boundary,
    the rows' distances computed on their device."""
    rng = check_random_state(random_state)
    if arrays.foreign(Z) is None:
        return kmeans_plusplus(Z, k, random_state=rng)[1]
    xp = arrays.namespace(Z)
    where = arrays.device(Z)
    n = Z.shape[0]
    trials = 2 + int(math.log(k))
    picked = [int(rng.choice(n, p=np.full(n, 1.0 / n)))]
    closest = block_sqdist(Z, Z[picked[0]:picked[0] + 1, :])[:, 0]
    potential = float(xp.sum(closest))
    for _ in range(1, k):
        draws = xp.asarray(rng.uniform(size=trials) * potential, dtype=Z.dtype, device=where)
        ids = xp.clip(xp.searchsorted(xp.cumulative_sum(closest), draws), 0, n - 1)
        reach = xp.minimum(closest[:, None], block_sqdist(Z, xp.take(Z, ids, axis=0)))
        potentials = np.asarray(arrays.to_host(xp.sum(reach, axis=0)), dtype=float)
        best = int(np.argmin(potentials))
        picked.append(int(arrays.to_host(ids)[best]))
        closest = reach[:, best]
        potential = float(potentials[best])
    return np.asarray(picked, dtype=np.intp)


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
