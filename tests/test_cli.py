import json

import numpy as np
import pytest

import ldr
from ldr import cli
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
    geom = ldr.manifolds.Geometry(obj.manifold, obj.shape)
    starts = [geom.random_point(rng) for _ in range(2)]
    heur = obj.cost(obj.heuristic())
    for row in runs:
        res = ldr.solve(obj, row["solver"], M0=starts[int(row["start"][-1])], seed=0)
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
    assert "improves on the eigenvector heuristic by 10.02%" in text


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
    assert "not a numeric CSV" in capsys.readouterr().err


@pytest.mark.parametrize("method", sorted(cli.METHODS))
def test_every_method_runs_from_the_command_line(method, capsys):
    assert cli.main(["compare", "--method", method, "--data", "iris", "--solvers",
                     "trust-region", "--starts", "1", "--max-iter", "30"]) == 0
    assert f"{method.upper()} on iris" in capsys.readouterr().out


def _by_hand(obj):
    return ldr.solve(obj, "trust-region", M0="heuristic", seed=0).cost


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
