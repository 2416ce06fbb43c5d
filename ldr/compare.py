"""Run several solvers from several starts on one objective and compare the answers.

:func:`compare` solves ``objective`` with every solver from every start (the same starts for
every solver) under the driver's one set of stopping rules, and returns a
:class:`Comparison`: one row per run (cost, converged, reason, iterations, time, oracle
counts), the normalized improvement over the eigenvector heuristic where the objective has
one (survey Eq. 28: −(f − f_heur)/|f_heur|), and which **answer** each run reached — runs
whose subspaces lie within ``same_tol`` (largest principal-angle sine) are the same answer;
answers are labelled A, B, … from the lowest cost up, so a start that ends at a different
fixed point or local minimum is visible at a glance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ldr.driver import solve
from ldr.objective import Objective
from ldr.problem import Problem
from ldr.result import Result


def _label(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"A{i}"


@dataclass
class Comparison:
    """Results of :func:`compare`.

    ``rows``: one dict per run; ``results[(solver, start)]`` the :class:`~ldr.Result`;
    ``answers``: one representative point per distinct answer (label → point), and
    ``answer_distances``: sin θ between them.
    """

    rows: list[dict]
    results: dict
    answers: dict
    answer_distances: np.ndarray
    heuristic_cost: float | None = None
    meta: dict = field(default_factory=dict)

    def table(self) -> str:
        cols = f"{'solver':<16}{'start':>8}{'cost':>16}{'improv.':>10}{'answer':>8}" \
               f"{'iters':>7}{'time [s]':>10}  converged / reason"
        lines = [cols, "-" * len(cols)]
        for row in self.rows:
            imp = "" if row["improvement"] is None else f"{row['improvement']:.3%}"
            lines.append(f"{row['solver']:<16}{row['start']:>8}{row['cost']:>16.10g}{imp:>10}"
                         f"{row['answer']:>8}{row['n_iter']:>7d}{row['time']:>10.4f}  "
                         f"{'yes' if row['converged'] else 'NO'}: {row['reason']}")
        if len(self.answers) > 1:
            lines.append("distinct answers (sin θ between them): " + ", ".join(
                f"{a}–{b}: {self.answer_distances[i, j]:.2e}"
                for i, a in enumerate(self.answers) for j, b in enumerate(self.answers)
                if i < j))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def plot(self, axes=None):
        """Cost gap to the best answer against time and against iteration (survey Fig. 4)."""
        import matplotlib.pyplot as plt

        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(9, 3.2))
        best = min(row["cost"] for row in self.rows)
        for (solver, start), res in self.results.items():
            gap = np.maximum(res.trace["cost"] - best, 1e-16) / max(abs(best), 1e-300)
            label = f"{solver} ({start})"
            axes[0].semilogy(res.trace["time"], gap, label=label)
            axes[1].semilogy(res.trace["iteration"], gap, label=label)
        axes[0].set_xlabel("seconds")
        axes[1].set_xlabel("iteration")
        axes[0].set_ylabel("relative cost gap")
        axes[1].legend(fontsize="small")
        return axes


def compare(objective: Objective, solvers: Sequence = ("trust-region", "gradient"),
            starts=3, *, seed=0, same_tol: float = 1e-4, **stopping) -> Comparison:
    """Solve ``objective`` with each solver from each start.

    Parameters
    ----------
    solvers : names, Solver instances or chains (each one entry)
    starts : int (that many seeded random starts), or a list whose items are arrays,
        "random" (drawn from ``seed``), "heuristic" or None (the solver's own start)
    seed : seeds the random starts; every solver gets the same ones
    same_tol : two answers closer than this (sin θ) are the same answer
    stopping : passed to :func:`ldr.solve` (gtol, xtol, max_iter, ...)
    """
    problem = Problem(objective)
    rng = np.random.default_rng(seed)
    if isinstance(starts, (int, np.integer)) and not isinstance(starts, bool):
        if starts < 1:
            raise ValueError(f"starts: need at least one, got {starts}")
        starts = ["random"] * int(starts)
    named = []
    for i, s in enumerate(starts):
        if isinstance(s, str) and s == "random":
            named.append((f"rand{i}", problem.manifold.random_point(rng)))
        elif s is None or isinstance(s, str):
            named.append((str(s), s))
        else:
            named.append((f"M0#{i}", s))
    f_heur = None
    if problem.provides("heuristic"):
        f_heur = float(objective.cost(objective.heuristic()))
    results, rows = {}, []
    for solver in solvers:
        name = solver if isinstance(solver, str) else (
            " → ".join(map(str, solver)) if isinstance(solver, (list, tuple))
            else getattr(solver, "name", type(solver).__name__))
        for label, M0 in named:
            res: Result = solve(objective, solver, M0=M0, seed=seed, **stopping)
            results[(name, label)] = res
            rows.append({"solver": name, "start": label, "cost": res.cost,
                         "converged": res.converged, "reason": res.reason,
                         "n_iter": res.n_iter, "time": res.time, "counts": res.counts,
                         "improvement": None if f_heur is None
                         else -(res.cost - f_heur) / max(abs(f_heur), 1e-300)})
    # group the answers by subspace, labelled from the lowest cost up
    order = sorted(range(len(rows)), key=lambda i: rows[i]["cost"])
    reps: list = []
    keys = list(results)
    for i in order:
        M = results[keys[i]].M
        for j, rep in enumerate(reps):
            if problem.manifold.change(rep, M) <= same_tol:
                rows[i]["answer"] = _label(j)
                break
        else:
            rows[i]["answer"] = _label(len(reps))
            reps.append(M)
    k = len(reps)
    dist = np.array([[problem.manifold.change(reps[a], reps[b]) for b in range(k)]
                     for a in range(k)])
    return Comparison(rows=rows, results=results,
                      answers={_label(j): rep for j, rep in enumerate(reps)},
                      answer_distances=dist, heuristic_cost=f_heur)
