import json

import numpy as np
import pytest

import ldr
from ldr.cli import commands as cli
from ldr.core.objective import Method
from ldr.data import files
from ldr.driver import registry
from ldr.objectives import LDA


def test_compare_table_agrees_with_solve_by_hand(tmp_path, capsys):
    out, png = tmp_path / "wine.json", tmp_path / "wine.png"
    assert cli.main(["compare", "--method", "lda", "--data", "wine", "--components", "2",
                     "--solvers", "gradient,trust-region,ism", "--starts", "2",
                     "--json", str(out), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("LDA on wine (n=178, d=13, r=2)")
    runs = json.loads(out.read_text())["runs"]
    assert [r["solver"] for r in runs] == ["gradient"] * 2 + ["trust-region"] * 2 + ["ism"] * 2
    # the same starts by hand: seeded random points drawn in order from seed 0
    X, y = ldr.datasets.load("wine")
    obj = LDA(X, y, 2)
    rng = np.random.default_rng(0)
    geom = ldr.manifolds.from_declaration(obj.manifold, obj.shape)
    starts = [geom.random_point(rng) for _ in range(2)]
    heur = obj.cost(obj.heuristic())
    for row in runs:
        res = ldr.solve(obj, row["solver"], start=starts[int(row["start"][-1])], random_state=0)
        assert row["cost"] == pytest.approx(res.cost, rel=1e-12)
        assert row["n_iter"] == res.n_iter and row["converged"] is True
        assert row["improvement"] == pytest.approx(-(res.cost - heur) / abs(heur), rel=1e-9)
        assert f"{res.cost:.10g}" in text
        assert row["answer"] == "A" and row["improvement"] > 0.05
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_compare_reads_csv_and_npy_with_a_label_column(tmp_path, capsys):
    X, y = ldr.datasets.load("iris")
    csv = tmp_path / "iris.csv"
    np.savetxt(csv, np.column_stack([y, X]), delimiter=",", header="label,a,b,c,d",
               comments="")
    assert cli.main(["compare", "--data", str(csv), "--label-column", "0", "--solvers",
                     "trust-region", "--starts", "1", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "## LDA on iris.csv (n=150, d=4, r=2)" in md and "| solver |" in md
    npy = tmp_path / "iris.npy"
    np.save(npy, np.column_stack([X, y]))
    # PCA is unsupervised: without --label-column every column is a feature
    assert cli.main(["compare", "--method", "pca", "--data", str(npy), "--solvers",
                     "trust-region", "--starts", "0"]) == 0
    assert "(n=150, d=5, r=2)" in capsys.readouterr().out


def test_demo_runs_every_solver_and_reports_the_improvement(capsys):
    assert cli.main(["demo", "--starts", "1"]) == 0
    text = capsys.readouterr().out
    for solver in ("trust-region", "gradient", "ism", "scf", "pymanopt"):
        assert solver in text
    assert "improves on the eigenvector heuristic by 10.02%" in " ".join(text.split())


@pytest.mark.parametrize("argv, message", [
    (["compare", "--method", "tsne"], "invalid choice: 'tsne'"),
    (["compare", "--data", "missing.csv"], "no such file: missing.csv"),
    (["compare", "--data", "wine.txt"], "neither a bundled dataset"),
    (["compare", "--method", "pca", "--components", "13"], "need 1 <= r < d = 13"),
    (["compare", "--components", "5"], "n_classes"),
    (["compare", "--solvers", "gradient,newton"], "unknown solver 'newton'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
])
def test_bad_command_lines_give_one_clear_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        code = cli.main(argv)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_non_numeric_csv_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\nx,y\n1,2\n")
    assert cli.main(["compare", "--data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "column 0 is not numeric: data row 1 holds 'a'" in err and err.count("\n") == 1


@pytest.mark.parametrize("method", registry.names())
def test_every_method_runs_from_the_command_line(method, capsys):
    assert cli.main(["compare", "--method", method, "--data", "iris", "--solvers",
                     "trust-region", "--starts", "1", "--max-iter", "30"]) == 0
    assert f"{method.upper()} on iris" in capsys.readouterr().out


def _by_hand(obj):
    return ldr.solve(obj, "trust-region", start="heuristic", random_state=0).cost


@pytest.mark.parametrize("method", ["lda", "maf", "sfa", "pca"])
def test_npy_larger_than_the_memory_limit_is_read_in_chunks(method, tmp_path, capsys):
    """A .npy file 8× larger than --memory-limit: memory-mapped, read in chunks of an eighth
    of the limit (counted on the progress bar), and the same answer as in memory."""
    from ldr.objectives import MAF, PCA, SFA

    X = ldr.datasets.make_maf(400, 5, seed=1) + 1e3
    y = np.arange(400) % 3
    npy = tmp_path / "big.npy"
    np.save(npy, np.column_stack([X, y]))
    limit = npy.stat().st_size // 8
    out = tmp_path / "out.json"
    args = ["compare", "--method", method, "--data", str(npy), "--solvers", "trust-region",
            "--starts", "0", "--memory-limit", str(limit), "--json", str(out)]
    if method != "lda":
        args += ["--label-column", "5"]  # the label column is dropped for these
    assert cli.main(args) == 0
    captured = capsys.readouterr()
    chunk_rows = max(1, (limit // 8) // (8 * 6))
    n_chunks = -(-400 // chunk_rows)
    assert n_chunks >= 60 and f"{n_chunks}chunk" in captured.err.replace(" ", "")
    obj = {"lda": lambda: LDA(X, y, 2), "pca": lambda: PCA(X, 2),
           "maf": lambda: MAF(X, 2), "sfa": lambda: SFA(X, 2)}[method]()
    cost = json.loads(out.read_text())["runs"][0]["cost"]
    assert cost == pytest.approx(_by_hand(obj), rel=1e-10)


def test_in_memory_method_refuses_a_file_over_the_memory_limit(tmp_path, capsys):
    npy = tmp_path / "big.npy"
    np.save(npy, np.random.default_rng(0).standard_normal((3000, 6)))
    assert cli.main(["compare", "--method", "mds", "--data", str(npy),
                     "--memory-limit", "64KB"]) == 2
    err = capsys.readouterr().err
    assert "needs all rows in memory: 3000 rows × 6 columns of float64 is 0.1 MiB" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_glob_of_files_is_read_with_dask(fmt, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("dask.dataframe")
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    X, y = ldr.datasets.load("wine")
    table = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]).assign(label=y)
    for i, part in enumerate(np.array_split(np.arange(len(y)), 3)):
        path = tmp_path / f"part{i}.{fmt}"
        if fmt == "csv":
            table.iloc[part].to_csv(path, index=False)
        else:
            table.iloc[part].to_parquet(path)
    out = tmp_path / "out.json"
    assert cli.main(["compare", "--data", str(tmp_path / f"part*.{fmt}"), "--solvers",
                     "trust-region", "--starts", "0", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert f"LDA on part*.{fmt} (n=178, d=13, r=2)" in captured.out
    assert "3/3" in captured.err.replace(" ", "")  # the progress bar over the 3 chunks
    cost = json.loads(out.read_text())["runs"][0]["cost"]
    assert cost == pytest.approx(_by_hand(LDA(X, y, 2)), rel=1e-10)


# --- issue 15: the command line as a tool people use on their files ---------------------
def _run(argv, capsys):
    """``(status, stdout, stderr)`` of the command line, argparse's exits included."""
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _one_error_line(status, err, message):
    """The error is one line, the last on stderr; any line before it is a progress line
    (the comparison's first line, one per run finished: issue 23)."""
    assert status == 2, err
    *progress, last = err.rstrip("\n").split("\n")
    assert message in last, err
    assert last.startswith("ldr: error: ") and "Traceback" not in err
    assert all(line.startswith("ldr: ") and "error" not in line for line in progress), err


@pytest.mark.parametrize("method, data, solvers", [
    ("wda", "iris", ["gradient", "trust-region", "scf → trust-region"]),  # + its default chain
    ("ppca", "iris", ["gradient", "trust-region"]),
    ("fa", "wine", ["gradient", "trust-region"]),
])
def test_default_solvers_are_those_the_method_supports(method, data, solvers, tmp_path,
                                                       capsys):
    out = tmp_path / "out.json"
    status, text, err = _run(["compare", "--method", method, "--data", data, "--starts", "1",
                              "--json", str(out)], capsys)
    assert status == 0, err
    runs = json.loads(out.read_text())["runs"]
    assert [r["solver"] for r in runs] == solvers and "ism" not in text
    # the same list from the library: every registered solver that the objective supports
    X, y = ldr.datasets.load(data)
    obj = registry.from_table(method, X, y, 2)
    names = [s if isinstance(s, str) else "+".join(s)
             for s in cli.supported_solvers(obj, ["gradient", "trust-region", "ism"])]
    assert names == [s.replace(" → ", "+") for s in solvers]


def test_a_solver_the_method_does_not_support_is_refused_with_those_it_does(capsys):
    status, _, err = _run(["compare", "--method", "ppca", "--data", "iris", "--solvers",
                           "trust-region,ism"], capsys)
    _one_error_line(status, err, "--solvers: ism cannot solve ppca")
    assert "the solvers that can: trust-region, gradient, conjugate-gradient, pymanopt" in err
    status, _, err = _run(["compare", "--method", "fa", "--solvers", "scf"], capsys)
    _one_error_line(status, err, "needs the objective to define pencil")


@pytest.mark.parametrize("argv, message", [
    (["--method", "wda", "--reg", "-1"], "argument --reg: must be a finite number >= 0, got '-1'"),
    (["--method", "wda", "--reg", "0"], "--reg: the entropic regularization must be a number > 0"),
    (["--method", "lda", "--reg", "1.5"], "--reg: must be a number in [0, 1], got 1.5"),
    (["--method", "pca", "--reg", "0.1"], "--reg: the pca method does not use it"),
    (["--method", "ppca", "--reg", "0.1"], "--reg: the ppca method does not use it"),
    (["--reg", "nan"], "argument --reg: must be a finite number >= 0, got 'nan'"),
    (["--reg", "inf"], "argument --reg: must be a finite number >= 0, got 'inf'"),
    (["--components", "0"], "argument --components/-r: must be an integer >= 1, got '0'"),
    (["--components", "2.5"], "argument --components/-r: expected an integer, got '2.5'"),
    (["--starts", "-1"], "argument --starts: must be an integer >= 0, got '-1'"),
    (["--seed", "-3"], "argument --random-state/--seed: must be an integer >= 0, got '-3'"),
    (["--tol=-1e-8"], "argument --tol/--gtol: must be a finite number >= 0"),
    (["--gtol", "inf"], "argument --tol/--gtol: must be a finite number >= 0, got 'inf'"),
    (["--max-iter", "0"], "argument --max-iter: must be an integer >= 1, got '0'"),
    (["--memory-limit=-5MB"], "argument --memory-limit: expected a size such as 256MB"),
    (["--memory-limit", "inf"], "argument --memory-limit: expected a size such as 256MB"),
    (["--memory-limit", "lots"], "argument --memory-limit: expected a size such as 256MB"),
    (["--label-column", "0"], "--label-column: the bundled dataset wine comes with its labels"),
    (["--header", "maybe"], "argument --header: invalid choice: 'maybe'"),
    (["--header", "yes"], "--header: applies to CSV files; wine is not one"),
    (["--data", "iris", "--components", "3"], "--components: LDA's between-class scatter"),
    (["--solvers", "ism+"], "--solvers: empty solver name in 'ism+'"),
])
def test_every_invalid_option_value_is_rejected_not_replaced(argv, message, capsys):
    status, out, err = _run(["compare", *argv, "--starts", "1"] if "--starts" not in argv
                            else ["compare", *argv], capsys)
    _one_error_line(status, err, message)
    assert out == ""


def test_reg_reaches_the_objective_and_its_own_default_otherwise(tmp_path, capsys):
    from ldr.objectives import WDA

    X, y = ldr.datasets.load("iris")
    for argv, reg in [([], "auto"), (["--reg", "0.5"], 0.5)]:  # "auto": WDA's own default
        out = tmp_path / "wda.json"
        assert _run(["compare", "--method", "wda", "--data", "iris", "--solvers",
                     "trust-region", "--starts", "0", "--json", str(out), *argv], capsys)[0] == 0
        cost = json.loads(out.read_text())["runs"][0]["cost"]
        assert cost == pytest.approx(_by_hand(WDA(X, y, 2, reg=reg)), rel=1e-10)
    assert _by_hand(WDA(X, y, 2, reg=0.5)) != pytest.approx(_by_hand(WDA(X, y, 2)), rel=1e-3)


def test_a_complex_npy_is_refused_not_truncated(tmp_path, capsys):
    X, y = ldr.datasets.load("iris")
    npy = tmp_path / "c.npy"
    np.save(npy, np.column_stack([X + 1j * X[:, ::-1], y]))
    status, _, err = _run(["compare", "--data", str(npy)], capsys)
    _one_error_line(status, err, "c.npy holds complex values (complex128)")


def _iris_csv(path, label_first=False):
    """scikit-learn's bundled iris as a user has it: a header and the species' names."""
    from sklearn.datasets import load_iris

    iris = load_iris()
    species = iris.target_names[iris.target]
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    lines = [",".join(["species", *names] if label_first else [*names, "species"])]
    for x, s in zip(iris.data, species):
        cells = [f"{v:g}" for v in x]
        lines.append(",".join([s, *cells] if label_first else [*cells, s]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return iris.data, species


def test_iris_csv_with_a_header_and_species_names(tmp_path, capsys):
    from ldr.objectives import LDA, PCA

    X, species = _iris_csv(tmp_path / "iris.csv")
    _iris_csv(tmp_path / "iris_first.csv", label_first=True)
    truth = _by_hand(LDA(X, species, 2))
    assert len(set(species)) == 3 and species.dtype.kind == "U"
    for argv in (["--data", str(tmp_path / "iris.csv")],  # the default: the last column
                 ["--data", str(tmp_path / "iris.csv"), "--label-column", "species"],
                 ["--data", str(tmp_path / "iris_first.csv"), "--label-column", "species"],
                 ["--data", str(tmp_path / "iris_first.csv"), "--label-column", "0"],
                 ["--data", str(tmp_path / "iris_first.csv"), "--label-column", "-5"]):
        out = tmp_path / "out.json"
        status, text, err = _run(["compare", *argv, "--solvers", "trust-region", "--starts",
                                  "0", "--json", str(out)], capsys)
        assert status == 0, err
        assert "LDA on iris" in text and "(n=150, d=4, r=2)" in text  # header line dropped
        assert json.loads(out.read_text())["runs"][0]["cost"] == pytest.approx(truth, rel=1e-10)
    # unsupervised: the last column of species names is set aside as the labels, with a
    # note on stderr (issue 23; it used to be refused until --label-column named it)
    for named in ([], ["--label-column", "species"]):
        out = tmp_path / "pca.json"
        status, text, err = _run(["compare", "--method", "pca", "--data",
                                  str(tmp_path / "iris.csv"), "--solvers", "trust-region",
                                  "--starts", "0", "--json", str(out), *named], capsys)
        assert status == 0, err
        assert "(n=150, d=4, r=2)" in text
        assert ("set aside as the class labels" in err) is not bool(named)
        assert json.loads(out.read_text())["runs"][0]["cost"] == pytest.approx(
            _by_hand(PCA(X, 2)), rel=1e-10)
    # a wrong name lists the columns; --header no reads the header line as data
    status, _, err = _run(["compare", "--data", str(tmp_path / "iris.csv"), "--label-column",
                           "Species"], capsys)
    _one_error_line(status, err, "no column named 'Species'; the columns are 'sepal_length'")
    status, _, err = _run(["compare", "--data", str(tmp_path / "iris.csv"), "--header", "no"],
                          capsys)
    _one_error_line(status, err, "column 0 is not numeric: data row 1 holds 'sepal_length'")


@pytest.mark.parametrize("rows, header", [
    ([["a", "b"], ["1", "2"]], True), ([["1", "2"], ["3", "4"]], False),
    ([["x", "y", "label"], ["1", "2", "cat"], ["3", "4", "dog"]], True),
    ([["1", "2", "cat"], ["3", "4", "dog"]], False),  # string labels alone are no header
    ([["a", "b"], ["x", "1"], ["y", "2"]], True), ([["a", "b"]], True), ([["1", "b"]], False),
])
def test_header_auto_detection(rows, header):
    assert files._detect_header(rows, "auto") is header
    assert files._detect_header(rows, "yes") is True and files._detect_header(rows, "no") is False


def test_a_non_numeric_feature_column_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("height,colour,label\n1.5,red,0\n1.7,blue,1\n1.6,red,0\n1.8,,1\n")
    status, _, err = _run(["compare", "--data", str(bad)], capsys)
    _one_error_line(status, err, "bad.csv: column 'colour' (index 1) is not numeric: data row "
                                 "1 holds 'red'")
    missing = tmp_path / "missing.csv"
    missing.write_text("a,b,label\n1,2,0\n3,,1\n5,6,0\n")
    status, _, err = _run(["compare", "--data", str(missing)], capsys)
    _one_error_line(status, err, "column 'b' (index 1): data row 2 is empty (a missing value, "
                                 "line 3 of the file); ldr needs complete rows")  # issue 23
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("1,2,0\n3,4\n")
    status, _, err = _run(["compare", "--data", str(ragged)], capsys)
    _one_error_line(status, err, "row 2 has 2 fields, the first has 3")


def test_a_glob_of_csv_files_with_string_labels(tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    from ldr.objectives import LDA

    X, species = _iris_csv(tmp_path / "all.csv")
    lines = (tmp_path / "all.csv").read_text().splitlines()
    (tmp_path / "all.csv").unlink()
    for i in range(3):  # three shards, each with the header line
        (tmp_path / f"part{i}.csv").write_text("\n".join([lines[0], *lines[1 + i::3]]) + "\n")
    order = np.concatenate([np.arange(i, 150, 3) for i in range(3)])
    out = tmp_path / "out.json"
    status, text, err = _run(["compare", "--data", str(tmp_path / "part*.csv"), "--solvers",
                              "trust-region", "--starts", "0", "--json", str(out)], capsys)
    assert status == 0, err
    cost = json.loads(out.read_text())["runs"][0]["cost"]
    assert cost == pytest.approx(_by_hand(LDA(X[order], species[order], 2)), rel=1e-10)


@pytest.mark.parametrize("header", [False, True])
def test_a_glob_without_a_header_or_with_blank_lines_is_read(tmp_path, capsys, header):
    """Headerless shards with string labels (Dask names such columns by integers) and a
    header followed by a blank line and spaces after the commas: both read as one file is."""
    pytest.importorskip("dask.dataframe")
    from ldr.objectives import LDA

    X, species = _iris_csv(tmp_path / "all.csv")
    lines = (tmp_path / "all.csv").read_text().splitlines()
    (tmp_path / "all.csv").unlink()
    head = [", ".join(lines[0].split(",")), ""] if header else []
    for i in range(3):
        (tmp_path / f"part{i}.csv").write_text("\n".join([*head, *lines[1 + i::3]]) + "\n")
    order = np.concatenate([np.arange(i, 150, 3) for i in range(3)])
    out = tmp_path / "out.json"
    argv = ["compare", "--data", str(tmp_path / "part*.csv"), "--solvers", "trust-region",
            "--starts", "0", "--json", str(out)]
    status, text, err = _run(argv + (["--label-column", "species"] if header else []), capsys)
    assert status == 0, err
    cost = json.loads(out.read_text())["runs"][0]["cost"]
    assert cost == pytest.approx(_by_hand(LDA(X[order], species[order], 2)), rel=1e-10)


def test_header_auto_detection_does_not_lose_or_invent_a_row(tmp_path, capsys):
    """A first data row with a missing value is data (and then an error naming it), not a
    header; a header whose feature names are numbers is not taken for a one-sample class:
    the user is asked, and a numeric header name selects the column."""
    X, species = _iris_csv(tmp_path / "iris.csv")
    lines = (tmp_path / "iris.csv").read_text().splitlines()
    cells = lines[1].split(",")
    (tmp_path / "na.csv").write_text("\n".join(["NA," + ",".join(cells[1:]), *lines[2:]]))
    status, _, err = _run(["compare", "--data", str(tmp_path / "na.csv"), "--starts", "0"],
                          capsys)
    assert status == 2 and "data row 1 holds 'NA'" in err
    numeric = "\n".join(["400,500,600,700,800", *lines[1:]])
    (tmp_path / "numhdr.csv").write_text(numeric)
    status, _, err = _run(["compare", "--data", str(tmp_path / "numhdr.csv"), "--starts", "0"],
                          capsys)
    assert status == 2 and "--header yes" in err and err.count("\n") == 1
    out = tmp_path / "out.json"
    status, _, err = _run(["compare", "--data", str(tmp_path / "numhdr.csv"), "--header",
                           "yes", "--label-column", "800", "--solvers", "trust-region",
                           "--starts", "0", "--json", str(out)], capsys)
    assert status == 0, err
    from ldr.objectives import LDA

    cost = json.loads(out.read_text())["runs"][0]["cost"]
    assert cost == pytest.approx(_by_hand(LDA(X, species, 2)), rel=1e-10)


def _register(monkeypatch, build, summary):
    """Register, for one test, a method "failing" built by ``build(X, r)``."""
    class Failing(ldr.Objective):
        method = Method("failing", summary, build="make")

        @classmethod
        def make(cls, X, r):
            return build(X, r)

    monkeypatch.setitem(registry.METHODS, "failing", Failing)


def _failing_method(monkeypatch, cost):
    """Register a method whose cost (called deep inside ldr.compare → ldr.solve) is ``cost``."""
    import autograd.numpy as anp

    def build(X, r):
        C = np.cov(X.T)
        return ldr.objective(lambda M: cost(M, C) - anp.trace(M.T @ C @ M),
                             shape=(X.shape[1], r), manifold="grassmann")

    _register(monkeypatch, build, "fails deep inside")


def _on_call(k, raise_it):
    """A cost term that is 0 for the first ``k`` calls, then calls ``raise_it``."""
    calls = []

    def cost(M, C):
        calls.append(1)
        if len(calls) > k:
            raise_it(M, C)
        return 0.0
    return cost


def _memory(M, C):
    np.empty((10**7, 10**7))  # 800 TB: numpy refuses the request with a MemoryError


def _linalg(M, C):
    np.linalg.cholesky(-np.eye(3))


def _runtime(M, C):
    raise RuntimeError("something unforeseen")


@pytest.mark.parametrize("raise_it, message", [
    (_memory, "ldr: error: out of memory (Unable to allocate"),
    (_linalg, "ldr: error: LinAlgError: Matrix is not positive definite (--debug shows the "
              "traceback)"),
    (_runtime, "ldr: error: RuntimeError: something unforeseen (--debug shows the traceback)"),
])
def test_errors_raised_deep_inside_are_one_line(raise_it, message, monkeypatch, capsys):
    _failing_method(monkeypatch, _on_call(3, raise_it))
    status, _, err = _run(["compare", "--method", "failing", "--data", "wine", "--solvers",
                           "trust-region", "--starts", "1"], capsys)
    _one_error_line(status, err, message)
    _failing_method(monkeypatch, _on_call(3, raise_it))
    with pytest.raises(BaseException) as exc:  # --debug: the exception itself
        cli.main(["compare", "--method", "failing", "--data", "wine", "--solvers",
                  "trust-region", "--starts", "1", "--debug"])
    assert not isinstance(exc.value, SystemExit)


def test_an_oracle_error_is_one_line(monkeypatch, capsys):
    def build(X, r):  # a gradient of the wrong shape: ldr.core.problem.OracleError
        return ldr.objective(lambda M: 0.0, shape=(X.shape[1], r), manifold="grassmann",
                             egrad=lambda M: np.zeros((2, 2)))

    _register(monkeypatch, build, "a broken oracle")
    status, _, err = _run(["compare", "--method", "failing", "--data", "wine", "--starts", "1",
                           "--solvers", "gradient"], capsys)
    _one_error_line(status, err, "egrad")


def test_an_hsic_overflow_is_one_line_in_a_real_process(tmp_path):
    """End to end, as a user runs it: data of magnitude 1e99 make HSIC's kernel derivatives
    overflow deep inside; stderr is one line, the exit status 2, no traceback (with --debug,
    the traceback)."""
    import subprocess
    import sys

    X, y = ldr.datasets.load("iris")
    npy = tmp_path / "huge.npy"
    np.save(npy, np.column_stack([X * 1e99, y]))
    argv = [sys.executable, "-m", "ldr.cli", "compare", "--method", "hsic", "--data", str(npy),
            "--label-column", "-1", "--solvers", "trust-region", "--starts", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    *progress, last = done.stderr.strip().splitlines()  # progress lines, then the error
    assert last.startswith("ldr: error: OverflowError") and "error" not in "".join(progress)
    assert "rescale the data" in last and "Traceback" not in done.stderr
    debug = subprocess.run(argv + ["--debug"], capture_output=True, text=True, timeout=120)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def _lines(text):
    return text.rstrip("\n").split("\n")


def test_the_demo_table_fits_a_terminal_and_has_a_legend(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    status, text, err = _run(["demo", "--starts", "2"], capsys)
    assert status == 0, err
    assert max(len(line) for line in _lines(text)) <= 80
    from ldr.solvers import REGISTRY
    from ldr.solvers.stochastic import StochasticSolver

    for solver, cls in REGISTRY.items():  # every solver that supports LDA (not the stochastic
        if not issubclass(cls, StochasticSolver):  # ones: LDA is no sum of terms), then its
            assert solver in text                  # default chain
    assert "ism → trust-region" in text
    legend = text[text.index("columns:"):]
    for header in ("vs heur.", "answer", "sinθ to A", "verdict", "conv.", "at A", "iters",
                   "time [s]"):
        assert f"\n  {header}  " in legend, header
    assert "largest principal-angle sine" in legend and "survey Eq. 28" in legend
    assert "reason" not in text.split("columns:")[0]  # the stopping reasons: --wide
    # --wide: per-run iterations, time and the certificate's numbers, wider than a terminal
    status, wide, _ = _run(["demo", "--starts", "2", "--wide"], capsys)
    assert status == 0 and max(len(line) for line in _lines(wide)) > 100
    for header in ("λmin(Hess)", "‖grad‖", "global opt.", "reason"):
        assert header in wide and f"\n  {header}  " in wide[wide.index("columns:"):]
    monkeypatch.setenv("COLUMNS", "100")  # a wider terminal: still at most 100 columns
    status, text, _ = _run(["demo", "--starts", "1", "--no-legend"], capsys)
    assert status == 0 and max(len(line) for line in _lines(text)) <= 100
    assert "columns:" not in text


@pytest.mark.parametrize("method", ["ppca", "fa"])
def test_euclidean_answers_are_grouped_by_cost_not_by_matrix(method, tmp_path, capsys):
    """PPCA and FA: the loadings W are identified only up to W → WR, so runs at one cost are
    one answer however far apart their matrices are, and no sinθ is shown."""
    out = tmp_path / "out.json"
    status, text, err = _run(["compare", "--method", method, "--data", "wine", "--starts", "3",
                              "--json", str(out)], capsys)
    assert status == 0, err
    runs = json.loads(out.read_text())["runs"]
    costs = np.array([r["cost"] for r in runs])
    assert all(r["converged"] for r in runs) and np.ptp(costs) <= 1e-9 * abs(costs[0])
    assert {r["answer"] for r in runs} == {"A"}
    assert all(0 <= r["to_A"] <= 1e-6 and r["sin_to_A"] is None for r in runs)
    assert "Δcost to A" in text and "sinθ" not in text and "distinct answers" not in text
    # the matrices themselves differ (the old grouping by them gave distinct answers)
    from ldr.driver.compare import compare

    X, _ = ldr.datasets.load("wine")
    obj = registry.from_table(method, X, None, 2)
    cmp = compare(obj, ["trust-region"], 3, random_state=0)
    geom = ldr.manifolds.from_declaration(obj.manifold, obj.shape)
    points = [res.M for res in cmp.results.values()]
    assert max(geom.change(points[0], p) for p in points) > 1e-2
    assert len(cmp.answers) == 1


def test_the_readme_command_lines_run(tmp_path, monkeypatch, capsys):
    """Every command of the README's command-line section, as written (with one start, to
    keep the test fast), in a folder holding the iris.csv and my.csv they read."""
    import pathlib
    import re
    import shlex

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    section = readme[readme.index("## Command line"):]
    block = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    assert [c[:2] for c in commands][:2] == [["ldr", "demo"], ["ldr", "compare"]]
    _iris_csv(tmp_path / "iris.csv")
    _iris_csv(tmp_path / "my.csv")
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        fast = [] if "--help" in argv else ["--starts", "1"]
        status, out, err = _run(argv[1:] + fast, capsys)
        assert status == 0, (argv, err)
        assert out and "Traceback" not in err
    assert (tmp_path / "out.png").stat().st_size > 10_000
