"""The WDA estimators' steps outside the fit templates: the full-data check after a mini-batch
fit and the singleton rule of WDAClustering's assignment (``ldr.estimators.wda``)."""

from __future__ import annotations

import numpy as np

#: the full-data check after a mini-batch fit runs while the largest class has at most
#: this many rows (one exact cost evaluation; beyond, ``full_data_`` says it was skipped)
FULL_CHECK_MAX_CLASS = 8000


def _full_data_check(obj, res) -> dict | None:
    """After a mini-batch fit: the full-data (exact plans) trace ratio at the answer beside the
    mini-batch one, and the result's ``reason`` amended — the solver's convergence is that of
    the mini-batch objective, never a full-data certificate.  None for an exact fit."""
    if obj.exact:
        return None
    largest = max(len(G) for G in obj.groups)
    note = (f"mini-batch OT objective (batch_size {obj.batch_size}, n_batches "
            f"{obj.n_batches}): converged refers to it, not to the full data")
    out = {"batch_ratio": obj.ratio(res.M), "full_ratio": None, "relative_gap": None}
    if largest <= FULL_CHECK_MAX_CLASS:
        full = obj.full_data().ratio(res.M)
        out.update(full_ratio=full, relative_gap=(out["batch_ratio"] - full) / abs(full))
        note += (f"; full-data trace ratio {full:.6g} vs mini-batch "
                 f"{out['batch_ratio']:.6g}")
    else:
        note += (f"; full-data check skipped (largest class {largest} > "
                 f"{FULL_CHECK_MAX_CLASS} rows)")
    out["note"] = note
    res.reason = f"{res.reason} [{note}]"
    return out


def _merge_singletons(labels: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Labels for the WDA step: a cluster of one sample (no transport plan within it) joins
    the cluster with the nearest centroid.  The clustering itself (``labels_``) is k-means'."""
    counts = np.bincount(labels)
    small = np.flatnonzero(counts < 2)
    if len(small) == 0:
        return labels
    keep = np.setdiff1d(np.flatnonzero(counts), small)
    if len(keep) < 2:
        raise ValueError("WDAClustering: k-means left fewer than two clusters with two or more "
                         "samples; lower n_clusters")
    centroids = np.array([Z[labels == c].mean(axis=0) for c in keep])
    out = labels.copy()
    for i in np.flatnonzero(np.isin(labels, small)):
        out[i] = keep[np.argmin(np.sum((centroids - Z[i]) ** 2, axis=1))]
    return out
