"""A Problem binds an Objective to its manifold geometry and counts oracle calls.

Solvers see only a Problem, so every solver pays for the same oracle calls, and the counts
(``n_cost``, ``n_grad``, ``n_hvp``, ``n_phi``, ``n_pencil``) go into the Result for a fair
comparison.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ldr.manifolds import Geometry
from ldr.objective import Objective


def _as_float_tuple(G, is_product: bool):
    if is_product:
        return tuple(np.asarray(g, dtype=float) for g in G)
    return np.asarray(G, dtype=float)


class Problem:
    """An objective on its manifold, with evaluation counters."""

    def __init__(self, objective: Objective):
        if not isinstance(objective, Objective):
            raise ValueError(
                f"objective: expected an ldr.Objective, got {type(objective).__name__}; "
                "wrap a cost function with ldr.objective(cost, shape=(d, r))"
            )
        if objective.shape is None:
            raise ValueError(
                f"objective: {type(objective).__name__} has no shape; set self.shape = (d, r)"
            )
        self.objective = objective
        self.manifold = Geometry(objective.manifold, objective.shape)
        self.counts: Counter = Counter()

    def cost(self, M) -> float:
        self.counts["cost"] += 1
        value = float(self.objective.cost(M))
        return value

    def egrad(self, M):
        self.counts["grad"] += 1
        return _as_float_tuple(self.objective.egrad(M), self.manifold.is_product)

    def ehvp(self, M, V):
        self.counts["hvp"] += 1
        return _as_float_tuple(self.objective.ehvp(M, V), self.manifold.is_product)

    def phi(self, M) -> np.ndarray:
        self.counts["phi"] += 1
        return np.asarray(self.objective.phi(M), dtype=float)

    def pencil(self, M) -> tuple[np.ndarray, np.ndarray]:
        self.counts["pencil"] += 1
        A, B = self.objective.pencil(M)
        return np.asarray(A, dtype=float), np.asarray(B, dtype=float)

    def rgrad(self, M, G):
        return self.manifold.rgrad(M, G)

    def rhess(self, M, G, V):
        """Riemannian Hessian of the cost at ``M`` along tangent ``V`` (G = egrad(M))."""
        return self.manifold.rhess(M, G, self.ehvp(M, V), V)

    def provides(self, member: str) -> bool:
        return self.objective.provides(member)
