"""The WDA estimators' steps outside the fit templates: the full-data check after a mini-batch
fit, the singleton rule of WDAClustering's assignment and WassersteinDA's steps on an input of
another array namespace (``ldr.estimators.wda``)."""

from __future__ import annotations

import numpy as np

from ldr.data import arrays
from ldr.data.rows import moments
from ldr.errors import ParameterError
from ldr.estimators._base import check_n_components
from ldr.estimators._namespace import to_numpy
from ldr.estimators._output import validate_data
from ldr.objectives.transport import class_scatters

#: the full-data check after a mini-batch fit runs while the largest class has at most
#: this many rows (one exact cost evaluation, each pair's reference kernel stored — one
#: ``exp`` pass per pair instead of one per Sinkhorn half-iteration, 220 MiB at 5250 rows;
#: beyond, ``full_data_`` says it was skipped)
FULL_CHECK_MAX_CLASS = 8000


def _full_data_check(obj, res) -> dict | None:
    """After a mini-batch fit: the full-data (exact plans) trace ratio at the answer beside the
    mini-batch one, and the result's ``reason`` amended — the solver's convergence is that of
    the mini-batch objective, never a full-data certificate.  None for an exact fit."""
    if obj.exact:
        return None
    largest = max(G.shape[0] for G in obj.groups)
    note = (f"mini-batch OT objective (batch_size {obj.batch_size}, n_batches "
            f"{obj.n_batches}): converged refers to it, not to the full data")
    out = {"batch_ratio": obj.ratio(res.M), "full_ratio": None, "relative_gap": None}
    if largest <= FULL_CHECK_MAX_CLASS:
        check = obj.full_data()  # one forward pass: store each pair's kernel (≤ 512 MiB)
        check.memory_budget = max(check.memory_budget, min(2.0**30, 2.5 * 8 * largest**2))
        full = check.ratio(res.M)
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


def _validate_in(estimator, X, y, xp):
    """``_WDABase._validate_X`` for X of another namespace under ``array_api_dispatch``
    (``ldr.estimators._namespace``): (X as float64 in its namespace, on its device; y as
    NumPy labels, n of them; the output dtype).  X is never copied to the host."""
    X = validate_data(estimator, X, dtype=[xp.float64, xp.float32], ensure_min_samples=2)
    d = X.shape[1]
    estimator.n_components_ = check_n_components(estimator.n_components, d,
                                                 estimator._natural_n_components(d))
    dtype = np.float32 if X.dtype == xp.float32 else np.float64
    return (X if X.dtype == xp.float64 else xp.astype(X, xp.float64)), to_numpy(y), dtype


def _class_scatters(X, codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(S_w, S_b) of the rows X (NumPy, d×d) — for X of another namespace computed there, on
    its device, in one pass (:func:`ldr.data.rows.moments`), only the d×d results copied."""
    if arrays.foreign(X) is None:
        return class_scatters(X, codes, n_classes)  # by row chunks: no copy of X
    return moments(X, codes, name="X").on_host().class_scatter()[:2]


def _host_mean(X) -> np.ndarray:
    """The column means of X as NumPy (of another namespace: computed there, d copied)."""
    return arrays.to_host(arrays.namespace(X).mean(X, axis=0))


def _start_array(start, shape):
    """WassersteinDA's array ``start`` (POT's P0) as given, checked; None for a named start
    (a NumPy array: an array of another namespace is copied, d×p)."""
    if isinstance(start, str):
        return None
    try:
        P0 = np.array(to_numpy(start), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError("start", f"expected a name or a numeric array, got "
                             f"{start!r} ({exc})") from None
    if P0.shape != shape or not np.all(np.isfinite(P0)):
        raise ParameterError("start", f"expected a finite array of shape {shape} "
                             f"(n_features, n_components), got shape {P0.shape}")
    return P0
