"""The ``ldr`` command line: compare solvers on a method and a dataset.

::

    ldr demo                                  # orthogonal LDA on wine: every solver, 3 starts
    ldr compare --method lda --data wine --components 2 \\
                --solvers gradient,trust-region,ism --plot out.png
    ldr compare --data iris.csv                           # a header and string labels
    ldr compare --method pca --data iris.csv              # the species column set aside
    ldr compare --method nca --data big.csv --max-time 120 --memory-limit 4GB
    ldr compare --method wda --data wine --components 2 --wide

``--data`` is one of scikit-learn's bundled datasets (wine, breast_cancer, digits, iris;
standardized per feature), a ``.csv`` / ``.npy`` file of rows, or a glob of Parquet or CSV
files (``'logs/*.parquet'``, read with Dask).  A CSV's delimiter is ``,`` ``;`` tab or ``|``,
detected on its first lines (``--delimiter`` sets it); its first line is a header when
``--header yes``, or (``auto``, the default) when some column's first cell is not a number and
its other cells are.  For a supervised method the file's label column (``--label-column``: an
index, negative from the end, or a CSV header's column name; default the last) holds the
classes, numbers or strings; for an unsupervised one every column is a feature, except a last
column of text with repeated values (class names), which is set aside with a note on stderr.
Every feature column must hold numbers: the error names the first that does not, and a
missing value (an empty cell, NA, NaN, ...) by its row and column; complex ``.npy`` data are
refused, not truncated to their real part.

Budgets.  ``--memory-limit`` (e.g. ``256MB``; default half of the memory the machine has
available, :mod:`ldr.cli.budget`) bounds the data and, for the methods that hold n×n arrays
(nca, lmnn, mds, ksdr, hsic, wda), those arrays as the method declares them (the ``memory``
of its :class:`~ldr.core.objective.Method`): a table whose estimate exceeds it is refused before
anything is computed, with the memory needed.  ``--max-time`` is each run's time budget, its
certificate included; by default the whole comparison has 45 seconds, shared equally among the
runs not yet done.  A run that hits a budget says "budget" in the verdict column (the reason
with ``--wide``); none runs unbounded.  While it works, the command prints on stderr one line
per run: on a terminal rewritten in place with the solver, start, elapsed time and cost, then
its final line; elsewhere only the final line.

Data larger than memory: a ``.npy`` file is memory-mapped and a glob is read by Dask, and
the methods whose objective depends on the data only through d×d statistics (lda, pca, maf,
sfa, ppca, fa, cca, tcca) read them in one pass over row chunks (:mod:`ldr.data.rows`) of an
eighth of ``--memory-limit`` (at most 64 MiB), with a progress bar over the chunks on stderr;
Dask's CSV blocks are the same size, Parquet partitions are the files' row groups.

``--solvers`` is a comma-separated list; ``a+b`` chains two solvers (``ism+trust-region``:
ISM, then the trust region from where it stopped).  Its default, ``auto``, is the solvers
that the method supports (ISM needs a Φ-oracle, SCF a pencil, both a Stiefel or Grassmann
manifold: :func:`supported_solvers`) among gradient, trust-region and ism (``demo``: every
solver), plus the method's default solver (:func:`ldr.driver.loop.default_solver`); a solver the
method does not support is refused with the list of those it does.

Output (:meth:`ldr.driver.compare.Comparison.table`): per run, the cost, the improvement over the
eigenvector heuristic (survey Eq. 28, positive is better), which answer the run reached (A
has the lowest cost), its distance to A and a one-word verdict from the optimality
certificate; then per solver how many runs converged and reached A, with median iterations
and time; then a legend of the columns (``--no-legend`` leaves it out); last, one conclusion:
the best answer, how many runs reached it, whether it is certified and how it compares with
the heuristic.  The default tables fit 80 columns; ``--wide`` adds per run the iterations,
time, gradient norm, smallest Hessian eigenvalue, global verdict and stopping reason.
Answers are told apart as fits the manifold (:func:`ldr.driver.answers.answer_distance`): by the
largest principal-angle sine on Grassmann, the spectral norm of the difference on Stiefel,
and the relative cost difference on a manifold with a Euclidean factor.

Every option value is checked (a bad one is an error, never replaced by a default), and every
error — a bad option, unreadable data, or one raised deep inside a method (an overflow, an
oracle error, a singular matrix, running out of memory) — is one line on stderr with exit
status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import textwrap
import warnings
from collections.abc import Sequence

import numpy as np

from ldr.cli import budget as cli_budget
from ldr.cli import options as cli_options
from ldr.core.errors import ParameterError, UnboundedObjective
from ldr.data.files import load_table
from ldr.data.statistics import Moments
from ldr.data.text import DataNote
from ldr.driver import registry

#: a parameter of :func:`ldr.data.files.load_table` → the option that sets it
_LOAD_OPTIONS = {"source": "--data", "label_column": "--label-column", "header": "--header",
                 "memory_limit": "--memory-limit", "delimiter": "--delimiter"}
#: options that only some methods take (``Method.options``)
_METHOD_OPTIONS = ("reg",)


# --- solvers -----------------------------------------------------------------------------
def _solvers(spec: str) -> list:
    out = []
    for item in spec.split(","):
        parts = [p.strip() for p in item.split("+")]
        if not all(parts):
            raise ValueError(f"--solvers: empty solver name in {spec!r}")
        out.append(parts[0] if len(parts) == 1 else parts)
    return out


def _name(solver) -> str:
    return solver if isinstance(solver, str) else "+".join(solver)


def _unsupported(solver, problem) -> str | None:
    """Why ``solver`` (a name or a chain of names) cannot solve ``problem``, or None."""
    from ldr.solvers import get_solver

    for part in [solver] if isinstance(solver, str) else solver:
        try:
            get_solver(part).check_problem(problem)
        except ValueError as exc:
            return str(exc)
    return None


def supported_solvers(objective, candidates: Sequence) -> list:
    """The solvers of ``candidates`` (names or chains of names) that can solve ``objective``,
    then its default (:func:`ldr.driver.loop.default_solver`, a chain as a list) if it is not
    among them yet."""
    from ldr.core.problem import Problem
    from ldr.driver.loop import default_solver

    problem = Problem(objective)
    chosen = [s for s in candidates if _unsupported(s, problem) is None]
    default = default_solver(objective)
    default = default if isinstance(default, str) else list(default)
    if isinstance(default, str) or all(isinstance(s, str) for s in default):
        if default not in chosen and _unsupported(default, problem) is None:
            chosen.append(default)
    return chosen


#: ``--solvers auto``: the candidates, filtered by what the method supports
#: (:func:`supported_solvers`); None: every registered solver
AUTO = {"compare": ["gradient", "trust-region", "ism"], "demo": None}


def _demo_order() -> list[str]:
    from ldr.solvers import REGISTRY

    first = ["trust-region", "gradient", "conjugate-gradient", "ism", "scf", "pymanopt"]
    return [s for s in first if s in REGISTRY] + [s for s in REGISTRY if s not in first]


def _option_error(exc: ParameterError, method) -> ParameterError:
    """An objective's or the loader's error about one of its parameters, under the name of the
    command-line option that set it (``r`` → ``--components``, RRR's ``alpha`` → ``--reg``)."""
    options = {keyword: f"--{option.replace('_', '-')}" for option, keyword in
               method.options.items()}
    option = {**_LOAD_OPTIONS, **options, "r": "--components"}.get(exc.param)
    return exc if option is None else exc.renamed(option)


def _memory_limit(args) -> tuple[int | None, str]:
    """``--memory-limit`` in bytes, and how it was chosen."""
    if args.memory_limit != "auto":
        return args.memory_limit, "--memory-limit"
    return cli_budget.default_memory_limit()


def build_objective(args):
    """The objective of ``--method`` on ``--data`` with the options given
    (:func:`ldr.driver.registry.from_table`), after the memory check
    (:func:`ldr.cli.budget.check_memory`); ``(objective, n, d, name, memory)``, ``memory``
    a line on the memory needed and the limit."""
    cls = registry.get(args.method)
    method = cls.method
    given = {o: getattr(args, o) for o in _METHOD_OPTIONS if getattr(args, o) is not None}
    for option in given:
        if option not in method.options:
            raise ParameterError(f"--{option}", f"the {args.method} method does not use it; "
                                                "leave it out")
    chunked = dict(method.chunks) if method.chunked and method.labels is None else None
    limit, how = _memory_limit(args)
    try:
        X, y, name = load_table(args.data, method.supervised, args.label_column, chunked,
                                limit, args.header, args.delimiter)
    except ParameterError as exc:
        raise _option_error(exc, method) from None
    n, d = (X.n, X.d) if isinstance(X, Moments) else X.shape
    if args.components >= d:
        raise ParameterError("--components", f"need 1 <= r < d = {d} (the number of "
                                             f"features of {name}), got {args.components}")
    memory = f"memory limit {cli_budget.size(limit)} ({how})" if limit else how
    if not isinstance(X, Moments):
        need = cli_budget.check_memory(args.method, method.memory, n, X.nbytes,
                                       y if method.supervised else None, limit, how,
                                       registry.names(chunked=True))
        memory = f"about {cli_budget.size(need)} needed, {memory}"
    try:
        obj = registry.from_table(args.method, X, y, args.components, **given)
    except UnboundedObjective as exc:  # the estimator's answer is reported instead
        exc.table = (X, y, name)
        raise
    except ParameterError as exc:
        raise _option_error(exc, method) from None
    return obj, n, d, name, memory


def run_compare(args) -> tuple:
    """Build the objective from ``args``, run :func:`ldr.compare`; ``(comparison, header)``."""
    from ldr.core.problem import Problem
    from ldr.driver.compare import compare
    from ldr.solvers import REGISTRY

    if args.solvers != "auto":  # names are checked before the data are read
        for s in _solvers(args.solvers):
            for part in [s] if isinstance(s, str) else s:
                if part not in REGISTRY:
                    raise ParameterError("--solvers", f"unknown solver {part!r}; choose from "
                                         f"{', '.join(sorted(REGISTRY))} (or auto)")
    obj, n, d, name, memory = build_objective(args)
    if args.solvers == "auto":
        candidates = AUTO.get(args.command, AUTO["compare"])
        solvers = supported_solvers(obj, _demo_order() if candidates is None else candidates)
    else:
        solvers = _solvers(args.solvers)
        problem = Problem(obj)
        for s in solvers:
            why = _unsupported(s, problem)
            if why is not None:
                ok = ", ".join(_name(t) for t in supported_solvers(obj, _demo_order()))
                raise ParameterError("--solvers", f"{_name(s)} cannot solve {args.method}: "
                                     f"{why}; the solvers that can: {ok} (--solvers auto picks "
                                     "them)")
    starts = ["heuristic"] if args.starts == 0 else args.starts
    n_runs = len(solvers) * (1 if args.starts == 0 else args.starts)
    if args.max_time == "auto":
        budget = {"time_budget": cli_budget.TIME_BUDGET}
        timing = (f"time budget {cli_budget.TIME_BUDGET:g} s shared among the runs "
                  "(--max-time sets one per run)")
    else:
        budget = {"max_time": args.max_time}
        timing = f"time budget {args.max_time:g} s per run"
    print(f"ldr: {args.method} on {name}: {n_runs} run(s); {timing}; {memory}",
          file=sys.stderr)
    cmp = compare(obj, solvers, starts, random_state=args.random_state, tol=args.tol,
                  max_iter=args.max_iter, progress=cli_budget.ProgressLines(), **budget)
    header = (f"{args.method.upper()} on {name} (n={n}, d={d}, "
              f"r={args.components}): {obj.method.summary}; "
              f"{len(cmp.meta['starts'])} start(s), random_state {args.random_state}")
    return cmp, header


# --- output ------------------------------------------------------------------------------
def _report_null_space(exc: UnboundedObjective, args) -> None:
    """WDA where at least r directions have no within-class spread: no objective for the
    solvers (the trace ratio is unbounded), so the answer of ``WassersteinDA`` — the one the
    estimator gives on these data — is printed instead of a comparison."""
    from ldr.estimators import WassersteinDA

    X, y, name = exc.table
    est = WassersteinDA(n_components=args.components).fit(X, y)
    r = args.components
    lines = [f"WDA on {name} (n={X.shape[0]}, d={X.shape[1]}, r={r}): every class is a single "
             f"point along at least r = {r} directions of the data's span, so the trace ratio "
             "is unbounded there and there is no maximum for solvers to compare.",
             f"WassersteinDA's answer (solver {est.result_.solver!r}, trace ratio "
             f"{est.ratio_}): {est.result_.reason}.",
             "components (one column per direction, one row per feature):"]
    print("\n".join(textwrap.fill(line, _width()) for line in lines))
    print(np.array2string(est.M_, precision=4, suppress_small=True))


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def _width() -> int:
    """Text wraps to the terminal's width, kept between 80 and 100 columns (80 when the
    output is not a terminal)."""
    return min(100, max(80, shutil.get_terminal_size((80, 24)).columns))


def _report(cmp, header: str, args) -> None:
    md = args.markdown
    width = _width()
    print(("## " + header if md else textwrap.fill(header, width)) + "\n")
    print(cmp.table("run", markdown=md, wide=args.wide, width=width) + "\n")
    print(cmp.table("solver", markdown=md, notes=False, width=width))
    if args.legend:
        legend = cmp.legend(wide=args.wide, width=width)
        print("\n" + (legend if not md else "```\n" + legend + "\n```"))
    conclusion = cmp.conclusion(budget_hint="--max-time or --max-iter")
    print("\n" + (conclusion if md else textwrap.fill(conclusion, width)))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        axes = cmp.plot()
        axes[0].figure.suptitle(header, fontsize="medium")
        axes[0].figure.savefig(args.plot, dpi=120)
        plt.close(axes[0].figure)
        print(f"\nplot written to {args.plot}")
    if args.json:
        rows = [{k: v for k, v in row.items() if k != "counts"} for row in cmp.rows]
        pathlib.Path(args.json).write_text(json.dumps(
            {"header": header, "heuristic_cost": cmp.heuristic_cost, "runs": rows,
             "summary": cmp.summary()}, indent=2, default=_json_default), encoding="utf-8")
        print(f"table written to {args.json}")


def _one_line(exc: BaseException) -> str:
    """An exception as one line: the message, with the type for what is not a ValueError /
    OSError (those name their cause), and a remedy for running out of memory."""
    msg = " ".join(str(exc).split())
    if isinstance(exc, MemoryError):
        return (f"out of memory ({msg or 'MemoryError'}): the request is too large for this "
                "machine; use fewer rows or features, a smaller --components, or a method that "
                f"reads the data in chunks ({', '.join(registry.names(chunked=True))}) with "
                "--memory-limit")
    if isinstance(exc, (OverflowError, FloatingPointError)):
        return (f"{type(exc).__name__}: {msg}: a floating-point overflow in the method's "
                "computation; rescale the data (e.g. standardize each feature) and retry "
                "(--debug shows the traceback)")
    if isinstance(exc, (ParameterError, OSError)) or (isinstance(exc, ValueError) and type(
            exc).__module__ in ("builtins", "ldr.core.problem")):
        return msg
    return f"{type(exc).__name__}: {msg} (--debug shows the traceback)"


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    if issubclass(category, DataNote):  # what the reader decided, not a problem
        print(f"ldr: note: {text}", file=sys.stderr)
    else:
        print(f"ldr: warning: {category.__name__}: {text}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no file descriptor (captured output)
        pass


def _parser() -> cli_options.Parser:
    """The argument parser; its methods and their summaries come from :mod:`ldr.driver.registry`,
    its help texts from this module's docstring, as plain text (:func:`ldr.cli.options.plain`;
    the docstring stays reStructuredText for the docs)."""
    width = _width() - 2
    title, literal, examples, *manual = __doc__.split("\n\n")
    pad = max(map(len, registry.METHODS)) + 2
    methods = "methods (--method):\n" + "\n".join(f"  {k:<{pad}}{c.method.summary}" for k, c
                                                  in registry.METHODS.items())
    raw = argparse.RawDescriptionHelpFormatter
    parser = cli_options.Parser(
        prog="ldr", formatter_class=raw, epilog=methods,
        description=cli_options.plain(title + "\n\n" + examples, width)
        + "\n\n`ldr compare --help`: the data it reads, its budgets, its output and options.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=cli_options.Parser)
    manual = cli_options.plain("\n\n".join([examples, *manual]), width)
    for name, text in (("compare", "run several solvers from the same starts and compare"),
                       ("demo", "orthogonal LDA on the bundled wine table with every solver")):
        p = sub.add_parser(name, help=text, description=text + ".\n\n" + manual,
                           epilog=methods, formatter_class=raw)
        auto = "every solver" if AUTO[name] is None else ", ".join(AUTO[name])
        cli_options.add_compare_options(p, "lda", "wine", 3, auto)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv``: the arguments, default ``sys.argv[1:]``); returns the
    exit status: 0, or 2 after an error printed as one line on stderr (argparse's own errors
    exit with status 2 through ``SystemExit``)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            if not args.debug:  # one line per warning, each shown once
                warnings.simplefilter("once")
                warnings.showwarning = _show_warning
            try:
                cmp, header = run_compare(args)
            except UnboundedObjective as exc:
                if args.method != "wda" or not hasattr(exc, "table"):
                    raise
                _report_null_space(exc, args)
                return 0
            _report(cmp, header, args)
    except KeyboardInterrupt:
        print("ldr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) closed the pipe: not an error
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - every error is one line unless --debug
        if args.debug:
            raise
        print(f"ldr: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    return 0
