"""Routes: the named solver chains that the metric-learning estimators run by default.

A route is a list of solvers that :func:`ldr.solve` runs as a chain (:mod:`ldr.driver`): each
stage starts where the previous one stopped, under the same stopping rules and budgets, and a
stage whose last iterate meets the gradient rule on an exact state certifies the chain (the
later stages are not run).  Each route here is one short, explainable sequence:

* :func:`exact_nca` — L-BFGS with the strong Wolfe line search, NCA's route at moderate n.
  The strong Wolfe conditions are the acceptance rule of the Moré–Thuente search inside
  scipy's L-BFGS-B, the optimizer scikit-learn's ``NeighborhoodComponentsAnalysis`` runs, so
  the route is the reference's method on ldr's evaluations, ended by the gradient rule
  (:class:`ldr.estimators.NCA`).
* :func:`stochastic_then_polish` — Riemannian Adam on mini-batches, then a bounded exact
  L-BFGS polish: the large-n route of NCA and the large-margin objective.  An exact
  evaluation of a pairwise sum costs n² pairs while an epoch of sampled batches costs
  O(n) (the candidate sets of the objectives), so the stochastic stage does the climbing and
  the polish, bounded to :data:`POLISH_PAIRS` pairs of exact work, ends the route on exact
  gradients wherever that budget buys at least one iteration.  The driver's check of the
  stochastic stage's end, one exact evaluation, is bounded too (:data:`CHECK_PAIRS`): past
  it the answer is returned unchecked, not converged, and its reason says so.

The large-margin objective's exact route, L-BFGS then the trust region where L-BFGS ends
uncertified, is its ``default_solver`` (:class:`ldr.objectives.LargeMarginDML`).

References: J. J. Moré, D. J. Thuente (1994), "Line search algorithms with guaranteed
sufficient decrease", ACM TOMS 20, 286–307; R. H. Byrd, P. Lu, J. Nocedal, C. Zhu (1995),
"A limited memory algorithm for bound constrained optimization", SIAM J. Sci. Comput. 16,
1190–1208; D. P. Kingma, J. Ba (2015), "Adam: a method for stochastic optimization", ICLR;
G. Bécigneul, O.-E. Ganea (2019), "Riemannian adaptive optimization methods", ICLR.
"""

from __future__ import annotations

import numbers

from ldr.core.errors import ParameterError
from ldr.solvers.adam import Adam
from ldr.solvers.base import Solver
from ldr.solvers.lbfgs import LBFGS

#: samples per mini-batch of the stochastic stage: a block of b × (K + m) candidate pairs is a
#: matrix product of useful size for BLAS, and an epoch still takes n/b ≈ 80 Adam steps or
#: more past the estimators' threshold of 2·10⁴ samples
BATCH_SIZE = 256
#: terms the stochastic start is estimated on (its cost, gradient, step size and the driver's
#: gradient scale): a sample mean over 4096 terms has a relative standard error of order
#: 1/√4096 ≈ 1.6%, and the start then needs no full evaluation
START_TERMS = 4096
#: the exact work of the polish, in pairs (one exact evaluation of a pairwise sum is n²): ten
#: exact iterations at the estimators' threshold n = 2·10⁴, fewer beyond, none once one
#: iteration would cost more (n > 6.3·10⁴) — the route's exact work does not grow with n
POLISH_PAIRS = 4e9
#: the largest exact evaluation (n² pairs) the route has the driver make to check its
#: stochastic stage's end: n up to 10⁵ samples, where it is the costliest step of the route
#: (NCA at 10⁵ samples: 142.9 s of a 187.8 s fit on one core, profiled);
#: past it the check alone would grow like n² (hours at 10⁶) and the answer is returned
#: unchecked, not converged
CHECK_PAIRS = 1e10


def exact_nca() -> list[Solver]:
    """NCA's exact route: ``[LBFGS(strong=True)]`` (module docstring)."""
    return [LBFGS(strong=True)]


class Polish(LBFGS):
    """L-BFGS ended after ``steps`` iterations: an exact polish bounded in work.

    It stops earlier where a stopping rule of the driver fires; after ``steps`` iterations it
    stops with its own reason, not converged unless the gradient rule holds there.

    Parameters
    ----------
    steps : int
        Iterations at most (at least 1).
    **options
        Options of :class:`~ldr.solvers.LBFGS`.
    """


    def __init__(self, steps: int, **options):
        super().__init__(**options)
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
            raise ParameterError("steps", f"must be a positive integer, got {steps!r}")
        self.steps = int(steps)

    def init(self, problem, M0):
        state = super().init(problem, M0)
        state.memory["first"] = state.iteration
        return state

    def step(self, problem, state):
        first = state.memory["first"]
        new = super().step(problem, state)
        new.memory["first"] = first
        if new.iteration - first >= self.steps and not new.stop_reason:
            new.stop_reason = f"polish budget of {self.steps} exact L-BFGS iterations spent"
        return new


def polish_steps(n_samples: int, pairs: float | None = None) -> int:
    """The polish's iterations at ``n_samples``: ``pairs / n²`` rounded down (0: no polish;
    ``pairs`` None: :data:`POLISH_PAIRS`)."""
    return int((POLISH_PAIRS if pairs is None else pairs) / float(n_samples) ** 2)


def stochastic_then_polish(n_samples: int, *, max_epochs: int, seed: int = 0,
                           batch_size: int = BATCH_SIZE, start_terms: int = START_TERMS,
                           polish_pairs: float | None = None,
                           check_pairs: float | None = None) -> list[Solver]:
    """Riemannian Adam for at most ``max_epochs`` epochs of ``batch_size``-sample batches
    (seeded by ``seed``, its start estimated on ``start_terms`` terms, the step decaying as
    η₀/(1 + t) over epochs t, the Robbins–Monro rate), then :class:`Polish` for
    :func:`polish_steps` iterations (``polish_pairs`` None: :data:`POLISH_PAIRS`) where that
    is at least one (module docstring).  The driver's exact check at the end of the Adam
    stage decides whether it converged, where one exact evaluation (n² pairs) is within
    ``check_pairs`` (None: :data:`CHECK_PAIRS`); beyond, Adam is built ``unchecked`` and the
    answer is reported not converged, saying why."""
    budget = CHECK_PAIRS if check_pairs is None else float(check_pairs)
    pairs = float(n_samples) ** 2
    unchecked = None
    if pairs > budget:
        unchecked = (f"one exact evaluation at {n_samples} samples is n² = {pairs:.1e} pairs, "
                     f"past the route's check budget of {budget:.1e} (CHECK_PAIRS, "
                     f"ldr.solvers.routes); the answer is the stochastic stage's end, "
                     f"unchecked")
    adam = Adam(batch_size=batch_size, random_state=seed, start_terms=start_terms,
                max_epochs=max_epochs, decay=1.0, unchecked=unchecked)
    steps = polish_steps(n_samples, polish_pairs)
    return [adam, Polish(steps)] if steps > 0 else [adam]
