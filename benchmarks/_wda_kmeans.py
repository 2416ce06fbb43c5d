"""The counterpart of ``WDAClustering`` in ``bench_real.py``: the k-means ↔ WDA alternation a
user without ldr would write from scikit-learn's ``KMeans`` and POT's ``ot.dr.wda``.

What it is, round by round (Liu et al.'s Algorithm 2, the loop ``WDAClustering`` runs)::

    labels = KMeans(C, random_state=0).fit_predict(X)            # round 1: the full space
    P = PCA(r).fit(X).components_.T                               # the paper's start
    P = ot.dr.wda(X, labels, p=r, reg=reg, k=sinkhorn_iter, maxiter=100, P0=P)
    labels = KMeans(C, random_state=0).fit_predict(X @ P)         # round 2, ...
    ...                                                           # ``rounds`` WDA steps
    labels_ = KMeans(C, random_state=0).fit_predict(X @ P)

with ldr's settings where they map: r = ``n_components_`` (ldr's default n_clusters − 1, at
most n_features − 1), the same ``reg`` and Sinkhorn iterations (POT's ``k``; ldr's
``sinkhorn_iter`` = 10), each WDA step warm-started from the previous P (POT's ``P0``; the
first from the top r principal directions, the WDA paper's start and ldr's — POT's own,
``P0=None``, is an unseeded random Stiefel point: fits on breast_cancer took 18 s or over
60 s from one run to the next), POT's own solver
(pymanopt's steepest descent, ``maxiter=100``, the value ``bench_real``'s WassersteinDA
counterpart uses).  It makes as many WDA steps as ldr's fit did (``rounds``: its rounds that
ran a WDA step; at least one) and stops earlier under ldr's rule, sin θ(P_{t−1}, P_t) ≤
``outer_tol``.  Differences it keeps on purpose, as a user would write it: KMeans at its
defaults (k-means++, one start), round 1 in the full space (ldr's runs in its PCA start), no
guard against tiny clusters, no singleton merging (a class of one sample is POT's problem),
and POT's trace-ratio objective (ldr's WDA step is the ratio-trace SCF of the WDA paper).

Plain ``KMeans`` — the counterpart before — is still measured beside it (``Spec.also``).
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA


def wda_steps(model) -> int:
    """The WDA steps a fitted ``WDAClustering`` made: its rounds less one where the guard
    stopped (that round ran k-means only); at least one."""
    return max(1, sum(h.get("scf_converged") is not None for h in model.history_))


def _sin_largest_angle(P: np.ndarray, Q: np.ndarray) -> float:
    s = np.linalg.svd(P.T @ Q, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - s.min() ** 2)))


class PotWDAKMeans(ClusterMixin, BaseEstimator):
    """KMeans → ``ot.dr.wda`` → KMeans in the projection → … (module docstring)."""

    def __init__(self, n_clusters=3, n_components=2, rounds=1, reg=1.0, sinkhorn_iter=10,
                 maxiter=100, outer_tol=1e-6, random_state=0):
        self.n_clusters, self.n_components, self.rounds = n_clusters, n_components, rounds
        self.reg, self.sinkhorn_iter, self.maxiter = reg, sinkhorn_iter, maxiter
        self.outer_tol, self.random_state = outer_tol, random_state

    def _kmeans(self, Z):
        return KMeans(self.n_clusters, random_state=self.random_state).fit_predict(Z)

    def fit(self, X, y=None):
        from ot.dr import wda

        X = np.asarray(X, dtype=float)
        labels, P, start = self._kmeans(X), None, PCA(self.n_components).fit(X).components_.T
        self.n_outer_ = 0
        for _ in range(self.rounds):
            # wda subtracts X's mean from X in place: a copy; pymanopt prints its progress
            # whatever POT's verbose says: silenced
            with contextlib.redirect_stdout(io.StringIO()):
                P_new, _ = wda(X.copy(), labels, p=self.n_components, reg=self.reg,
                               k=self.sinkhorn_iter, maxiter=self.maxiter,
                               P0=start if P is None else P)
            if not np.all(np.isfinite(P_new)):
                raise FloatingPointError(f"ot.dr.wda returned a non-finite P at round "
                                         f"{self.n_outer_ + 1}")
            change = np.inf if P is None else _sin_largest_angle(P, P_new)
            P, self.n_outer_ = P_new, self.n_outer_ + 1
            labels = self._kmeans(X @ P)
            if change <= self.outer_tol:
                break
        self.P_, self.labels_ = P, labels
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float) @ self.P_


def counterpart(t, model):
    """``bench_real``'s counterpart for ``WDAClustering``: (label, estimator) set from the
    fitted ``model`` (its r, reg, Sinkhorn iterations, WDA steps), None without POT or a fit."""
    try:
        import ot.dr  # noqa: F401
    except ImportError:
        return None
    if model is None:
        return None
    return "KMeans↔POT wda", PotWDAKMeans(
        n_clusters=model.n_clusters, n_components=model.n_components_,
        rounds=wda_steps(model), reg=model.history_[0]["reg"],
        sinkhorn_iter=model.sinkhorn_iter,
        outer_tol=model.outer_tol, random_state=0)
