"""Telling answers apart: when two runs reached the same answer, and a one-word verdict.

Two answers are compared as fits their manifold (:func:`answer_distance`): on Grassmann
factors by the largest principal-angle sine (the manifold's own step measure); on Stiefel
factors by the sine between the spans where the costs agree (a cost invariant to M → MQ has
one answer at rotated bases), else the spectral norm of the difference; on a manifold with a
Euclidean factor (PPCA, factor analysis) by the relative cost difference, because such
parameters are identified only up to the model's symmetries.  :func:`group_answers` labels
the runs A, B, … from the lowest cost up; :func:`verdict` gives the ``verdict`` column of
:meth:`ldr.Comparison.table`.
"""

from __future__ import annotations

import numpy as np

from ldr.manifolds import Euclidean, Grassmann, sin_largest_angle

#: How answers are compared, by manifold: (header of the ``to_A`` column, name in the notes,
#: what the number is).
DISTANCES = {
    "sin": ("sinθ to A", "sin θ",
            "largest principal-angle sine between the run's subspace and answer A's (0: the "
            "same subspace, 1: a direction orthogonal to it); runs within {tol:g} share a "
            "letter"),
    "norm": ("Δ to A", "Δ",
             "where the run's cost equals answer A's (relative difference ≤ cost_tol), the "
             "largest principal-angle sine between their spans (a cost invariant to M → MQ "
             "has one answer at rotated bases); else the spectral norm of the difference of "
             "the orthonormal points (0 to 2); the largest over the factors; runs within "
             "{tol:g} share a letter"),
    "cost": ("Δcost to A", "relative cost difference",
             "relative cost difference |f − f_A| / max(|f|, |f_A|): on {manifold}, with a "
             "Euclidean factor, a cost is often invariant to symmetries of its parameters "
             "(rotations M → MQ, for one), so two matrices far apart can be one answer; runs "
             "whose costs agree within {tol:g} share a letter"),
}


def label_of(i: int) -> str:
    """The letter of the i-th distinct answer: A, B, …, Z, A26, A27, …"""
    return chr(ord("A") + i) if i < 26 else f"A{i}"


#: the ``verdict`` of a converged run whose gradient is ≈ 0, by the Hessian's spectrum
#: (:attr:`ldr.Certificate.second_order`)
SECOND_ORDER = {"positive": "local min", "flat": "local min (flat)", "plateau": "plateau",
                "negative": "saddle", "unknown": "converged"}


def verdict(converged: bool, cert=None, budget: str = "") -> str:
    """One word for a run (the ``verdict`` column, ``ldr.driver.compare.LEGEND``): ``"budget"``
    when a budget (``budget``: ``Result.budget``, max_time or max_iter) stopped it, else
    ``"NOT conv."`` (stalled, non-finite) if it did not converge; else from the certificate
    ``cert`` (None: ``"converged"``): ``"global min"`` / ``"not global"`` where the
    objective has a global test; ``"not critical"`` (gradient not ≈ 0: a solver that
    converged on its own rule, such as SCF's fixed-point residual); else by the Hessian's
    spectrum (:data:`SECOND_ORDER`): ``"local min"``, ``"local min (flat)"`` (a negative
    curvature within the precision the gradient allows), ``"plateau"`` (every curvature ≈ 0),
    ``"saddle"``, or ``"converged"`` when the Hessian was not computed (out of time)."""
    if not converged:
        return "budget" if budget else "NOT conv."
    if cert is None:
        return "converged"
    if cert.global_optimum is not None:
        return "global min" if cert.global_optimum else "not global"
    if not np.isfinite(cert.grad_norm):
        return "converged"
    if cert.grad_norm > cert.tol * cert.grad_scale:
        return "not critical"
    return SECOND_ORDER[cert.second_order]


def distance_kind(geom) -> str:
    """How :func:`ldr.compare` tells answers apart on the manifold ``geom``
    (:class:`~ldr.manifolds.Manifold`): ``"sin"`` when every factor is Grassmann, ``"cost"``
    when a factor is Euclidean, else ``"norm"`` (Stiefel factors)."""
    if any(isinstance(m, Euclidean) for m in geom.factors):
        return "cost"
    return "sin" if all(isinstance(m, Grassmann) for m in geom.factors) else "norm"


def _span_sine(geom, A, B) -> float:
    """The largest principal-angle sine between the spans of two points, over the
    (Stiefel or Grassmann) factors, and over a batch's matrices; 0 for a square factor."""
    worst = 0.0
    for part, a, b in zip(geom.factors, geom.split(A), geom.split(B)):
        d, r = part.shape[-2:]
        if isinstance(part, Euclidean) or r == d:
            continue
        worst = max(worst, sin_largest_angle(a, b))  # the largest over a stack's matrices
    return worst


def answer_distance(geom, a: tuple, b: tuple, kind: str | None = None,
                    cost_tol: float = 1e-6) -> float:
    """Distance between two answers ``a`` and ``b``, each ``(point, cost)``, as fits the
    manifold ``geom`` (``kind`` from :func:`distance_kind` by default).

    ``"sin"`` (Grassmann factors): the largest principal-angle sine, the manifold's own step
    measure :meth:`~ldr.manifolds.Manifold.change`.  ``"norm"`` (Stiefel factors): where the
    two costs agree to ``cost_tol`` (relative), the largest principal-angle sine between the
    spans — many costs on Stiefel are invariant to M → MQ (LDA's ratio, CCA's joint
    rotation), and rotated bases of one span at one cost are one answer — else the spectral
    norm ‖N − M‖₂ (:meth:`~ldr.manifolds.Manifold.change`).  ``"cost"`` (a Euclidean factor):
    the relative cost difference ``|f_a − f_b| / max(|f_a|, |f_b|)``, because a Euclidean
    factor's parameters are identified only up to the model's symmetries (the PPCA and FA
    likelihoods are invariant to W → WR), so the distance between the matrices says nothing
    about whether two runs found the same model.
    """
    kind = distance_kind(geom) if kind is None else kind
    if kind == "cost":
        fa = float(a[1])
        fb = float(b[1])
        if fa == fb:
            return 0.0
        return abs(fa - fb) / max(abs(fa), abs(fb), 1e-300)
    if kind == "norm":
        fa = float(a[1])
        fb = float(b[1])
        if abs(fa - fb) <= cost_tol * max(abs(fa), abs(fb), 1e-300):
            return _span_sine(geom, a[0], b[0])
    return float(geom.change(a[0], b[0]))


def group_answers(geom, points: list, same_tol: float, cost_tol: float):
    """Group runs by answer: ``points`` holds one ``(point, cost)`` per run.  Returns the runs'
    labels (A has the lowest cost), their distances to A, one representative per answer and
    the distances between the representatives (:func:`answer_distance`; ``same_tol`` on
    Grassmann and Stiefel factors, ``cost_tol`` on a Euclidean one)."""
    measure = distance_kind(geom)
    tol = cost_tol if measure == "cost" else same_tol
    labels: list[str] = [""] * len(points)
    reps: list = []
    for i in sorted(range(len(points)), key=lambda i: points[i][1]):
        for j, rep in enumerate(reps):
            if answer_distance(geom, rep, points[i], measure, cost_tol) <= tol:
                labels[i] = label_of(j)
                break
        else:
            labels[i] = label_of(len(reps))
            reps.append(points[i])
    to_A = [answer_distance(geom, reps[0], p, measure, cost_tol) for p in points]
    k = len(reps)
    dist = np.array([[answer_distance(geom, reps[a], reps[b], measure, cost_tol)
                      for b in range(k)] for a in range(k)])
    return labels, to_A, reps, dist
