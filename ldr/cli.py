"""The ``ldr`` command line: compare solvers on a method and a dataset.

    ldr demo                                  # orthogonal LDA on wine: every solver, 3 starts
    ldr compare --method lda --data wine --components 2 \\
                --solvers gradient,trust-region,ism --plot out.png
    ldr compare --method pca --data my.csv --components 3 --markdown
    ldr compare --method wda --data digits --components 2 --solvers scf,trust-region

``--data`` is one of scikit-learn's bundled datasets (wine, breast_cancer, digits, iris;
standardized per feature), a ``.csv`` / ``.npy`` file of rows, or a glob of Parquet or CSV
files (``'logs/*.parquet'``, read with Dask).  For a supervised method the file's label column
(``--label-column``, default the last) holds the classes; for an unsupervised one every
column is a feature unless ``--label-column`` is given.  A CSV may start with one header line.

Data larger than memory: a ``.npy`` file is memory-mapped and a glob is read by Dask, and
the methods whose objective depends on the data only through d×d statistics (lda, pca, maf,
sfa, ppca, fa) read them in one pass over row chunks (:mod:`ldr.rows`), with a progress bar
over the chunks on stderr.  ``--memory-limit`` (e.g. ``256MB``) bounds that pass: chunks are
an eighth of it (a chunk and its few temporaries fit), Dask's CSV blocks the same; Parquet
partitions are the files' row groups.  The other methods need all rows in memory: they
load the data, or, when it would exceed ``--memory-limit``, stop with an error that states
the memory needed.

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
from ldr.rows import Moments

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


@_method("nca", True, "neighbourhood components analysis, −Σ_i p_i on R^{d×r}")
def _nca(X, y, r, args):
    from ldr.objectives import NCA

    return NCA(X, y, r)


@_method("lmnn", True, "large-margin DML (LMNN, smoothed hinge, 3 target neighbours) on R^{d×r}")
def _lmnn(X, y, r, args):
    from ldr.objectives import LargeMarginDML

    return LargeMarginDML(X, y, r)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"ldr: error: {message} (see `{self.prog} --help`)\n")


#: methods whose objective reads rows in chunks (ldr.rows): what their statistics need
CHUNKED = {"lda": {}, "pca": {}, "ppca": {}, "fa": {}, "maf": {"lag": 1},
           "sfa": {"lag": 1, "diff": True}}
_GLOB = set("*?[")


def parse_bytes(text: str) -> int:
    """``"256MB"``, ``"1.5GiB"``, ``"1e9"`` → bytes (K, M, G, T; with or without B/iB)."""
    t = text.strip().upper().replace("IB", "").rstrip("B").strip()
    scale = 1
    if t and t[-1] in "KMGT":
        scale, t = 1024 ** ("KMGT".index(t[-1]) + 1), t[:-1]
    try:
        value = float(t) * scale
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"--memory-limit: expected a size such as 256MB or 2GiB, got {text!r}")
    return int(value)


def _is_glob(spec: str) -> bool:
    return bool(_GLOB & set(spec)) or spec.lower().endswith((".parquet", ".pq"))


def load_data(spec: str, supervised: bool, label_column: int | None,
              chunked: dict | None = None, memory_limit: int | None = None):
    """``(X, y, name)`` from a bundled dataset's name, a .csv / .npy file or a glob.

    With ``chunked`` (the statistics a chunk-reading method needs: ``lag``, ``diff``), a
    .npy file or a glob is read in one pass over row chunks and X is the
    :class:`~ldr.rows.Moments` (y None: the labels are inside); otherwise X is an ndarray.
    """
    if spec in datasets.BUNDLED:
        X, y = datasets.load(spec)
        return X, y, spec
    if _is_glob(spec):
        return _load_dask(spec, supervised, label_column, chunked, memory_limit)
    path = pathlib.Path(spec)
    if path.suffix.lower() not in (".csv", ".npy"):
        raise ValueError(f"--data: {spec!r} is neither a bundled dataset "
                         f"({', '.join(datasets.BUNDLED)}) nor a .csv/.npy file or a glob of "
                         f".parquet/.csv files")
    if not path.is_file():
        raise ValueError(f"--data: no such file: {spec}")
    if path.suffix.lower() == ".npy":
        data = np.load(path, mmap_mode="r", allow_pickle=False)  # memory-mapped
        if data.dtype.kind not in "biuf":
            raise ValueError(f"--data: {spec} holds {data.dtype} values, not numbers")
    else:
        try:
            data = np.loadtxt(path, delimiter=",", ndmin=2)
        except ValueError:
            try:  # one header line
                data = np.loadtxt(path, delimiter=",", ndmin=2, skiprows=1)
            except ValueError as exc:
                raise ValueError(f"--data: {spec} is not a numeric CSV ({exc})") from None
    if data.ndim != 2 or data.shape[1] < 2:
        raise ValueError(f"--data: expected a 2-d table with at least two columns, "
                         f"got shape {data.shape}")
    label_column = _label_column(label_column, supervised, data.shape[1])
    if chunked is not None and isinstance(data, np.memmap):
        from ldr.rows import moments

        step = _chunk_bytes(memory_limit)
        stats = moments(_npy_chunks(data, label_column, step), progress=True,
                        chunk_bytes=step, **chunked)
        return stats, None, path.name
    _check_fits(data.shape[0] * (data.shape[1] - (label_column is not None)) * 8,
                memory_limit, f"{data.shape[0]} rows × {data.shape[1]} columns")
    data = np.asarray(data, dtype=float)
    if label_column is None:
        return data, None, path.name
    y = data[:, label_column]
    X = np.delete(data, label_column, axis=1)
    return X, y, path.name


def _label_column(label_column, supervised, n_columns):
    if label_column is None and supervised:
        label_column = -1
    if label_column is None:
        return None
    if not -n_columns <= label_column < n_columns:
        raise ValueError(f"--label-column: {label_column} is out of range for "
                         f"{n_columns} columns")
    return label_column % n_columns


def _chunk_bytes(memory_limit):
    from ldr.rows import MEMMAP_CHUNK_BYTES

    return MEMMAP_CHUNK_BYTES if memory_limit is None else max(1, memory_limit // 8)


def _check_fits(nbytes, memory_limit, what):
    if memory_limit is not None and nbytes > memory_limit:
        raise ValueError(
            f"--data: this method needs all rows in memory: {what} of float64 is "
            f"{nbytes / 2**20:.1f} MiB > --memory-limit {memory_limit / 2**20:.1f} MiB; the "
            f"methods that read the data in chunks are {', '.join(sorted(CHUNKED))}")


def _npy_chunks(data, label_column, chunk_bytes):
    """Row chunks of a memory-mapped table, split into (X, y) when it has a label column."""
    step = max(1, int(chunk_bytes // (8 * data.shape[1])))
    keep = np.arange(data.shape[1]) if label_column is None else \
        np.delete(np.arange(data.shape[1]), label_column)
    for start in range(0, data.shape[0], step):
        block = np.asarray(data[start:start + step], dtype=float)  # one chunk read
        yield block[:, keep] if label_column is None else (block[:, keep],
                                                           block[:, label_column])


def _load_dask(spec, supervised, label_column, chunked, memory_limit):
    import glob

    files = sorted(glob.glob(spec))
    if not files:
        raise ValueError(f"--data: no file matches {spec}")
    try:
        import dask.dataframe as dd
    except ImportError:
        raise ValueError("--data: reading a glob needs Dask: pip install "
                         "'ldr-manifold[dask]'") from None
    if all(f.lower().endswith((".parquet", ".pq")) for f in files):
        ddf = dd.read_parquet(files)
    elif all(f.lower().endswith(".csv") for f in files):
        with open(files[0], encoding="utf-8") as fh:
            first = fh.readline().split(",")
        try:
            [float(v) for v in first]
            header = None
        except ValueError:
            header = 0
        ddf = dd.read_csv(files, header=header, blocksize=_chunk_bytes(memory_limit))
    else:
        raise ValueError(f"--data: {spec} must match only .parquet or only .csv files")
    columns = list(ddf.columns)
    if len(columns) < 2:
        raise ValueError(f"--data: expected at least two columns, got {len(columns)}")
    label_column = _label_column(label_column, supervised, len(columns))
    table = ddf.to_dask_array()  # one array, so that X and y share its row blocks
    features = [i for i in range(len(columns)) if i != label_column]
    X = table[:, features]
    y = None if label_column is None else table[:, label_column]
    name = pathlib.Path(spec).name
    if chunked is not None:
        from ldr.rows import moments

        return moments(X, y, progress=True, **chunked), None, name
    _check_fits(sum(pathlib.Path(f).stat().st_size for f in files), memory_limit,
                f"the files ({len(files)}) on disk")
    return np.asarray(X.compute(), dtype=float), None if y is None else y.compute(), name


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
    limit = None if args.memory_limit is None else parse_bytes(args.memory_limit)
    X, y, name = load_data(args.data, supervised, args.label_column,
                           CHUNKED.get(args.method), limit)
    n, d = (X.n, X.d) if isinstance(X, Moments) else X.shape
    solvers = _solvers(args.solvers)
    for s in solvers:
        for part in [s] if isinstance(s, str) else s:
            if part not in REGISTRY:
                raise ValueError(f"--solvers: unknown solver {part!r}; choose from "
                                 f"{', '.join(sorted(REGISTRY))}")
    if args.components < 1 or args.components >= d:
        raise ValueError(f"--components: need 1 <= r < d = {d} (the number of "
                         f"features of {name}), got {args.components}")
    obj = builder(X, y, args.components, args)
    starts = ["heuristic"] if args.starts == 0 else args.starts
    cmp = compare(obj, solvers, starts, seed=args.seed, gtol=args.gtol,
                  max_iter=args.max_iter, progress=None)
    header = (f"{args.method.upper()} on {name} (n={n}, d={d}, "
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
                   help=f"bundled dataset ({', '.join(datasets.BUNDLED)}), a .csv/.npy "
                        f"file (.npy is memory-mapped) or a quoted glob of .parquet/.csv files "
                        f"read with Dask (default {data})")
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
    p.add_argument("--memory-limit", metavar="SIZE", default=None,
                   help="memory for the data, e.g. 256MB: chunked methods read .npy files and "
                        "globs in chunks of an eighth of it; other methods refuse data larger "
                        "than it (default: chunks of 64 MiB, no limit)")
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
