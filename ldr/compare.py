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
* ``answer``: runs whose subspaces lie within ``same_tol`` (largest principal-angle sine) are
  the same answer, labelled A, B, … from the lowest cost up, so a start that ends at another
  fixed point or local minimum is visible at a glance; ``sin_to_A`` is each run's distance to
  the best answer.

The table comes as text (``str``), Markdown (:meth:`Comparison.to_markdown`) or a pandas
DataFrame (:meth:`Comparison.to_pandas`), per run or summarized per solver
(:meth:`Comparison.summary`); :meth:`Comparison.plot` draws the cost gap to the best answer
against time and against iteration, median and spread over starts (survey Figure 4).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ldr.certificate import certificate
from ldr.driver import solve
from ldr.objective import Objective
from ldr.problem import Problem
from ldr.result import Result

#: Columns of :meth:`Comparison.table`, as (key, header, format).
RUN_COLUMNS = (
    ("solver", "solver", "{}"), ("start", "start", "{}"), ("cost", "cost", "{:.10g}"),
    ("improvement", "improvement", "{:+.3%}"), ("answer", "answer", "{}"),
    ("sin_to_A", "sinθ to A", "{:.1e}"), ("n_iter", "iters", "{:d}"),
    ("time", "time [s]", "{:.4f}"), ("grad_norm", "‖grad‖", "{:.1e}"),
    ("hess_min", "λmin(Hess)", "{:.2e}"), ("global", "global opt.", "{}"),
    ("converged", "converged", "{}"), ("reason", "reason", "{}"),
)
SUMMARY_COLUMNS = (
    ("solver", "solver", "{}"), ("runs", "runs", "{:d}"), ("converged", "converged", "{}"),
    ("at_A", "at best answer", "{}"), ("best_cost", "best cost", "{:.10g}"),
    ("improvement", "median improvement", "{:+.3%}"), ("n_iter", "median iters", "{:g}"),
    ("time", "median time [s]", "{:.4f}"),
)


def _label(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"A{i}"


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
    left = [k in ("solver", "start", "reason") for k, _, _ in columns]
    fmt_row = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if left[i] else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [fmt_row(header), "  ".join("-" * w for w in widths)]
    return "\n".join(lines + [fmt_row(row).rstrip() for row in body])


@dataclass
class Comparison:
    """Results of :func:`compare`.

    ``rows``: one dict per run (keys as in ``ldr.compare.RUN_COLUMNS``, plus ``counts``);
    ``results[(solver, start)]`` the :class:`~ldr.Result`; ``answers``: one representative
    point per distinct answer (label → point), ``answer_distances``: sin θ between them;
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

    def _distinct(self) -> str:
        if len(self.answers) < 2:
            return ""
        labels = list(self.answers)
        pairs = ", ".join(f"{a}–{b}: {self.answer_distances[i, j]:.2e}"
                          for i, a in enumerate(labels) for j, b in enumerate(labels) if i < j)
        return f"distinct answers (sin θ between them): {pairs}"

    def table(self, per: str = "run", markdown: bool = False, notes: bool = True) -> str:
        """The comparison as a text (or Markdown) table, one row per ``"run"`` or ``"solver"``;
        ``notes`` adds the distances between distinct answers and the heuristic's cost."""
        if per not in ("run", "solver"):
            raise ValueError(f"per: expected 'run' or 'solver', got {per!r}")
        text = (_render(self.rows, RUN_COLUMNS, markdown) if per == "run"
                else _render(self.summary(), SUMMARY_COLUMNS, markdown))
        extra = [self._distinct()] if notes else []
        if notes and self.heuristic_cost is not None:
            extra.append(f"eigenvector heuristic: cost {self.heuristic_cost:.10g}")
        extra = [e for e in extra if e]
        sep = "\n\n" if markdown else "\n"
        return text + (sep + sep.join(extra) if extra else "")

    def to_markdown(self, per: str = "run") -> str:
        return self.table(per, markdown=True)

    def to_pandas(self, per: str = "run"):
        """A pandas DataFrame of :meth:`table`'s rows (pandas must be installed)."""
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
            certify: bool = True, progress: bool | None = None, **stopping) -> Comparison:
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
    same_tol : two answers closer than this (sin θ) are the same answer
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
            raise ValueError(f"starts: need at least one start, got {starts}")
        starts = ["random"] * int(starts)
    if isinstance(solvers, str):
        solvers = [solvers]
    if not len(solvers):
        raise ValueError("solvers: need at least one solver")
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
            grad_norm, hess_min, is_global = res.grad_norm, None, None
            if certify:
                scale = res.grad_scale if np.isfinite(res.grad_scale) else None
                cert = certificate(problem, res.M, gtol_scale=scale)
                grad_norm, hess_min = cert.grad_norm, cert.hess_min
                is_global = cert.global_optimum
            rows.append({"solver": name, "start": label, "cost": res.cost,
                         "converged": res.converged, "reason": res.reason,
                         "n_iter": res.n_iter, "time": res.time, "counts": res.counts,
                         "grad_norm": grad_norm, "hess_min": hess_min, "global": is_global,
                         "improvement": None if f_heur is None
                         else -(res.cost - f_heur) / max(abs(f_heur), 1e-300)})
            bar.update()
    bar.close()
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
    for i, key in enumerate(keys):
        rows[i]["sin_to_A"] = problem.manifold.change(reps[0], results[key].M)
    k = len(reps)
    dist = np.array([[problem.manifold.change(reps[a], reps[b]) for b in range(k)]
                     for a in range(k)])
    return Comparison(rows=rows, results=results,
                      answers={_label(j): rep for j, rep in enumerate(reps)},
                      answer_distances=dist, heuristic_cost=f_heur,
                      meta={"objective": repr(objective), "starts": [s for s, _ in named],
                            "seed": seed, "stopping": stopping})
