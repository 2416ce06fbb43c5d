"""Run several solvers from the same starts on one objective and compare the answers.

:func:`compare` solves ``objective`` with every solver from every start (the same starts for
every solver) under the driver's one set of stopping rules, and returns a
:class:`Comparison` with one row per run:

* ``cost``, ``converged``, ``reason``, ``n_iter``, ``time`` and the oracle counts;
* ``improvement`` over the eigenvector heuristic where the objective has one — survey
  Eq. 28 with the sign set so that positive is better (costs are minimized):
  ``−(f − f_heur) / |f_heur|``;
* the optimality certificate at the answer: Riemannian gradient norm, smallest Riemannian
  Hessian eigenvalue and, where the objective has a global test (quotients of traces, PCA),
  whether the answer is the global optimum (``certify=True``, the default);
* ``answer``: runs that reached the same answer share a letter, A, B, … from the lowest
  cost up, so a start that ends at another fixed point or local minimum is visible at a
  glance; ``to_A`` is each run's distance to the best answer A.  "The same answer" is measured
  as fits the manifold (``ldr.driver.answers.answer_distance``): on Grassmann factors the largest
  principal-angle sine (the manifold's own step measure,
  :meth:`ldr.manifolds.Manifold.change`); on Stiefel factors the same sine between the spans
  where the costs agree (a cost invariant to M → MQ has one answer at rotated bases), else
  the spectral norm of the difference — all within ``same_tol`` — and, on a manifold with a
  Euclidean factor (PPCA, factor analysis), the relative cost
  difference, within ``cost_tol``: such parameters are identified only up to the model's
  symmetries (W → WR leaves the PPCA and FA likelihoods unchanged), so two runs at one cost
  are one answer however far apart their matrices are;
* ``verdict``: one word from the run's convergence and certificate (see
  :data:`~ldr.driver.tables.LEGEND`).

**Budgets.**  ``max_time`` (a stopping option) bounds each run, its certificate included;
``time_budget`` bounds all runs together: each run gets the time left shared equally among
the runs not yet done, and a run with no time left is not started (its row says so, with
verdict "budget").  The runs share what each oracle call took (:mod:`ldr.core.problem`,
Deadline): a later run does not start a call it has no time for, and the gradient at the
gradient scale's reference point is evaluated once for all runs.  A run started evaluates
its start point (cost and gradient) whatever its share; so, under ``time_budget``, a run whose
share is less than that evaluation took is not started (its row says so) and leaves its
share to the runs after it.  A solver that cannot solve the
objective (ISM without a Φ-oracle, SCF without a pencil, a manifold it does not handle) is
skipped, with the reason in
``meta["skipped"]`` and a note under the table.  ``progress`` may be a callable
``progress(event, info)``, called with ``"start"``, ``"iteration"``, ``"certificate"`` and
``"done"`` per run and ``"skipped"`` per solver skipped (``info``: solver, start, run index,
number of runs, budget, elapsed seconds, iteration, cost; the finished row at ``"done"``).

The table comes as text (``str``), Markdown (:meth:`Comparison.to_markdown`) or a pandas
DataFrame (:meth:`Comparison.to_pandas`), per run or summarized per solver
(:meth:`Comparison.summary`); :meth:`Comparison.plot` draws the cost gap to the best answer
against time and against iteration, median and spread over starts (survey Figure 4).
"""

from __future__ import annotations

import math
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ldr.core.deprecation import warn_renamed
from ldr.core.errors import ParameterError
from ldr.core.objective import Objective
from ldr.core.problem import Problem, sharing_reference
from ldr.core.result import Result
from ldr.driver import tables
from ldr.driver.answers import DISTANCES, distance_kind, group_answers, label_of, verdict
from ldr.driver.certificate import certificate
from ldr.driver.loop import solve

#: The tables' columns and legend live in :mod:`ldr.driver.tables`; named here as before.
RUN_COLUMNS = tables.RUN_COLUMNS
SUMMARY_COLUMNS = tables.SUMMARY_COLUMNS
LEGEND = tables.LEGEND
SUMMARY_LEGEND = tables.SUMMARY_LEGEND


@dataclass
class Comparison:
    """Results of :func:`compare`.

    ``rows``: one dict per run (keys as in ``ldr.driver.compare.RUN_COLUMNS``, plus ``counts`` and
    ``sin_to_A``, the same as ``to_A`` where answers are compared by sin θ, else None; a run
    that was not started for want of time has ``cost`` None); ``results[(solver, start)]``
    the :class:`~ldr.Result` of each run made; ``answers``: one representative point per
    distinct answer (label → point), ``answer_distances``: the distances between them
    (``meta["distance"]`` says which: a key of ``ldr.driver.answers.DISTANCES``);
    ``heuristic_cost``: the heuristic's cost, or None when the objective has none;
    ``meta["skipped"]``: solver → why it could not solve the objective.
    """

    rows: list[dict]
    results: dict
    answers: dict
    answer_distances: np.ndarray
    heuristic_cost: float | None = None
    meta: dict = field(default_factory=dict)

    @property
    def solvers(self) -> list[str]:
        return list(dict.fromkeys(row["solver"] for row in self.rows))

    @property
    def best_cost(self) -> float:
        return min(row["cost"] for row in self.rows if row["cost"] is not None)

    @property
    def distance(self) -> str:
        """How answers are compared: ``"sin"``, ``"norm"`` or ``"cost"``
        (``ldr.driver.answers.DISTANCES``)."""
        return self.meta.get("distance", "sin")

    # --- tables ---------------------------------------------------------------------------
    def summary(self) -> list[dict]:
        """One record per solver: runs, converged share, share at answer A, best cost, medians
        of improvement, iterations and time (over the runs made)."""
        out = []
        for name in self.solvers:
            rows = [r for r in self.rows if r["solver"] == name]
            made = [r for r in rows if r["cost"] is not None]
            imps = [r["improvement"] for r in made if r["improvement"] is not None]
            out.append({
                "solver": name, "runs": len(rows),
                "converged": f"{sum(r['converged'] for r in rows)}/{len(rows)}",
                "at_A": f"{sum(r['answer'] == 'A' for r in rows)}/{len(rows)}",
                "best_cost": min((r["cost"] for r in made), default=None),
                "improvement": float(np.median(imps)) if imps else None,
                "n_iter": float(np.median([r["n_iter"] for r in made])) if made else None,
                "time": float(np.median([r["time"] for r in made])) if made else None,
            })
        return out

    def _columns(self, per: str, wide: bool) -> list[tuple[str, str, str]]:
        cols = list(RUN_COLUMNS if wide else RUN_COLUMNS[:tables.NARROW]) if per == "run" \
            else list(SUMMARY_COLUMNS)
        if self.heuristic_cost is None:  # no heuristic: no improvement to show
            cols = [c for c in cols if c[0] != "improvement"]
        header = DISTANCES[self.distance][0]
        return [(k, header if k == "to_A" else h, f) for k, h, f in cols]

    def _distinct(self) -> str:
        if len(self.answers) < 2:
            return ""
        labels = list(self.answers)
        if len(labels) > 4:  # their distances to A are in the table
            return (f"{len(labels)} distinct answers (the {DISTANCES[self.distance][1]} of "
                    "each run to A is in the table)")
        pairs = ", ".join(f"{a}–{b}: {self.answer_distances[i, j]:.2e}"
                          for i, a in enumerate(labels) for j, b in enumerate(labels) if i < j)
        return f"distinct answers ({DISTANCES[self.distance][1]} between them): {pairs}"

    def table(self, per: str = "run", markdown: bool = False, notes: bool = True,
              wide: bool = False, width: int = 100) -> str:
        """The comparison as a text (or Markdown) table, one row per ``"run"`` or ``"solver"``.

        Parameters
        ----------
        per : {"run", "solver"}
        markdown : bool
            A Markdown table instead of aligned text.
        notes : bool
            Add the distances between distinct answers, the heuristic's cost and the
            solvers skipped (with the reason).
        wide : bool
            Per run, add iterations, time, the gradient norm, the smallest Hessian
            eigenvalue, the global verdict, ``converged`` and the stopping reason (the
            default table fits 80 columns for solver names up to 18 characters; the wide one
            does not).
        width : int
            The notes are wrapped to this many columns.

        Returns
        -------
        str
            The table; :meth:`legend` explains its columns, :meth:`conclusion` sums it up.
        """
        if per not in ("run", "solver"):
            raise ParameterError("per", f"expected 'run' or 'solver', got {per!r}")
        records = self.rows if per == "run" else self.summary()
        text = tables.render(records, self._columns(per, wide), markdown) if records else ""
        extra = [self._distinct()] if notes else []
        if notes and self.heuristic_cost is not None:
            extra.append(f"eigenvector heuristic: cost {self.heuristic_cost:.10g}")
        if notes:
            extra += [f"skipped {name}: {why}" for name, why in
                      self.meta.get("skipped", {}).items()]
        extra = [e for e in extra if e]
        if not markdown:
            extra = [textwrap.fill(e, width, subsequent_indent="  ") for e in extra]
        sep = "\n\n" if markdown else "\n"
        return sep.join(([text] if text else []) + extra)

    def legend(self, per: str | Sequence[str] = ("run", "solver"), wide: bool = False,
               width: int = 100) -> str:
        """What each column of :meth:`table` means (``per``: one table or both, ``wide`` or
        not), one entry per column, in the words of the manifold compared on, then what a
        solver computes where that is not the cost's minimum (SCF: the ratio trace), wrapped
        to ``width``."""
        pers = [per] if isinstance(per, str) else list(per)
        return tables.legend_text(self, pers, self._columns, wide, width)

    def conclusion(self, budget_hint: str = "max_time or max_iter") -> str:
        """One paragraph: the best answer, how many runs reached it, whether it is certified,
        and how it compares with the eigenvector heuristic (or that there is none);
        ``budget_hint`` names what to raise when runs hit a budget."""
        return tables.conclusion(self, budget_hint)

    def to_markdown(self, per: str = "run", wide: bool = False) -> str:
        """The comparison as a Markdown table: :meth:`table` with ``markdown=True``."""
        return self.table(per, markdown=True, wide=wide)

    def to_pandas(self, per: str = "run"):
        """A pandas DataFrame of :meth:`table`'s rows, every column (pandas must be
        installed)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Comparison.to_pandas needs pandas: pip install pandas") from exc
        if per == "solver":
            return pd.DataFrame(self.summary())
        keys = [k for k, _, _ in RUN_COLUMNS]
        return pd.DataFrame([{k: row.get(k) for k in keys} for row in self.rows])

    def __str__(self) -> str:
        return self.table()

    # --- plot -----------------------------------------------------------------------------
    def gaps(self, solver: str, best: float | None = None
             ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per run of ``solver``: (time, iteration, relative cost gap to ``best``, default the
        best answer found)."""
        best = self.best_cost if best is None else best
        scale = max(abs(best), 1e-300)
        out = []
        for (name, _), res in self.results.items():
            if name == solver:
                gap = np.maximum((np.asarray(res.trace["cost"]) - best) / scale, 1e-16)
                out.append((np.asarray(res.trace["time"]),
                            np.asarray(res.trace["iteration"]), gap))
        return out

    def plot(self, axes=None, spread: tuple[float, float] = (0.0, 100.0), *,
             best: float | None = None, label: str = "", colors: int = 0):
        """Relative cost gap to the best answer vs time and vs iteration (survey Figure 4).

        Per solver, the median over starts as a line and the ``spread`` percentiles (default
        min–max) as a band; each run holds its final gap after it stops.  ``best`` is the
        reference cost (default the best answer found; pass a known optimum to compare
        several comparisons on one pair of ``axes``), ``label`` prefixes the legend entries
        and ``colors`` offsets the colour cycle.  Returns the axes.
        """
        import matplotlib.pyplot as plt

        if axes is None:
            _, axes = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
        for k, name in enumerate(self.solvers):
            runs = self.gaps(name, best)
            if not runs:  # no run made (skipped for want of time)
                continue
            color = f"C{(k + colors) % 10}"
            t_max = max(t[-1] for t, _, _ in runs)
            grid_t = np.linspace(0.0, t_max, 200)
            grid_i = np.arange(max(int(i[-1]) for _, i, _ in runs) + 1)
            # step interpolation: the gap known at time t (at iteration k) is that of the last
            # iterate recorded at or before it (a solver run as one step, pymanopt's, records
            # only its start and its end)
            by_t = np.array([g[np.clip(np.searchsorted(t, grid_t, side="right") - 1, 0, None)]
                             for t, _, g in runs])
            by_i = np.array([g[np.clip(np.searchsorted(i, grid_i, side="right") - 1, 0, None)]
                             for _, i, g in runs])
            for ax, x, Y in ((axes[0], grid_t, by_t), (axes[1], grid_i, by_i)):
                lo, mid, hi = np.percentile(Y, [spread[0], 50, spread[1]], axis=0)
                ax.semilogy(x, mid, color=color, label=f"{label}{name} (median of {len(runs)})")
                if len(runs) > 1:
                    ax.fill_between(x, lo, hi, color=color, alpha=0.2, linewidth=0)
        for ax, xlabel in zip(axes, ("time [s]", "iteration")):
            ax.set_xlabel(xlabel)
            ax.set_ylabel("(f − f_best) / |f_best|")
            ax.grid(True, which="major", alpha=0.3)
        axes[0].set_title("cost gap vs time")
        axes[1].set_title("cost gap vs iteration")
        axes[1].legend(fontsize="small")
        return axes


def _solver_name(solver) -> str:
    if isinstance(solver, str):
        return solver
    if isinstance(solver, (list, tuple)):
        return " → ".join(_solver_name(s) for s in solver)
    return getattr(solver, "name", type(solver).__name__)


def _cannot(solver, problem: Problem) -> str | None:
    """Why ``solver`` (a name, an instance or a chain) cannot solve ``problem``, or None."""
    from ldr.solvers import chain

    try:
        for s in chain(solver):
            s.check_problem(problem)
    except ValueError as exc:
        return str(exc)
    return None


def _starts(problem: Problem, starts, n_starts: int, rng) -> list[tuple[str, object]]:
    """The starts as ``(label, start)``: seeded random points drawn in order, the named
    starts ("heuristic", None) numbered when repeated, arrays as given."""
    if starts is None:
        starts = n_starts
    if isinstance(starts, (int, np.integer)) and not isinstance(starts, bool):
        if starts < 1:
            raise ParameterError("starts", f"need at least one start, got {starts}")
        starts = ["random"] * int(starts)
    named = []
    for i, s in enumerate(starts):
        if isinstance(s, str) and s == "random":
            named.append((f"rand{i}", problem.manifold.random_point(rng)))
        elif s is None or isinstance(s, str):
            repeat = sum(label.split("#")[0] == str(s) for label, _ in named)
            named.append((f"{s}#{repeat + 1}" if repeat else str(s), s))  # each run its key
        else:
            named.append((f"start#{i}", s))
    return named


def compare(objective: Objective, solvers: Sequence = ("trust-region", "gradient"),
            starts=None, *, n_starts: int = 3, random_state=0, same_tol: float = 1e-4,
            cost_tol: float = 1e-6, certify: bool = True,
            progress: bool | Callable | None = None, time_budget: float | None = None,
            **stopping) -> Comparison:
    """Solve ``objective`` with each solver from each start.

    Parameters
    ----------
    objective : ldr.Objective
    solvers : names, Solver instances or chains (a list inside the list is one chain); one
        that cannot solve the objective is skipped, with the reason in ``meta["skipped"]``
    starts : list or int, optional
        Items are arrays (tuples on a product), ``"random"`` (drawn from ``random_state``),
        ``"heuristic"`` or None (each solver's own start); an int means that many random
        starts.  Default: ``n_starts`` random starts.
    n_starts : number of seeded random starts when ``starts`` is not given
    random_state : int or None
        Seeds the random starts (every solver gets the same ones) and each run.
    same_tol : on Grassmann and Stiefel factors, two answers closer than this (sin θ; on
        Stiefel, sin θ between the spans at equal cost, else ‖ΔM‖₂:
        ``ldr.driver.answers.answer_distance``) are the same answer
    cost_tol : on a manifold with a Euclidean factor, two answers whose relative cost
        difference is at most this are the same answer (``ldr.driver.answers.answer_distance``)
    certify : compute the gradient norm and smallest Hessian eigenvalue at every answer
        (within the run's time budget: ``max_time`` less the run's time)
    progress : a tqdm progress bar (True; None, the default, shows it only on a terminal)
        or a callable ``progress(event, info)`` (module docstring)
    time_budget : seconds for all runs together, shared among the runs not yet done (module
        docstring); None: no such budget
    stopping : passed to :func:`ldr.solve` (tol, xtol, max_iter, max_time — per run —, ...)

    Examples
    --------
    >>> import ldr
    >>> X, y = ldr.datasets.load("wine")
    >>> cmp = ldr.compare(ldr.objectives.LDA(X, y, 2), ["trust-region", "ism"], n_starts=2)
    >>> [row["answer"] for row in cmp.rows]
    ['A', 'A', 'A', 'A']
    >>> all(row["improvement"] > 0.05 for row in cmp.rows)   # beats the eigenvector recipe
    True
    """
    if "seed" in stopping:  # the name of an earlier release
        warn_renamed("ldr.compare", "seed", "random_state")
        random_state = stopping.pop("seed")
    problem = Problem(objective)
    if isinstance(solvers, str):
        solvers = [solvers]
    if not len(solvers):
        raise ParameterError("solvers", "need at least one solver")
    if time_budget is not None and not (isinstance(time_budget, (int, float)) and
                                        not isinstance(time_budget, bool) and time_budget > 0):
        raise ParameterError("time_budget", f"must be a positive number of seconds or None, "
                                            f"got {time_budget!r}")
    named = _starts(problem, starts, n_starts, np.random.default_rng(random_state))
    skipped: dict[str, str] = {}
    runnable = []
    for k, solver in enumerate(solvers):
        name = _solver_name(solver)
        if any(n == name for n, _ in runnable) or name in skipped:  # the same one twice
            name = f"{name} #{k + 1}"
        why = _cannot(solver, problem)
        if why is None:
            runnable.append((name, solver))
        else:
            skipped[name] = why
    report = _reporter(progress, len(runnable) * len(named))
    for name, why in skipped.items():
        report("skipped", {"solver": name, "reason": why})
    f_heur = None
    if problem.provides("heuristic"):  # through the Problem: the cost's duration is then
        # known to the first run's deadline (ldr.core.problem, Deadline)
        f_heur = float(problem.cost(objective.heuristic()))
    max_time = stopping.pop("max_time", math.inf)
    user_callback = stopping.pop("callback", None)
    total = len(runnable) * len(named)
    began = time.perf_counter()
    results = {}
    rows = []
    # the gradient scale's reference norm once for all runs (ldr.core.problem.sharing_reference)
    with sharing_reference(objective):
        for name, solver in runnable:
            for label, start in named:
                left = math.inf if time_budget is None else \
                    time_budget - (time.perf_counter() - began)
                budget = min(max_time, left / (total - len(rows)))
                info = {"solver": name, "start": label, "index": len(rows) + 1, "total": total,
                        "budget": budget}
                if left <= 0:  # the comparison's budget is spent
                    rows.append(_not_run(name, label, f"not run: the time budget of "
                                                      f"{time_budget:g} s was spent"))
                    report("done", {**info, "row": rows[-1]})
                    continue
                start_cost = problem.seconds("cost", "egrad")
                if time_budget is not None and start_cost > budget:
                    # a run evaluates its start whatever its share: one that cannot do more
                    # leaves its share to the runs after it
                    rows.append(_not_run(name, label, (
                        f"not run: evaluating a start (cost and gradient) takes about "
                        f"{start_cost:.3g} s, more than its {budget:.3g} s share of the "
                        f"time budget of {time_budget:g} s")))
                    report("done", {**info, "row": rows[-1]})
                    continue
                report("start", info)
                t0 = time.perf_counter()

                def callback(state, info=info, t0=t0):
                    report("iteration", {**info, "iteration": state.iteration, "cost": state.cost,
                                         "elapsed": time.perf_counter() - t0})
                    return bool(user_callback(state)) if user_callback is not None else False

                res: Result = solve(objective, solver, start, random_state=random_state,
                                    max_time=budget,
                                    callback=callback, **stopping)
                results[(name, label)] = res
                cert = None
                left = budget - (time.perf_counter() - t0)
                if certify and left > 0:  # within the run's budget
                    report("certificate", {**info, "elapsed": time.perf_counter() - t0})
                    scale = res.grad_scale if np.isfinite(res.grad_scale) else None
                    cert = certificate(problem, res.M, tol_scale=scale, max_time=left)
                rows.append({"solver": name, "start": label, "cost": res.cost,
                             "converged": res.converged, "reason": res.reason,
                             "n_iter": res.n_iter, "time": res.time, "counts": res.counts,
                             "grad_norm": res.grad_norm if cert is None else cert.grad_norm,
                             "hess_min": None if cert is None else cert.hess_min,
                             "global": None if cert is None else cert.global_optimum,
                             "verdict": verdict(res.converged, cert, res.budget),
                             "improvement": None if f_heur is None
                             else -(res.cost - f_heur) / max(abs(f_heur), 1e-300)})
                if cert is not None and cert.method.startswith("not computed"):
                    rows[-1]["reason"] += f"; certificate {cert.method}"
                elif certify and cert is None:
                    rows[-1]["reason"] += "; certificate not computed: no time left"
                report("done", {**info, "row": rows[-1], "elapsed": time.perf_counter() - t0})
    report("close", {})
    measure = distance_kind(problem.manifold)
    made = [i for i, row in enumerate(rows) if row["cost"] is not None]
    points = [(results[(rows[i]["solver"], rows[i]["start"])].M, rows[i]["cost"])
              for i in made]
    labels, to_A, reps, dist = group_answers(problem.manifold, points, same_tol, cost_tol) \
        if points else ([], [], [], np.zeros((0, 0)))
    for i, label, d in zip(made, labels, to_A):
        rows[i]["answer"] = label
        rows[i]["to_A"] = d
        rows[i]["sin_to_A"] = d if measure == "sin" else None
    return Comparison(rows=rows, results=results,
                      answers={label_of(j): rep[0] for j, rep in enumerate(reps)},
                      answer_distances=dist, heuristic_cost=f_heur,
                      meta={"objective": repr(objective), "starts": [s for s, _ in named],
                            "random_state": random_state,
                            "stopping": dict(stopping, max_time=max_time),
                            "distance": measure, "same_tol": same_tol, "cost_tol": cost_tol,
                            "skipped": skipped, "time_budget": time_budget,
                            "manifold": tables.manifold_words(problem.manifold)})


def _not_run(solver: str, start: str, reason: str) -> dict:
    """The row of a run that was not started."""
    return {"solver": solver, "start": start, "cost": None, "converged": False,
            "reason": reason, "n_iter": 0, "time": 0.0, "counts": {}, "grad_norm": None,
            "hess_min": None, "global": None, "verdict": "budget", "improvement": None,
            "answer": None, "to_A": None, "sin_to_A": None}


def _reporter(progress, total: int) -> Callable:
    """``progress`` as a callable ``(event, info)``: itself, or a tqdm bar over the runs
    (True; None: on a terminal only), or nothing."""
    if callable(progress):
        return progress
    from tqdm.auto import tqdm

    disable = (not sys.stderr.isatty()) if progress is None else not progress
    bar = tqdm(total=total, desc="ldr.compare", disable=disable, leave=False)

    def report(event: str, info: dict) -> None:
        if event == "start":
            bar.set_postfix_str(f"{info['solver']}, {info['start']}")
        elif event == "done":
            bar.update()
        elif event == "close":
            bar.close()

    return report
