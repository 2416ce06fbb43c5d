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
  as fits the manifold (``ldr.answers.answer_distance``): on Grassmann factors the largest
  principal-angle sine (the manifold's own step measure,
  :meth:`ldr.manifolds.Geometry.change`); on Stiefel factors the same sine between the spans
  where the costs agree (a cost invariant to M → MQ has one answer at rotated bases), else
  the spectral norm of the difference — all within ``same_tol`` — and, on a manifold with a
  Euclidean factor (PPCA, factor analysis), the relative cost
  difference, within ``cost_tol``: such parameters are identified only up to the model's
  symmetries (W → WR leaves the PPCA and FA likelihoods unchanged), so two runs at one cost
  are one answer however far apart their matrices are;
* ``verdict``: one word from the run's convergence and certificate (see :data:`LEGEND`).

The table comes as text (``str``), Markdown (:meth:`Comparison.to_markdown`) or a pandas
DataFrame (:meth:`Comparison.to_pandas`), per run or summarized per solver
(:meth:`Comparison.summary`); :meth:`Comparison.plot` draws the cost gap to the best answer
against time and against iteration, median and spread over starts (survey Figure 4).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ldr.answers import DISTANCES, distance_kind, group_answers, label_of, verdict
from ldr.certificate import certificate
from ldr.driver import solve
from ldr.errors import ParameterError
from ldr.objective import Objective
from ldr.problem import Problem
from ldr.result import Result

#: Columns of :meth:`Comparison.table`, as (key, header, format): the first ``_NARROW`` are
#: the default table, which answers "which answer did each run reach, and is it optimal" in
#: 80 columns (solver names up to 18 characters); ``wide=True`` adds iterations, time, the
#: certificate's numbers and the stopping reason.  The header of ``to_A`` depends on how
#: answers are compared (``ldr.answers.DISTANCES``).
RUN_COLUMNS = (
    ("solver", "solver", "{}"), ("start", "start", "{}"), ("cost", "cost", "{:.10g}"),
    ("improvement", "vs heur.", "{:+.3%}"), ("answer", "answer", "{}"),
    ("to_A", "to A", "{:.1e}"), ("verdict", "verdict", "{}"), ("n_iter", "iters", "{:d}"),
    ("time", "time [s]", "{:.4f}"), ("grad_norm", "‖grad‖", "{:.1e}"),
    ("hess_min", "λmin(Hess)", "{:.2e}"), ("global", "global opt.", "{}"),
    ("converged", "converged", "{}"), ("reason", "reason", "{}"),
)
_NARROW = 7
#: Columns of the per-solver summary (:meth:`Comparison.summary`): how fast each solver is
#: (medians over its runs) and how often it reached the best answer A.
SUMMARY_COLUMNS = (
    ("solver", "solver", "{}"), ("runs", "runs", "{:d}"), ("converged", "conv.", "{}"),
    ("at_A", "at A", "{}"), ("best_cost", "best cost", "{:.10g}"),
    ("improvement", "vs heur.", "{:+.3%}"), ("n_iter", "iters", "{:g}"),
    ("time", "time [s]", "{:.4f}"),
)

#: What each column means (the legend of :meth:`Comparison.legend`).
LEGEND = {
    "solver": "the solver; a → b is a chain, b starting where a stopped",
    "start": "the start point: randN is the N-th seeded random point (the same for every "
             "solver), heuristic the eigenvector answer, None the solver's own start",
    "cost": "the objective's value at the end of the run (costs are minimized)",
    "improvement": "improvement over the eigenvector heuristic's cost f_heur, "
                   "−(f−f_heur)/|f_heur| (survey Eq. 28): positive is better",
    "answer": "which distinct answer the run reached: A has the lowest cost, then B, …",
    "n_iter": "iterations, all stages of a chain together",
    "time": "wall-clock seconds of the run",
    "verdict": "global min: certified global optimum; not global: the objective's global "
               "test fails there; local min: gradient ≈ 0 and Hessian ⪰ 0; saddle: "
               "gradient ≈ 0, Hessian not ⪰ 0; not critical: the solver converged on its "
               "own rule (e.g. SCF's fixed point) where the gradient is not 0; NOT conv.: "
               "stopped by a budget or stalled (the reason: --wide, table(wide=True))",
    "grad_norm": "Riemannian gradient norm at the answer",
    "hess_min": "smallest eigenvalue of the Riemannian Hessian at the answer (≥ 0 at a "
                "local minimum)",
    "global": "whether the objective's global test (quotients of traces, PCA) certifies "
              "the global optimum; – where no test is known",
    "converged": "whether a convergence rule, not a budget, stopped the run",
    "reason": "the stopping rule that fired",
}
#: The per-solver summary's columns (:meth:`Comparison.summary`); its "vs heur.", "iters"
#: and "time [s]" are the medians over the solver's runs.
SUMMARY_LEGEND = {
    "runs": "the solver's runs (one per start)",
    "converged": "how many of its runs converged",
    "at_A": "how many of its runs reached answer A",
    "best_cost": "the solver's lowest cost",
}
_MEDIAN = "; per solver: the median over its runs"


def _cell(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return "yes" if value else "NO"
    if "%" in fmt and abs(value) < 5e-6:  # rounding noise, not a sign
        value = 0.0
    return fmt.format(value)


def _render(records: list[dict], columns, markdown: bool) -> str:
    header = [h for _, h, _ in columns]
    body = [[_cell(rec.get(k), f) for k, _, f in columns] for rec in records]
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(header)]
    left = [k in ("solver", "start", "verdict", "reason") for k, _, _ in columns]
    fmt_row = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if left[i] else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [fmt_row(header).rstrip(), "  ".join("-" * w for w in widths)]
    return "\n".join(lines + [fmt_row(row).rstrip() for row in body])


@dataclass
class Comparison:
    """Results of :func:`compare`.

    ``rows``: one dict per run (keys as in ``ldr.compare.RUN_COLUMNS``, plus ``counts`` and
    ``sin_to_A``, the same as ``to_A`` where answers are compared by sin θ, else None);
    ``results[(solver, start)]`` the :class:`~ldr.Result`; ``answers``: one representative
    point per distinct answer (label → point), ``answer_distances``: the distances between
    them (``meta["distance"]`` says which: a key of ``ldr.answers.DISTANCES``);
    ``heuristic_cost``: the heuristic's cost, or None when the objective has none.
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
        return min(row["cost"] for row in self.rows)

    @property
    def distance(self) -> str:
        """How answers are compared: ``"sin"``, ``"norm"`` or ``"cost"``
        (``ldr.answers.DISTANCES``)."""
        return self.meta.get("distance", "sin")

    # --- tables ---------------------------------------------------------------------------
    def summary(self) -> list[dict]:
        """One record per solver: runs, converged share, share at answer A, best cost, medians
        of improvement, iterations and time."""
        out = []
        for name in self.solvers:
            rows = [r for r in self.rows if r["solver"] == name]
            imps = [r["improvement"] for r in rows if r["improvement"] is not None]
            out.append({
                "solver": name, "runs": len(rows),
                "converged": f"{sum(r['converged'] for r in rows)}/{len(rows)}",
                "at_A": f"{sum(r['answer'] == 'A' for r in rows)}/{len(rows)}",
                "best_cost": min(r["cost"] for r in rows),
                "improvement": float(np.median(imps)) if imps else None,
                "n_iter": float(np.median([r["n_iter"] for r in rows])),
                "time": float(np.median([r["time"] for r in rows])),
            })
        return out

    def _columns(self, per: str, wide: bool) -> list[tuple[str, str, str]]:
        cols = list(RUN_COLUMNS if wide else RUN_COLUMNS[:_NARROW]) if per == "run" \
            else list(SUMMARY_COLUMNS)
        if self.heuristic_cost is None:  # no heuristic: no improvement to show
            cols = [c for c in cols if c[0] != "improvement"]
        header = DISTANCES[self.distance][0]
        return [(k, header if k == "to_A" else h, f) for k, h, f in cols]

    def _distinct(self) -> str:
        if len(self.answers) < 2:
            return ""
        labels = list(self.answers)
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
            Add the distances between distinct answers and the heuristic's cost.
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
            The table; :meth:`legend` explains its columns.
        """
        if per not in ("run", "solver"):
            raise ParameterError("per", f"expected 'run' or 'solver', got {per!r}")
        records = self.rows if per == "run" else self.summary()
        text = _render(records, self._columns(per, wide), markdown)
        extra = [self._distinct()] if notes else []
        if notes and self.heuristic_cost is not None:
            extra.append(f"eigenvector heuristic: cost {self.heuristic_cost:.10g}")
        extra = [e for e in extra if e]
        if not markdown:
            extra = [textwrap.fill(e, width, subsequent_indent="  ") for e in extra]
        sep = "\n\n" if markdown else "\n"
        return text + (sep + sep.join(extra) if extra else "")

    def legend(self, per: str | Sequence[str] = ("run", "solver"), wide: bool = False,
               width: int = 100) -> str:
        """What each column of :meth:`table` means (``per``: one table or both, ``wide`` or
        not), one entry per column, wrapped to ``width``."""
        pers = [per] if isinstance(per, str) else list(per)
        tol = self.meta.get("cost_tol" if self.distance == "cost" else "same_tol", 1e-4)
        texts = {"run": dict(LEGEND, to_A=DISTANCES[self.distance][2].format(tol=tol)),
                 "solver": dict(LEGEND, **SUMMARY_LEGEND)}
        entries: dict[str, str] = {}
        for one in pers:
            for key, header, _ in self._columns(one, wide):
                text = texts[one][key]
                if one == "solver" and key in ("improvement", "n_iter", "time"):
                    if header in entries:
                        entries[header] += _MEDIAN
                        continue
                    text += _MEDIAN
                entries.setdefault(header, text)
        pad = max(len(h) for h in entries) + 2
        lines = [textwrap.fill(text, width, initial_indent=f"  {header:<{pad}}",
                               subsequent_indent=" " * (pad + 2))
                 for header, text in entries.items()]
        return "columns:\n" + "\n".join(lines)

    def to_markdown(self, per: str = "run", wide: bool = False) -> str:
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
            color = f"C{(k + colors) % 10}"
            t_max = max(t[-1] for t, _, _ in runs)
            grid_t = np.linspace(0.0, t_max, 200)
            grid_i = np.arange(max(len(g) for _, _, g in runs))
            # step interpolation: the gap known at time t is that of the last iterate ≤ t
            by_t = np.array([g[np.clip(np.searchsorted(t, grid_t, side="right") - 1, 0, None)]
                             for t, _, g in runs])
            by_i = np.array([g[np.minimum(grid_i, len(g) - 1)] for _, _, g in runs])
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


def compare(objective: Objective, solvers: Sequence = ("trust-region", "gradient"),
            starts=None, *, n_starts: int = 3, seed=0, same_tol: float = 1e-4,
            cost_tol: float = 1e-6, certify: bool = True, progress: bool | None = None,
            **stopping) -> Comparison:
    """Solve ``objective`` with each solver from each start.

    Parameters
    ----------
    objective : ldr.Objective
    solvers : names, Solver instances or chains (a list inside the list is one chain)
    starts : list or int, optional
        Items are arrays (tuples on a product), ``"random"`` (drawn from ``seed``),
        ``"heuristic"`` or None (each solver's own start); an int means that many random
        starts.  Default: ``n_starts`` random starts.
    n_starts : number of seeded random starts when ``starts`` is not given
    seed : seeds the random starts; every solver gets the same ones
    same_tol : on Grassmann and Stiefel factors, two answers closer than this (sin θ; on
        Stiefel, sin θ between the spans at equal cost, else ‖ΔM‖₂:
        ``ldr.answers.answer_distance``) are the same answer
    cost_tol : on a manifold with a Euclidean factor, two answers whose relative cost
        difference is at most this are the same answer (``ldr.answers.answer_distance``)
    certify : compute the gradient norm and smallest Hessian eigenvalue at every answer
    progress : show a tqdm progress bar; None (default) shows it only on a terminal
    stopping : passed to :func:`ldr.solve` (gtol, xtol, max_iter, max_time, ...)

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
    from tqdm.auto import tqdm

    problem = Problem(objective)
    rng = np.random.default_rng(seed)
    if starts is None:
        starts = n_starts
    if isinstance(starts, (int, np.integer)) and not isinstance(starts, bool):
        if starts < 1:
            raise ParameterError("starts", f"need at least one start, got {starts}")
        starts = ["random"] * int(starts)
    if isinstance(solvers, str):
        solvers = [solvers]
    if not len(solvers):
        raise ParameterError("solvers", "need at least one solver")
    named = []
    for i, s in enumerate(starts):
        if isinstance(s, str) and s == "random":
            named.append((f"rand{i}", problem.manifold.random_point(rng)))
        elif s is None or isinstance(s, str):
            repeat = sum(label.split("#")[0] == str(s) for label, _ in named)
            named.append((f"{s}#{repeat + 1}" if repeat else str(s), s))  # each run its key
        else:
            named.append((f"M0#{i}", s))
    f_heur = None
    if problem.provides("heuristic"):
        f_heur = float(objective.cost(objective.heuristic()))
    disable = (not sys.stderr.isatty()) if progress is None else not progress
    bar = tqdm(total=len(solvers) * len(named), desc="ldr.compare", disable=disable,
               leave=False)
    results, rows = {}, []
    for k, solver in enumerate(solvers):
        name = _solver_name(solver)
        if any(key[0] == name for key in results):  # the same solver twice, other settings
            name = f"{name} #{k + 1}"
        for label, M0 in named:
            bar.set_postfix_str(f"{name}, {label}")
            res: Result = solve(objective, solver, M0=M0, seed=seed, **stopping)
            results[(name, label)] = res
            grad_norm, hess_min, is_global, cert = res.grad_norm, None, None, None
            if certify:
                scale = res.grad_scale if np.isfinite(res.grad_scale) else None
                cert = certificate(problem, res.M, gtol_scale=scale)
                grad_norm, hess_min = cert.grad_norm, cert.hess_min
                is_global = cert.global_optimum
            rows.append({"solver": name, "start": label, "cost": res.cost,
                         "converged": res.converged, "reason": res.reason,
                         "n_iter": res.n_iter, "time": res.time, "counts": res.counts,
                         "grad_norm": grad_norm, "hess_min": hess_min, "global": is_global,
                         "verdict": verdict(res.converged, cert),
                         "improvement": None if f_heur is None
                         else -(res.cost - f_heur) / max(abs(f_heur), 1e-300)})
            bar.update()
    bar.close()
    measure = distance_kind(problem.manifold)
    points = [(results[key].M, rows[i]["cost"]) for i, key in enumerate(results)]
    labels, to_A, reps, dist = group_answers(problem.manifold, points, same_tol, cost_tol)
    for row, label, d in zip(rows, labels, to_A):
        row["answer"], row["to_A"] = label, d
        row["sin_to_A"] = d if measure == "sin" else None
    return Comparison(rows=rows, results=results,
                      answers={label_of(j): rep[0] for j, rep in enumerate(reps)},
                      answer_distances=dist, heuristic_cost=f_heur,
                      meta={"objective": repr(objective), "starts": [s for s, _ in named],
                            "seed": seed, "stopping": stopping, "distance": measure,
                            "same_tol": same_tol, "cost_tol": cost_tol})
