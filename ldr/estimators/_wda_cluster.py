"""WDAClustering's alternation (``ldr.estimators.wda``): the k-means step, the WDA step (with
the null-space rule for a singular within-cluster scatter) and the guard against partitions
that collapse into a few tiny clusters.

**Why the guard.**  WDA's within-cluster transport plans are entropic (K = exp(−D/reg)).
Where the projected squared distances are large against ``reg`` (on standardized digits, mean
68 at reg = 1), each cluster's plan onto itself is nearly the identity and its cost nearly
zero, so the trace ratio grows along directions in which a few samples lie far from all
others: they add to the between-cluster cost and hardly to the within-cluster one.  On
scikit-learn's digits the WDA step on k-means' round-1 clusters (adjusted Rand index 0.47)
reached a ratio of 8171 (505 at the start) in such directions (kurtosis of the projected
coordinates 100–1500; WDA on the true classes does the same), the next k-means put 1737 of
1797 samples in one cluster and nine of 1–17, and the alternation then converged there (the
next WDA steps, fitted on the tiny clusters, reinforce them).  Neither the trace ratio (8171
→ 18 132 → 27 116 along that path) nor k-means' relative cost in the projection (W/T 0.39 →
0.17; in the full space it rose, 0.64 → 0.84) can tell a collapse from progress: both favour
it.  So the alternation watches the cluster sizes instead.

**Why raise reg.**  The directions WDA chose there are rare pixels (standardized, a few
images 16–36 sd out; kurtosis of the projected coordinates up to 950), already at SCF's
first iterate: the cause is reg against the within-cluster distances, not the solver's path.
So a collapse first raises reg to the within-cluster spread of the last accepted clusters
(:func:`within_spread`, 26.3 there), the scale below which each cluster's plan onto itself
turns into the identity, and makes the step again; the guard stops only when reg is
already at least that (``alternate``).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from ldr.data.validation import span_basis
from ldr.errors import ParameterError
from ldr.estimators._wda_steps import _merge_singletons
from ldr.manifolds import sin_largest_angle
from ldr.objectives.lda import scatter_matrices
from ldr.objectives.wda import WDA
from ldr.result import Result, Trace

#: ``min_cluster_size="auto"``: a cluster is *tiny* below max(p + 1, ⌈0.03·n/k⌉) samples
#: (p = n_components; at most half the mean cluster size n/k).  p + 1: a cluster of at most p
#: samples spans at most p − 1 directions, so in the p-dimensional projection its scatter is
#: singular and WDA can shrink its within-cluster cost to nothing along the rest (the null
#: directions of ``wda_step`` come from such clusters).  0.03·n/k: the share of the mean size
#: chosen on bench_real's development tables, where the smallest k-means or WDAClustering
#: cluster is 0.13·n/k (anes96/PID, 18 of 944 rows, k = 7) and the digits collapse left
#: clusters of 0.006·n/k (1 sample): 0.03 is about their geometric mean.
MIN_CLUSTER_SHARE = 0.03


def min_cluster_size(setting, n: int, k: int, p: int) -> int:
    """The size below which a cluster is tiny: ``"auto"`` = max(2, min(max(p + 1,
    ⌈0.03·n/k⌉), ⌊n/(2k)⌋)), or an int ≥ 1 (1: no cluster is ever tiny, the guard is off)."""
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

    The warm start makes each round's labels a descent from the previous ones, as in the
    LDA-k-means alternation; with 10 fresh starts each round the labels jumped between
    k-means' local optima and the alternation cycled (periods 7 and 14 on fair and
    anes96/PID of ``benchmarks/bench_real.py``, never converging)."""
    if previous is not None and np.all(np.bincount(previous, minlength=k) > 0):
        init = np.array([Z[previous == c].mean(axis=0) for c in range(k)])
        return KMeans(k, init=init, n_init=1).fit_predict(Z)
    return KMeans(k, n_init=10, random_state=random_state).fit_predict(Z)


def final_labels(Z, previous, k: int, random_state, n_min: int) -> np.ndarray:
    """``labels_``: k-means on the rows Z (projected by M_) from 10 seeded starts — the lowest
    cost k-means finds — unless that partition has more tiny clusters than k-means started
    from the alternation's last clusters (``previous``), which is then kept.  Ten fresh starts
    can reach a lower cost by isolating one outlier (digits subsets: two singleton clusters,
    adjusted Rand index 0.52 against 0.78); the warm start alone lost up to 18 points where
    fresh starts found a better partition (modechoice, spector in bench_real)."""
    fresh = KMeans(k, n_init=10, random_state=random_state).fit_predict(Z)
    if previous is None or not len(tiny_clusters(fresh, k, n_min)):
        return fresh
    warm = kmeans_step(Z, previous, k, random_state)
    return warm if len(tiny_clusters(warm, k, n_min)) < len(tiny_clusters(fresh, k, n_min)) \
        else fresh


def wda_step(est, Xs, labels, P, reg=None):
    """One WDA step on the clustering ``labels`` from P, at ``reg`` (None: ``est.reg``):
    ``(P_new, result, m)``.

    Where the within-cluster scatter S_w is singular — m > 0 directions along which every
    cluster is a single point (a binary feature that k-means split on), so the ratio is
    unbounded — those m directions are the first of P_new (ordered by the between-cluster
    scatter) and WDA fits the other p − m on the range of S_w, where it is non-singular
    (null-space LDA's rule); with m ≥ p, P_new is the top p of them."""
    classes, codes = np.unique(labels, return_inverse=True)
    Sw, Sb, _ = scatter_matrices(Xs - Xs.mean(axis=0), codes, len(classes))
    R = span_basis(Sw)
    reg = est.reg if reg is None else reg
    if R is None:
        res = est._solve(WDA(Xs, labels, P.shape[1], reg=reg, sinkhorn_iter=est.sinkhorn_iter,
                             eps=est.eps, **est._batching(labels)), P)
        return res.M, res, 0
    N = scipy.linalg.null_space(R.T)
    p = P.shape[1]
    _, V = np.linalg.eigh(N.T @ Sb @ N)
    N = N @ V[:, ::-1]  # by between-cluster scatter
    if N.shape[1] >= p:
        M = N[:, :p]
        res = Result(M=M, cost=-np.inf, converged=True, n_iter=0, time=0.0,
                     grad_norm=0.0, trace=Trace(), solver="null-space",
                     reason=f"the within-cluster scatter is zero along {N.shape[1]} "
                            f"directions >= n_components: the ratio is unbounded there")
        return M, res, N.shape[1]
    q = p - N.shape[1]
    start = np.linalg.svd(R.T @ P, full_matrices=False)[0][:, :q]
    res = est._solve(WDA(Xs @ R, labels, q, reg=reg, sinkhorn_iter=est.sinkhorn_iter,
                         eps=est.eps, **est._batching(labels)), start)
    return np.column_stack([N, R @ res.M]), res, N.shape[1]


def within_spread(Z: np.ndarray, labels: np.ndarray) -> float:
    """s = (1/n) Σ_c (1/n_c) Σ_{i,j∈c} ‖z_i − z_j‖² = (2/n) Σ_c Σ_{i∈c} ‖z_i − z̄_c‖²: the
    mean squared distance between two samples of one cluster (clusters weighted by size) —
    each cluster's transport cost onto itself under the uniform plan (reg → ∞), twice
    k-means' mean cost."""
    codes = np.unique(labels, return_inverse=True)[1]
    sums = np.zeros((codes.max() + 1, Z.shape[1]))
    np.add.at(sums, codes, Z)
    means = sums / np.bincount(codes)[:, None]
    return 2.0 * float(np.sum((Z - means[codes]) ** 2)) / len(Z)


def alternate(est, Xs, P, n_min: int) -> dict:
    """Liu et al.'s Algorithm 2 with the tiny-cluster guard: round t runs k-means in P_{t−1}
    (labels L_t), then P_t = WDA-SCF on L_t from P_{t−1}; it ends when
    sin θ(P_{t−1}, P_t) ≤ ``outer_tol`` or after ``max_outer`` rounds.  A *collapse* is a
    round whose labels have more clusters of fewer than ``n_min`` samples than the last
    accepted labels L_a (found by k-means in P_{a−1}): the step P_a made it.  With
    ``adapt_reg`` and reg < s, the within-cluster spread of L_a in P_{a−1}
    (:func:`within_spread`), reg becomes s and the step on L_a from P_{a−1} is made again (a
    round; reg only grows and stays for the rounds after).  Otherwise — the guard — the
    alternation stops (on digits at k = 12, k-means in the start subspace already isolates 3
    samples; WDA then makes 4 such clusters, 5 later) and returns P_{a−1} and L_a.  Returns
    ``{"P", "result", "null", "history", "rounds", "change", "stopped", "labels", "spread",
    "reg", "raised", "accepted"}`` (``stopped``: the round the guard ended, else None;
    ``spread``: then the mean squared distance between the rows projected by P_a;
    ``result``: the WDA step that gave P, None for the start; ``labels``: the last accepted
    labels, from whose centroids the final k-means in P starts; ``reg``: the last step's;
    ``raised``: the rounds that raised it; ``accepted``: (a, L_a's tiny clusters))."""
    if not isinstance(est.adapt_reg, (bool, np.bool_)):
        raise ParameterError("adapt_reg", f"expected True or False, got {est.adapt_reg!r}")
    k = est.n_clusters
    history, labels, change, stopped, spread = [], None, np.inf, None, np.nan
    made = [(P, None, 0)]  # made[i]: the subspace round i + 1 runs k-means in, and its step
    reg, raised, accepted = float(est.reg), [], None
    Xc = Xs - Xs.mean(axis=0)
    for it in range(1, est.max_outer + 1):
        Z = Xc @ P
        new = kmeans_step(Z, labels, k, est.random_state)
        tiny = len(tiny_clusters(new, k, n_min))
        row = {"outer": it, "smallest_cluster": int(np.bincount(new, minlength=k).min()),
               "tiny_clusters": tiny, "reg_raised": False}
        if accepted is None or tiny <= accepted[1]:
            labels, accepted = new, (it, tiny)
        else:  # a collapse: the step made[-1] on the accepted labels caused it
            made.pop()
            Z_found = Xc @ made[-1][0]  # where k-means found the accepted labels
            scale = within_spread(Z_found, labels)
            if not (est.adapt_reg and reg < scale):
                history.append({**row, "ratio": np.nan, "p_change": np.nan,
                                "scf_converged": None, "null_directions": None, "reg": None})
                stopped, spread = it, 2.0 * float(np.sum(np.var(Z, axis=0)))
                break
            reg, row["reg_raised"] = scale, True
            raised.append(it)
            Z = Z_found
        P = made[-1][0]  # the step on the accepted labels, from where k-means found them (Z)
        P_new, res, n_null = wda_step(est, Xs, _merge_singletons(labels, Z), P, reg)
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
            "reg": reg, "raised": raised, "accepted": accepted}


def warn_stopped(est, record: dict, n_min: int, stacklevel: int = 3) -> None:
    """The :class:`~sklearn.exceptions.ConvergenceWarning` of an alternation the guard ended."""
    t, (a, before) = record["stopped"], record["accepted"]
    last = record["history"][-1]
    spread, reg = record.get("spread", np.nan), record.get("reg", est.reg)
    if record.get("raised"):
        why = (f"  reg was raised to {reg:.3g} (from {est.reg:g}), the within-cluster spread "
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


def warn_tiny(est, labels: np.ndarray, X: np.ndarray, n_min: int,
              stacklevel: int = 3) -> tuple[np.ndarray, bool]:
    """The clusters of ``labels_`` below ``n_min`` samples, and whether the partition is
    degenerate — a ConvergenceWarning — which it is unless k-means on the rows X themselves
    (the full space, 10 seeded starts) makes every one of those clusters too, the same
    samples.  Then they are the data's outliers, which clustering these distances into k
    groups isolates whatever the subspace: on bench_real's grunfeld/firm (220 firm-years, 11
    clusters) General Motors' 1953 and 1954 (investment 1304 and 1487; the next largest 891)
    are a cluster of 2 for WDAClustering and for KMeans at every seed, where the warning said
    "lower n_clusters, raise reg, or compare with k-means" and k-means gives the same.  A
    count would not do: with rare spikes in most features (``test_a_degenerate_partition_
    warns``) both partitions hold one cluster of 2, different samples, and WDAClustering's
    puts 173 of 180 samples in one cluster (ARI 0.00 against k-means' 0.49)."""
    k = est.n_clusters
    tiny = tiny_clusters(labels, k, n_min)
    if not len(tiny):
        return tiny, False
    plain = KMeans(k, n_init=10, random_state=est.random_state).fit_predict(X)
    theirs = {frozenset(np.flatnonzero(plain == c)) for c in range(k)}
    if all(frozenset(np.flatnonzero(labels == c)) in theirs for c in tiny):
        return tiny, False
    sizes = np.bincount(labels, minlength=k)
    warnings.warn(f"{type(est).__name__}: a degenerate partition: {len(tiny)} of "
                  f"{k} clusters hold fewer than min_cluster_size={n_min} "
                  f"samples (sizes {sorted(sizes[tiny].tolist())}; largest "
                  f"{sizes.max()} of {len(labels)}), not all of them clusters of k-means on "
                  "the data; lower n_clusters, raise reg, or compare with k-means",
                  ConvergenceWarning, stacklevel=stacklevel)
    return tiny, True
