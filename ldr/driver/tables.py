"""The text of a comparison (:class:`ldr.Comparison`): its columns, cells, legend and
conclusion.

:data:`RUN_COLUMNS` and :data:`SUMMARY_COLUMNS` are the tables' columns, :data:`LEGEND` and
:data:`SUMMARY_LEGEND` what they mean, :data:`SOLVER_NOTES` what a solver computes when it is
not the objective's minimum (SCF: the ratio trace).  :func:`legend_text` explains the columns
of one comparison in the words of its manifold, :func:`conclusion` says in one sentence which
answer is best, how many runs reached it, whether it is certified and how it compares with the
eigenvector heuristic.
"""

from __future__ import annotations

import textwrap

import numpy as np

from ldr.driver.answers import DISTANCES

#: Columns of :meth:`ldr.Comparison.table`, as (key, header, format): the first ``NARROW``
#: are the default table, which answers "which answer did each run reach, and is it optimal"
#: in 80 columns (solver names up to 18 characters); ``wide=True`` adds iterations, time,
#: the certificate's numbers and the stopping reason.  The header of ``to_A`` depends on how
#: answers are compared (``ldr.driver.answers.DISTANCES``).
RUN_COLUMNS = (
    ("solver", "solver", "{}"), ("start", "start", "{}"), ("cost", "cost", "{:.10g}"),
    ("improvement", "vs heur.", "{:+.3%}"), ("answer", "answer", "{}"),
    ("to_A", "to A", "{:.1e}"), ("verdict", "verdict", "{}"), ("n_iter", "iters", "{:d}"),
    ("time", "time [s]", "{:.4f}"), ("grad_norm", "‖grad‖", "{:.1e}"),
    ("hess_min", "λmin(Hess)", "{:.2e}"), ("global", "global opt.", "{}"),
    ("converged", "converged", "{}"), ("reason", "reason", "{}"),
)
NARROW = 7
#: Columns of the per-solver summary (:meth:`ldr.Comparison.summary`): how fast each solver
#: is (medians over its runs) and how often it reached the best answer A.
SUMMARY_COLUMNS = (
    ("solver", "solver", "{}"), ("runs", "runs", "{:d}"), ("converged", "conv.", "{}"),
    ("at_A", "at A", "{}"), ("best_cost", "best cost", "{:.10g}"),
    ("improvement", "vs heur.", "{:+.3%}"), ("n_iter", "iters", "{:g}"),
    ("time", "time [s]", "{:.4f}"),
)

#: What each verdict means; the legend lists those in the table.
VERDICTS = {
    "global min": "certified global optimum",
    "not global": "the objective's global test fails there",
    "local min": "gradient ≈ 0 and Hessian ⪰ 0",
    "local min (flat)": "gradient ≈ 0 and the Hessian's negative eigenvalues within √gtol of 0 "
                        "relative to its largest: flat directions, not a saddle",
    "plateau": "gradient ≈ 0 and every Hessian eigenvalue within √gtol of 0 relative to the "
               "problem's gradient scale: the cost is flat there, the second-order test "
               "cannot tell",
    "saddle": "gradient ≈ 0 and a clearly negative Hessian eigenvalue",
    "not critical": "the solver converged on its own rule (e.g. SCF's fixed point) where "
                    "the gradient is not 0",
    "converged": "converged; its certificate was not computed (out of time)",
    "budget": "stopped by its time or iteration budget, or not run for want of time (the "
              "reason: --wide, table(wide=True))",
    "NOT conv.": "stalled or met a non-finite value (the reason: --wide, table(wide=True))",
}
#: What each column means (the legend of :meth:`ldr.Comparison.legend`).
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
    "verdict": "a word from the run's convergence and its certificate:",
    "grad_norm": "Riemannian gradient norm at the answer",
    "hess_min": "smallest eigenvalue of the Riemannian Hessian at the answer (≥ 0 at a "
                "local minimum)",
    "global": "whether the objective's global test (quotients of traces, PCA) certifies "
              "the global optimum; – where no test is known",
    "converged": "whether a convergence rule, not a budget, stopped the run",
    "reason": "the stopping rule that fired",
}
#: The per-solver summary's columns (:meth:`ldr.Comparison.summary`); its "vs heur.",
#: "iters" and "time [s]" are the medians over the solver's runs.
SUMMARY_LEGEND = {
    "runs": "the solver's runs (one per start)",
    "converged": "how many of its runs converged",
    "at_A": "how many of its runs reached answer A",
    "best_cost": "the solver's lowest cost",
}
#: What a solver computes when it is not a minimum of the cost (a stage of a chain counts).
SOLVER_NOTES = {
    "scf": "SCF solves the ratio trace of the objective's pencil (A, B) — the generalized "
           "eigenvectors of (A(M), B(M)) at a fixed point, a different problem from the "
           "cost's trace ratio: its fixed point is not a critical point of the cost (rows "
           "'not global' or 'not critical'), and for a constant pencil (LDA) it is the "
           "eigenvector heuristic itself (+0.000%)",
}
_MEDIAN = "; per solver: the median over its runs"


def cell(value, fmt: str) -> str:
    """One table cell: – for a missing value, yes/NO for a bool, rounding noise as 0."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return "yes" if value else "NO"
    if "%" in fmt and abs(value) < 5e-6:  # rounding noise, not a sign
        value = 0.0
    return fmt.format(value)


def render(records: list[dict], columns, markdown: bool) -> str:
    """``records`` as an aligned text table or a Markdown table of ``columns``."""
    header = [h for _, h, _ in columns]
    body = [[cell(rec.get(k), f) for k, _, f in columns] for rec in records]
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


def manifold_words(geom) -> str:
    """The manifold as a reader names it: ``Grassmann(13, 2)``, ``R^{8×2}``, products with ×."""
    return str(geom)


def legend_text(cmp, pers, columns, wide: bool, width: int) -> str:
    """The legend of ``cmp`` (a :class:`ldr.Comparison`): one entry per column of the tables
    ``pers`` (``columns(per, wide)`` lists them), then what its solvers compute where that
    is not the cost's minimum (:data:`SOLVER_NOTES`), wrapped to ``width``."""
    tol = cmp.meta.get("cost_tol" if cmp.distance == "cost" else "same_tol", 1e-4)
    to_A = DISTANCES[cmp.distance][2].format(tol=tol,
                                             manifold=cmp.meta.get("manifold", "the manifold"))
    seen = [v for v in VERDICTS if any(row["verdict"] == v for row in cmp.rows)]
    verdicts = LEGEND["verdict"] + " " + "; ".join(f"{v}: {VERDICTS[v]}" for v in seen)
    texts = {"run": dict(LEGEND, to_A=to_A, verdict=verdicts),
             "solver": dict(LEGEND, **SUMMARY_LEGEND)}
    entries: dict[str, str] = {}
    for one in pers:
        for key, header, _ in columns(one, wide):
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
    stages = {part.strip() for name in cmp.solvers for part in name.split("→")}
    notes = [textwrap.fill(text, width, initial_indent=f"  {name:<{pad}}",
                           subsequent_indent=" " * (pad + 2))
             for name, text in SOLVER_NOTES.items() if name in stages]
    return "columns:\n" + "\n".join(lines) + ("\nsolvers:\n" + "\n".join(notes) if notes
                                              else "")


def conclusion(cmp, budget_hint: str = "max_time or max_iter") -> str:
    """One paragraph on ``cmp``: the best answer, how many runs reached it and how they
    ended, whether it is certified, and its improvement over the eigenvector heuristic (or
    that the method has none); ``budget_hint`` names what to raise when runs hit a budget."""
    done = [row for row in cmp.rows if row["cost"] is not None]
    if not done:
        return (f"No run was made: every run was out of its time budget before it started "
                f"(raise {budget_hint}).")
    at_A = [row for row in done if row["answer"] == "A"]
    best = min(at_A, key=lambda row: row["cost"])
    verdicts = sorted({row["verdict"] for row in at_A})
    certified = [v for v in verdicts if v in ("global min", "local min")]
    text = (f"Best answer: A, cost {best['cost']:.10g} ({best['solver']} from "
            f"{best['start']}), reached by {len(at_A)} of {len(cmp.rows)} runs: ")
    if "global min" in certified:
        text += "a certified global minimum"
    elif certified:
        text += "a certified local minimum (no global test is known for this cost)"
    else:
        text += f"not certified (verdict: {', '.join(verdicts)})"
    stopped = sum(row["verdict"] == "budget" for row in cmp.rows)
    if stopped:
        text += (f"; {stopped} run{'s' if stopped > 1 else ''} stopped at a budget or did not "
                 f"run (raise {budget_hint})")
    if cmp.heuristic_cost is None:
        return text + ". The method has no eigenvector heuristic to compare with."
    imp = best["improvement"]
    if abs(imp) < 5e-6:
        return text + ". It equals the eigenvector heuristic's cost (survey Eq. 28)."
    word = "improves on" if imp > 0 else "is worse than"
    return text + (f". It {word} the eigenvector heuristic by {abs(imp):.2%} of its cost "
                   "(survey Eq. 28).")
