"""The ``ldr`` command line: compare solvers on a method and a dataset.

    ldr demo                                  # orthogonal LDA on wine: every solver, 3 starts
    ldr compare --method lda --data wine --components 2 \\
                --solvers gradient,trust-region,ism --plot out.png
    ldr compare --method pca --data my.csv --components 3 --markdown
    ldr compare --method wda --data digits --components 2 --solvers scf,trust-region

``--data`` is one of scikit-learn's bundled datasets (wine, breast_cancer, digits, iris;
standardized per feature) or a ``.csv`` / ``.npy`` file of rows.  For a supervised method the
file's label column (``--label-column``, default the last) holds the classes; for an
unsupervised one every column is a feature unless ``--label-column`` is given.  A CSV may
start with one header line.

``--solvers`` is a comma-separated list; ``a+b`` chains two solvers (``ism+trust-region``:
ISM, then the trust region from where it stopped).  The table has, per run, the cost, the
normalized improvement over the eigenvector heuristic (survey Eq. 28, positive is better),
which answer the run reached (A is the best), iterations, time, the optimality certificate
and the stopping reason; then the same summarized per solver.  Errors are one line on stderr
and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Callable, Sequence

import numpy as np

from ldr import datasets

#: method name → (builder(X, y, r, args) -> objective, needs labels, description)
METHODS: dict[str, tuple[Callable, bool, str]] = {}


def _method(name: str, supervised: bool, description: str):
    def register(builder):
        METHODS[name] = (builder, supervised, description)
        return builder
    return register


@_method("lda", True, "orthogonal LDA, −tr(MᵀS_bM)/tr(MᵀS_wM)")
def _lda(X, y, r, args):
    from ldr.objectives import LDA

    return LDA(X, y, r, reg=args.reg)


@_method("pca", False, "PCA, −tr(MᵀCM)")
def _pca(X, y, r, args):
    from ldr.objectives import PCA

    return PCA(X, r)


@_method("hsic", True, "supervised HSIC with a Gaussian kernel, −tr(Γ K_XM)")
def _hsic(X, y, r, args):
    from ldr.objectives import HSIC

    return HSIC.supervised(X, y, r)


@_method("wda", True, "Wasserstein discriminant analysis (trace ratio; pencil for SCF)")
def _wda(X, y, r, args):
    from ldr.objectives import WDA

    return WDA(X, y, r, reg=args.reg if args.reg > 0 else 1.0)


@_method("maf", False, "maximum autocorrelation factors (rows in time order), lag 1")
def _maf(X, y, r, args):
    from ldr.objectives import MAF

    return MAF(X, r, reg=args.reg)


@_method("sfa", False, "slow feature analysis (rows in time order)")
def _sfa(X, y, r, args):
    from ldr.objectives import SFA

    return SFA(X, r, reg=args.reg)


@_method("lpp", False, "locality preserving projections, 10-NN heat-kernel graph")
def _lpp(X, y, r, args):
    from ldr.objectives import LPP

    return LPP(X, r, n_neighbors=10, reg=args.reg)


@_method("npe", False, "neighbourhood preserving embedding, 10-NN graph")
def _npe(X, y, r, args):
    from ldr.objectives import NPE

    return NPE(X, r, n_neighbors=10, reg=args.reg)


@_method("mds", False, "metric MDS: Kruskal-Shepard stress of the projection")
def _mds(X, y, r, args):
    from ldr.objectives import MDS

    return MDS(X, r)


@_method("ppca", False, "probabilistic PCA, negative log-likelihood on R^{d×r}")
def _ppca(X, y, r, args):
    from ldr.objectives import PPCA

    return PPCA(X, r)


@_method("fa", False, "factor analysis, negative log-likelihood on R^{d×r} × R^d")
def _fa(X, y, r, args):
    from ldr.objectives import FactorAnalysis

    return FactorAnalysis(X, r)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"ldr: error: {message} (see `{self.prog} --help`)\n")


def load_data(spec: str, supervised: bool, label_column: int | None
              ) -> tuple[np.ndarray, np.ndarray | None, str]:
    """``(X, y, name)`` from a bundled dataset's name or a .csv / .npy file."""
    if spec in datasets.BUNDLED:
        X, y = datasets.load(spec)
        return X, y, spec
    path = pathlib.Path(spec)
    if path.suffix.lower() not in (".csv", ".npy"):
        raise ValueError(f"--data: {spec!r} is neither a bundled dataset "
                         f"({', '.join(datasets.BUNDLED)}) nor a .csv/.npy file")
    if not path.is_file():
        raise ValueError(f"--data: no such file: {spec}")
    if path.suffix.lower() == ".npy":
        data = np.load(path, allow_pickle=False)
    else:
        try:
            data = np.loadtxt(path, delimiter=",", ndmin=2)
        except ValueError:
            try:  # one header line
                data = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1)
            except ValueError as exc:
                raise ValueError(f"--data: {spec} is not a numeric CSV ({exc})") from None
    data = np.asarray(data, dtype=float)
    if data.ndim != 2 or data.shape[1] < 2:
        raise ValueError(f"--data: expected a 2-d table with at least two columns, "
                         f"got shape {data.shape}")
    if label_column is None and supervised:
        label_column = -1
    if label_column is None:
        return data, None, path.name
    if not -data.shape[1] <= label_column < data.shape[1]:
        raise ValueError(f"--label-column: {label_column} is out of range for "
                         f"{data.shape[1]} columns")
    y = data[:, label_column]
    X = np.delete(data, label_column % data.shape[1], axis=1)
    return X, y, path.name


def _solvers(spec: str) -> list:
    out = []
    for item in spec.split(","):
        parts = [p.strip() for p in item.split("+") if p.strip()]
        if not parts:
            raise ValueError(f"--solvers: empty solver name in {spec!r}")
        out.append(parts[0] if len(parts) == 1 else parts)
    return out


def run_compare(args) -> tuple:
    """Build the objective from ``args``, run :func:`ldr.compare`; ``(comparison, header)``."""
    from ldr.compare import compare
    from ldr.solvers import REGISTRY

    builder, supervised, description = METHODS[args.method]
    X, y, name = load_data(args.data, supervised, args.label_column)
    solvers = _solvers(args.solvers)
    for s in solvers:
        for part in [s] if isinstance(s, str) else s:
            if part not in REGISTRY:
                raise ValueError(f"--solvers: unknown solver {part!r}; choose from "
                                 f"{', '.join(sorted(REGISTRY))}")
    if args.components < 1 or args.components >= X.shape[1]:
        raise ValueError(f"--components: need 1 <= r < d = {X.shape[1]} (the number of "
                         f"features of {name}), got {args.components}")
    obj = builder(X, y, args.components, args)
    starts = ["heuristic"] if args.starts == 0 else args.starts
    cmp = compare(obj, solvers, starts, seed=args.seed, gtol=args.gtol,
                  max_iter=args.max_iter, progress=None)
    header = (f"{args.method.upper()} on {name} (n={X.shape[0]}, d={X.shape[1]}, "
              f"r={args.components}): {description}; "
              f"{len(cmp.meta['starts'])} start(s), seed {args.seed}")
    return cmp, header


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def _report(cmp, header: str, args) -> None:
    md = args.markdown
    print(("## " if md else "") + header + "\n")
    print(cmp.table("run", markdown=md) + "\n")
    print(cmp.table("solver", markdown=md, notes=False))
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


def _add_compare_options(p: argparse.ArgumentParser, method: str, data: str, solvers: str,
                         starts: int) -> None:
    p.add_argument("--method", default=method, choices=sorted(METHODS),
                   help=f"objective (default {method})")
    p.add_argument("--data", default=data,
                   help=f"bundled dataset ({', '.join(datasets.BUNDLED)}) or a .csv/.npy "
                        f"file (default {data})")
    p.add_argument("--components", "-r", type=int, default=2,
                   help="subspace dimension r (default 2)")
    p.add_argument("--solvers", default=solvers,
                   help=f"comma-separated; a+b chains (default {solvers})")
    p.add_argument("--starts", type=int, default=starts,
                   help=f"random starts per solver; 0 = the heuristic (default {starts})")
    p.add_argument("--seed", type=int, default=0, help="seed of the starts (default 0)")
    p.add_argument("--reg", type=float, default=0.0,
                   help="WDA: Sinkhorn reg (0 → 1.0); LDA, MAF, SFA, LPP, NPE: shrinkage of "
                        "the denominator's scatter, in [0, 1]")
    p.add_argument("--label-column", type=int, default=None,
                   help="column of the labels in a file (default: last, for supervised "
                        "methods)")
    p.add_argument("--gtol", type=float, default=1e-8,
                   help="gradient-norm tolerance, relative to the problem's gradient scale "
                   "(ldr.solve)")
    p.add_argument("--max-iter", type=int, default=1000, help="iterations per run")
    p.add_argument("--plot", metavar="PNG", help="write the cost-gap plot (survey Fig. 4)")
    p.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="ldr", description=__doc__.split("\n")[0],
                     epilog="methods: " + "; ".join(f"{k}: {v[2]}" for k, v in METHODS.items()))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("compare", help="run several solvers from the same starts and compare")
    _add_compare_options(p, "lda", "wine", "gradient,trust-region,ism", 3)
    p = sub.add_parser("demo", help="orthogonal LDA on wine with every solver (the README's "
                                    "first command)")
    _add_compare_options(p, "lda", "wine", "trust-region,gradient,ism,scf,pymanopt", 3)
    args = parser.parse_args(argv)
    try:
        cmp, header = run_compare(args)
        _report(cmp, header, args)
    except (ValueError, OSError) as exc:
        msg = " ".join(str(exc).split())
        print(f"ldr: error: {msg}", file=sys.stderr)
        return 2
    if args.command == "demo" and cmp.heuristic_cost is not None:
        best = min(cmp.rows, key=lambda row: row["cost"])
        print(f"\nThe best answer ({best['solver']}) improves on the eigenvector heuristic by "
              f"{best['improvement']:.2%} of its cost (survey Eq. 28).")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
