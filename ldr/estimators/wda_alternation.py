"""Iterative WDA clustering (Liu et al., Algorithm 2): k-means in the projected space and a
WDA step on the resulting clusters, alternated until the subspace stops moving, with a guard
against partitions that collapse into a few tiny clusters (:class:`ldr.estimators.WDAClustering`).

**The steps.**  Round t runs k-means on the rows projected by P_{t−1} (labels L_t), then
P_t = WDA-SCF on L_t from P_{t−1} (:func:`wda_step`); the alternation ends when
sin θ(P_{t−1}, P_t) <= ``outer_tol`` or after ``max_outer`` rounds (:func:`alternate`).  A
cluster of one sample has no transport plan within it: for the WDA step it joins the cluster
with the nearest centroid (:func:`merge_singletons`).  Where the within-cluster scatter is
singular (k-means split along a direction in which every cluster is one point), WDA keeps
those directions while they are fewer than p (the trace ratio is bounded) and P_t is the top
p of them otherwise (the ratio is unbounded there: the null-space rule), as in
:class:`~ldr.estimators.WassersteinDA`.

**Why the guard.**  WDA's within-cluster transport plans are entropic (K = exp(−D/reg)).
Where the projected squared distances are large against ``reg``, each cluster's plan onto
itself is nearly the identity and its cost nearly zero, so the trace ratio grows along
directions in which a few samples lie far from all others: they add to the between-cluster
cost and hardly to the within-cluster one.  The next k-means then isolates those samples, and
the WDA steps fitted to such clusters reinforce them.  Neither the trace ratio nor k-means'
cost in the projection can tell such a collapse from progress — both favour it — so the
alternation watches the cluster sizes instead (:func:`min_cluster_size`).

**Why raise reg.**  The cause is ``reg`` against the within-cluster distances, not the
solver's path: a collapse first raises reg to the within-cluster spread of the last accepted
clusters (:func:`within_spread`), the scale below which each cluster's plan onto itself turns
into the identity, and makes the step again; the guard stops only when reg is already at
least that.

References
----------
H. Liu, Y. Cai, Y.-L. Chen and P. Li, "Ratio trace formulation of Wasserstein discriminant
analysis", NeurIPS 2020 (Algorithm 2).  C. Ding and T. Li, "Adaptive dimension reduction
using discriminant analysis and K-means clustering", ICML 2007.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from ldr.core.deprecation import user_stacklevel
from ldr.core.errors import ParameterError
from ldr.core.result import Result, Trace
from ldr.data import arrays
from ldr.data.rows import as_dask_array
from ldr.data.validation import is_lazy, span_basis
from ldr.estimators.kmeans import centroids, kmeans
from ldr.manifolds import sin_largest_angle
from ldr.objectives.transport import class_scatters
from ldr.objectives.wda import within_reg

__all__ = ["MIN_CLUSTER_SHARE", "alternate", "alternation_result", "final_labels", "projected",
           "null_space_result", "ordered_null_space",
           "kmeans_step", "merge_singletons", "min_cluster_size", "tiny_clusters",
           "warn_stopped", "warn_tiny", "warn_unconverged", "wda_step", "within_spread"]

#: ``min_cluster_size="auto"``: besides the floor p + 1, a cluster is tiny below this share of
#: the mean cluster size n/k — far below the size of a cluster that describes a group of the
#: data, and above the clusters of one to a few samples that a collapse leaves
MIN_CLUSTER_SHARE = 0.03


def min_cluster_size(setting, n: int, k: int, p: int) -> int:
    """The size below which a cluster is tiny: ``"auto"`` = max(2, min(max(p + 1,
    ⌈:data:`MIN_CLUSTER_SHARE`·n/k⌉), ⌊n/(2k)⌋)), or an int >= 1 (1: no cluster is ever
    tiny, the guard is off).

    p + 1: a cluster of at most p samples spans at most p − 1 directions, so in the
    p-dimensional projection its scatter is singular and WDA can shrink its within-cluster
    cost to nothing along the rest (the null directions of :func:`wda_step` come from such
    clusters); ⌊n/(2k)⌋, half the mean cluster size, bounds the rule from above."""
    if isinstance(setting, str) and setting == "auto":
        return max(2, min(max(p + 1, math.ceil(MIN_CLUSTER_SHARE * n / k)), n // (2 * k)))
    if isinstance(setting, numbers.Integral) and not isinstance(setting, bool) and setting >= 1:
        return int(setting)
    raise ParameterError("min_cluster_size", f"expected 'auto' or an integer >= 1 (1 turns the "
                         f"guard against tiny clusters off), got {setting!r}")


def tiny_clusters(labels: np.ndarray, k: int, n_min: int) -> np.ndarray:
    """The clusters (of 0, …, k − 1) holding fewer than ``n_min`` samples."""
    return np.flatnonzero(np.bincount(labels, minlength=k) < n_min)


def kmeans_step(Z, previous, k: int, random_state):
    """k-means on the projected rows Z: from 10 seeded starts in the first round, then from the
    previous round's clusters' centroids in the new projection (one start).

    The warm start makes each round's labels a descent from the previous ones, as in Ding and
    Li's LDA-k-means alternation; with fresh starts each round the labels may jump between
    k-means' local optima and the alternation cycle."""
    if previous is not None and np.all(np.bincount(previous, minlength=k) > 0):
        return kmeans(Z, k, init=centroids(Z, previous, k))
    return kmeans(Z, k, random_state=random_state)


def final_labels(Z, previous, k: int, random_state, n_min: int) -> np.ndarray:
    """``labels_``: k-means on the rows Z (projected by ``M_``) from 10 seeded starts — the
    lowest cost k-means finds — unless that partition has more tiny clusters than k-means started
    from the alternation's last clusters (``previous``), which is then kept: fresh starts can
    reach a lower cost by isolating an outlier, and the warm start alone misses the better
    partitions that fresh starts find."""
    fresh = kmeans(Z, k, random_state=random_state)
    if previous is None or not len(tiny_clusters(fresh, k, n_min)):
        return fresh
    warm = kmeans_step(Z, previous, k, random_state)
    if len(tiny_clusters(warm, k, n_min)) < len(tiny_clusters(fresh, k, n_min)):
        return warm
    return fresh


def merge_singletons(labels: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Labels for the WDA step: a cluster of one sample (no transport plan within it) joins
    the cluster with the nearest centroid in the projected rows Z.  The clustering itself
    (``labels_``) is k-means'."""
    counts = np.bincount(labels)
    small = np.flatnonzero(counts < 2)
    if len(small) == 0:
        return labels
    keep = np.setdiff1d(np.flatnonzero(counts), small)
    if len(keep) < 2:
        raise ValueError("WDAClustering: k-means left fewer than two clusters with two or more "
                         "samples; lower n_clusters")
    means = centroids(Z, labels, len(counts))[keep]
    out = labels.copy()
    alone = np.flatnonzero(np.isin(labels, small))   # a few rows: read to the host
    xp = arrays.namespace(Z)
    at = xp.asarray(alone, device=arrays.device(Z))
    rows = np.asarray(arrays.to_host(xp.take(Z, at, axis=0)), dtype=float)
    for i, z in zip(alone, rows):
        out[i] = keep[np.argmin(np.sum((means - z) ** 2, axis=1))]
    return out


def wda_step(Xs, labels, P, reg: float, solve):
    """One WDA step on the clustering ``labels`` from P at ``reg``: ``(P_new, result, m)``;
    ``solve(X, labels, q, reg, start)`` fits WDA-SCF on the rows X (the estimator's
    settings) and returns its :class:`~ldr.Result`.

    m counts the directions along which every cluster is a single point (the nullity of the
    within-cluster scatter S_w: a binary feature that k-means split on).  While m < p the
    trace ratio is bounded and WDA fits all p directions, keeping those (as
    :class:`~ldr.estimators.WassersteinDA` does; :class:`ldr.objectives.WDA`); with m >= p it
    is unbounded there and P_new is the top p of them by between-cluster scatter (the
    null-space rule; :func:`~ldr.estimators.wda.null_directions`)."""
    classes, codes = np.unique(labels, return_inverse=True)
    Sw, Sb = class_scatters(Xs, codes, len(classes))  # by row chunks: no copy of Xs
    R = span_basis(Sw)
    p = P.shape[1]
    m = 0 if R is None else Sw.shape[0] - R.shape[1]
    if m < p:
        res = solve(Xs, labels, p, reg, P)
        return res.M, res, m
    M = ordered_null_space(R, Sb)[:, :p]
    return M, null_space_result(M, f"the within-cluster scatter is zero along {m} directions "
                                   ">= n_components: the ratio is unbounded there"), m


def ordered_null_space(R, Sb):
    """An orthonormal basis of the null space of S_w (``R``: one of its range), ordered by
    the between-class scatter ``Sb``, largest first."""
    N = scipy.linalg.null_space(R.T)
    _, V = np.linalg.eigh(N.T @ Sb @ N)
    return N @ V[:, ::-1]


def null_space_result(M, reason: str) -> Result:
    """The record of a null-space answer: exact, no iteration, the trace ratio unbounded."""
    return Result(M=M, cost=-np.inf, converged=True, n_iter=0, time=0.0, grad_norm=0.0,
                  trace=Trace(), solver="null-space", reason=reason)


def within_spread(Z: np.ndarray, labels: np.ndarray) -> float:
    """s = (1/n) Σ_c (1/n_c) Σ_{i,j∈c} ‖z_i − z_j‖² = (2/n) Σ_c Σ_{i∈c} ‖z_i − z̄_c‖²: the
    mean squared distance between two samples of one cluster (clusters weighted by size) —
    each cluster's transport cost onto itself under the uniform plan (reg → ∞), twice
    k-means' mean cost: 2 tr(S_w), from Fisher's within-class scatter (divided by n) by row
    chunks, so no copy of Z is made."""
    classes, codes = np.unique(labels, return_inverse=True)
    return 2.0 * float(np.trace(class_scatters(Z, codes, len(classes))[0]))


def projected(X, shift: np.ndarray, P: np.ndarray):
    """(X − shift) P, formed as XP − shiftᵀP (as scikit-learn's PCA transforms): no copy of
    X; a Dask array's by one pass over its chunks (to NumPy), rows of another namespace's
    there."""
    if is_lazy(X):
        return np.asarray(as_dask_array(X, "X") @ P) - shift @ P
    P = np.asarray(arrays.to_host(P), dtype=float)
    return X @ arrays.like(P, X) - arrays.like(shift @ P, X)


def alternate(est, Xs, P, n_min: int, solve, shift: np.ndarray) -> dict:
    """Liu et al.'s Algorithm 2 with the tiny-cluster guard, from the subspace P on the rows
    Xs (whose mean is ``shift``), its WDA steps fitted by ``solve`` (:func:`wda_step`);
    ``est`` gives the settings ``n_clusters``, ``reg``, ``max_outer``, ``outer_tol``,
    ``adapt_reg`` and ``random_state``.

    Round t runs k-means in P_{t−1} (labels L_t), then P_t = WDA-SCF on L_t from P_{t−1}; it
    ends when sin θ(P_{t−1}, P_t) <= ``outer_tol`` or after ``max_outer`` rounds.  A
    *collapse* is a round whose labels have more clusters of fewer than ``n_min`` samples
    than the last accepted labels L_a (found by k-means in P_{a−1}): the step P_a made it.
    With ``adapt_reg`` and reg < s, the within-cluster spread of L_a in P_{a−1}
    (:func:`within_spread`), reg becomes s and the step on L_a from P_{a−1} is made again (a
    round; reg only grows and stays for the rounds after).  Otherwise — the guard — the
    alternation stops and returns P_{a−1} and L_a.

    Returns
    -------
    dict
        ``P``; ``result`` (the WDA step that gave P, None for the start); ``null`` (its null
        directions); ``history`` (one row per round); ``rounds``; ``change`` (the last
        sin θ); ``stopped`` (the round the guard ended, else None); ``labels`` (the last
        accepted labels, from whose centroids the final k-means in P starts); ``spread``
        (when stopped: the mean squared distance between the rows projected by P_a);
        ``reg`` (the last step's); ``raised`` (the rounds that raised it); ``accepted``
        ((a, L_a's number of tiny clusters)).
    """
    if not isinstance(est.adapt_reg, (bool, np.bool_)):
        raise ParameterError("adapt_reg", f"expected True or False, got {est.adapt_reg!r}")
    k = est.n_clusters
    history = []
    labels = None
    change = np.inf
    stopped = None
    spread = np.nan
    made = [(P, None, 0)]  # made[i]: the subspace round i + 1 runs k-means in, and its step
    reg = est.reg if isinstance(est.reg, str) else float(est.reg)  # "auto": round 1 sets it
    first_reg = reg
    raised = []
    accepted = None
    for it in range(1, est.max_outer + 1):
        Z = projected(Xs, shift, P)
        new = kmeans_step(Z, labels, k, est.random_state)
        tiny = len(tiny_clusters(new, k, n_min))
        row = {"outer": it, "smallest_cluster": int(np.bincount(new, minlength=k).min()),
               "tiny_clusters": tiny, "reg_raised": False}
        if accepted is None or tiny <= accepted[1]:
            labels = new
            accepted = (it, tiny)
        else:  # a collapse: the step made[-1] on the accepted labels caused it
            made.pop()
            Z_found = projected(Xs, shift, made[-1][0])  # where k-means found the labels
            scale = within_spread(Z_found, labels)
            if not (est.adapt_reg and reg < scale):
                history.append({**row, "ratio": np.nan, "p_change": np.nan,
                                "scf_converged": None, "null_directions": None, "reg": None})
                stopped = it
                xp = arrays.namespace(Z)
                spread = 2.0 * float(xp.sum(xp.var(Z, axis=0)))
                break
            reg = scale
            row["reg_raised"] = True
            raised.append(it)
            Z = Z_found
        P = made[-1][0]  # the step on the accepted labels, from where k-means found them (Z)
        if isinstance(reg, str) and reg == "auto":  # WassersteinDA's rule on these clusters
            reg = first_reg = within_reg(within_spread(Xs, labels), P.shape[1], Xs.shape[1])
        P_new, res, n_null = wda_step(Xs, merge_singletons(labels, Z), P, reg, solve)
        P_new = np.asarray(arrays.to_host(P_new), dtype=float)   # d × p, on the host
        change = sin_largest_angle(P, P_new)
        history.append({**row, "ratio": -res.cost, "p_change": change,
                        "scf_converged": res.converged, "null_directions": n_null, "reg": reg})
        P = P_new
        made.append((P, res, n_null))
        if change <= est.outer_tol:
            break
    P, res, n_null = made[-1]
    return {"P": P, "result": res, "null": n_null, "history": history, "rounds": it,
            "change": change, "stopped": stopped, "labels": labels, "spread": spread,
            "reg": reg, "first_reg": first_reg, "raised": raised, "accepted": accepted}


def alternation_result(run: dict, outer_tol: float, elapsed: float) -> Result:
    """The alternation ``run`` (:func:`alternate`) as a :class:`~ldr.Result`: its subspace,
    its rounds as ``n_iter``, converged when the guard did not stop it and the last change of
    P is within ``outer_tol``, the cost of the WDA step that gave P on its clusters (NaN for
    the start) and the rounds' rows as the trace."""
    step = run["result"]
    change = run["change"]
    rounds = run["rounds"]
    if run["stopped"] is not None:
        done = False
        reason = (f"the tiny-cluster guard stopped the alternation at round {run['stopped']} "
                  f"and returned the subspace of round {run['accepted'][0]}'s clusters")
    elif change <= outer_tol:
        done = True
        reason = (f"the subspace moved by sin θ = {change:.2e} <= outer_tol {outer_tol:g} "
                  f"in round {rounds}")
    else:
        done = False
        reason = (f"max_outer = {rounds} rounds, the last moving the subspace by sin θ = "
                  f"{change:.2e} > outer_tol {outer_tol:g}")
    return Result(M=run["P"], cost=float("nan") if step is None else float(step.cost),
                  converged=done, reason=reason, n_iter=rounds, time=elapsed,
                  grad_norm=float("nan"), trace=Trace([dict(row) for row in run["history"]]),
                  solver="k-means/WDA alternation")


def warn_unconverged(est, run: dict) -> None:
    """A ConvergenceWarning when the alternation ``run`` ran out of rounds (``max_outer``)
    with the last change of P above ``outer_tol``."""
    change = run["change"]
    if run["stopped"] is not None or change <= est.outer_tol:
        return
    warnings.warn(f"{type(est).__name__}: the alternation did not converge in "
                  f"max_outer={est.max_outer} rounds (last change of P {change:.2e} > "
                  f"outer_tol {est.outer_tol:g}); raise max_outer or loosen outer_tol",
                  ConvergenceWarning, stacklevel=user_stacklevel())


def warn_stopped(est, record: dict, n_min: int, stacklevel: int = 4) -> None:
    """The :class:`~sklearn.exceptions.ConvergenceWarning` of an alternation the guard ended."""
    t = record["stopped"]
    a, before = record["accepted"]
    last = record["history"][-1]
    spread = record.get("spread", np.nan)
    reg = record.get("reg", est.reg)
    if record.get("raised"):
        why = (f"  reg was raised to {reg:.3g} (from {record['first_reg']:.3g}), the "
               "within-cluster spread "
               f"of round {a}'s clusters (adapt_reg), and WDA still isolated samples: "
               "compare with k-means")
    elif spread > reg:
        why = (f"  reg={reg:g} is small against the mean squared distance between the samples "
               f"projected by WDA step {a} ({spread:.3g}): each cluster's entropic plan onto "
               "itself is then nearly the identity, and WDA favours directions that isolate "
               "a few samples; a reg nearer that scale may avoid the collapse (adapt_reg=True "
               "raises it to the within-cluster spread), or compare with k-means")
    else:
        why = "  Compare with k-means"
    warnings.warn(f"{type(est).__name__}: stopped the alternation at round {t}: k-means in the "
                  f"subspace WDA fitted to round {a}'s clusters left "
                  f"{last['tiny_clusters']} cluster(s) of fewer than "
                  f"min_cluster_size={n_min} samples (round {a}: {before}; smallest "
                  f"{last['smallest_cluster']}), a collapse the next WDA steps "
                  f"would reinforce; returned the subspace of round {a}'s clusters "
                  f"({'the start' if record['result'] is None else 'a WDA step'}).{why}",
                  ConvergenceWarning, stacklevel=stacklevel)


def warn_tiny(est, labels: np.ndarray, X: np.ndarray | None, n_min: int,
              stacklevel: int = 4) -> tuple[np.ndarray, bool]:
    """The clusters of ``labels`` below ``n_min`` samples, and whether the partition is
    degenerate — a ConvergenceWarning — which it is unless k-means on the rows X themselves
    (the full space, 10 seeded starts) makes every one of those clusters too, the same
    samples.  Then they are the data's outliers, which clustering these distances into k
    groups isolates whatever the subspace.  The samples are compared, not the count: a
    partition that puts almost every sample in one cluster can hold as many tiny clusters as
    k-means' and still be degenerate.  ``X`` None (rows read over chunks, which k-means on
    the full space would hold whole): the comparison does not run, the warning says so and
    the verdict is None."""
    k = est.n_clusters
    tiny = tiny_clusters(labels, k, n_min)
    if not len(tiny):
        return tiny, False
    sizes = np.bincount(labels, minlength=k)
    if X is None:
        warnings.warn(f"{type(est).__name__}: {len(tiny)} of {k} clusters hold fewer than "
                      f"min_cluster_size={n_min} samples (sizes "
                      f"{sorted(sizes[tiny].tolist())}); the rows were read over chunks, so "
                      "they were not compared with k-means on the data (fit X in memory for "
                      "that check); lower n_clusters or raise reg if they are not outliers",
                      ConvergenceWarning, stacklevel=stacklevel)
        return tiny, None
    plain = kmeans(X, k, random_state=est.random_state)
    theirs = {frozenset(np.flatnonzero(plain == c)) for c in range(k)}
    if all(frozenset(np.flatnonzero(labels == c)) in theirs for c in tiny):
        return tiny, False
    warnings.warn(f"{type(est).__name__}: a degenerate partition: {len(tiny)} of "
                  f"{k} clusters hold fewer than min_cluster_size={n_min} "
                  f"samples (sizes {sorted(sizes[tiny].tolist())}; largest "
                  f"{sizes.max()} of {len(labels)}), not all of them clusters of k-means on "
                  "the data; lower n_clusters, raise reg, or compare with k-means",
                  ConvergenceWarning, stacklevel=stacklevel)
    return tiny, True
