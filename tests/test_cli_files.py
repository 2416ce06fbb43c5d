"""Issue 23: the command line on real files and in a newcomer's first hour.

Delimiters and missing values (item 2), a labelled CSV for an unsupervised method (item 3),
plain-text help (item 7) and the conclusion line (item 8).
"""

import re

import numpy as np
import pytest

import ldr
from ldr.cli import commands as cli
from ldr.core.errors import ParameterError
from ldr.data import load_table, text
from ldr.objectives import LDA, PCA


def _run(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _iris(path, sep=",", header=True):
    """scikit-learn's iris as a user has it: a header, species names in the last column."""
    from sklearn.datasets import load_iris

    iris = load_iris()
    species = iris.target_names[iris.target]
    lines = [sep.join(["sepal_length", "sepal_width", "petal_length", "petal_width",
                       "species"])] if header else []
    lines += [sep.join([*(f"{v:g}" for v in x), s]) for x, s in zip(iris.data, species)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return iris.data, species


# --- item 2: the delimiter and missing values --------------------------------------------
@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_the_delimiter_is_detected(sep, tmp_path):
    X, species = _iris(tmp_path / "iris.csv", sep)
    Xr, y, name = load_table(str(tmp_path / "iris.csv"), supervised=True)
    np.testing.assert_array_equal(Xr, X)
    assert list(y) == list(species) and name == "iris.csv"
    Xg, yg, _ = load_table(str(tmp_path / "iris.csv"), supervised=True, delimiter=sep)
    np.testing.assert_array_equal(Xg, X)


def test_a_semicolon_file_with_decimal_commas_is_split_on_the_semicolons(tmp_path):
    """Every line splits into 3 fields on ',' as on ';' here; ';' makes more numbers."""
    path = tmp_path / "eu.csv"
    path.write_text("a;b;c\n1;2,5;x\n3;4;y\n5;6,5;x\n")
    assert text.sniff_delimiter(path.read_text().splitlines(True)) == ";"
    with pytest.raises(ParameterError, match=r"column 'b' \(index 1\) is not numeric: data row "
                                             r"1 holds '2,5'"):
        load_table(str(path), supervised=True)


def test_a_semicolon_file_used_to_have_one_column_and_now_runs(tmp_path, capsys):
    X, species = _iris(tmp_path / "iris.csv", ";")
    status, out, err = _run(["compare", "--data", str(tmp_path / "iris.csv"), "--starts", "0",
                             "--solvers", "trust-region"], capsys)
    assert status == 0, err
    cost = ldr.solve(LDA(X, species, 2), "trust-region", start="heuristic").cost
    assert f"{cost:.10g}" in out and "(n=150, d=4, r=2)" in out
    # a delimiter given that is not the file's: one column, and the error says how to fix it
    status, _, err = _run(["compare", "--data", str(tmp_path / "iris.csv"), "--delimiter",
                           "|"], capsys)
    assert status == 2 and "iris.csv has 1" in err
    one = tmp_path / "one.csv"
    one.write_text("1.5\n2.5\n3.5\n")
    status, _, err = _run(["compare", "--data", str(one)], capsys)
    assert status == 2 and "has 1 (the delimiter was detected as ','" in err
    assert "--delimiter" in err


def test_delimiter_option_and_parameter(tmp_path, capsys):
    X, species = _iris(tmp_path / "iris.tsv.csv", "\t")
    for spelling in ("tab", "\\t", "\t"):
        status, _, err = _run(["compare", "--data", str(tmp_path / "iris.tsv.csv"),
                               "--delimiter", spelling, "--starts", "0", "--solvers",
                               "trust-region"], capsys)
        assert status == 0, err
    with pytest.raises(ParameterError, match="delimiter: expected one character"):
        load_table(str(tmp_path / "iris.tsv.csv"), delimiter=";;")
    with pytest.raises(ParameterError, match="delimiter: applies to CSV files; wine is not"):
        load_table("wine", delimiter=";")


def test_a_glob_of_semicolon_files(tmp_path):
    pytest.importorskip("dask.dataframe")
    X, species = _iris(tmp_path / "all.csv", ";")
    lines = (tmp_path / "all.csv").read_text().splitlines()
    (tmp_path / "all.csv").unlink()
    for i in range(2):
        (tmp_path / f"p{i}.csv").write_text("\n".join([lines[0], *lines[1 + i::2]]) + "\n")
    Xg, y, _ = load_table(str(tmp_path / "p*.csv"), supervised=True)
    order = np.concatenate([np.arange(i, 150, 2) for i in range(2)])
    np.testing.assert_allclose(Xg, X[order])


def _anes96(path, blank=None, mark=""):
    """statsmodels' anes96 (944 rows) as a CSV, with the cell ``blank`` = (row, column)
    replaced by ``mark`` (a missing value)."""
    sm = pytest.importorskip("statsmodels.api")
    data = sm.datasets.anes96.load_pandas().data
    cells = data.astype(object)
    if blank is not None:
        cells.iloc[blank[0] - 1, list(data.columns).index(blank[1])] = mark
    cells.to_csv(path, index=False)
    return data


@pytest.mark.parametrize("mark, held", [("", "is empty"), ("NA", "holds 'NA'"),
                                        ("nan", "holds 'nan'"), ("?", "holds '?'")])
def test_a_missing_value_is_named_by_row_and_column(mark, held, tmp_path, capsys):
    path = tmp_path / "anes96.csv"
    _anes96(path, blank=(17, "selfLR"), mark=mark)
    message = (f"anes96.csv: column 'selfLR' (index 2): data row 17 {held} (a missing value, "
               "line 18 of the file); ldr needs complete rows: drop or impute them first")
    with pytest.raises(ParameterError) as exc:
        load_table(str(path), supervised=True, label_column="vote")
    assert exc.value.param == "source" and message in str(exc.value)
    status, _, err = _run(["compare", "--method", "pca", "--data", str(path)], capsys)
    assert status == 2 and message in err and err.count("\n") == 1
    assert "not numeric" not in err


def test_a_missing_label_is_named(tmp_path):
    path = tmp_path / "anes96.csv"
    _anes96(path, blank=(5, "vote"))
    with pytest.raises(ParameterError, match=r"the label column 'vote' \(index 9\): data row 5 "
                                             r"is empty \(a missing value"):
        load_table(str(path), supervised=True, label_column="vote")


def test_anes96_complete_reads_as_pandas_does(tmp_path):
    path = tmp_path / "anes96.csv"
    data = _anes96(path)
    X, y, _ = load_table(str(path), supervised=True, label_column="vote")
    np.testing.assert_allclose(X, data.drop(columns="vote").to_numpy())
    np.testing.assert_array_equal(y, data["vote"].to_numpy())


def test_a_large_csv_is_refused_before_it_is_read(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "big.csv"
    np.savetxt(path, rng.standard_normal((5000, 6)), delimiter=",")
    with pytest.raises(ParameterError, match=r"memory_limit: this method needs all rows in "
                                             r"memory: about \d+ rows × 6 columns \(estimated "
                                             r"from the file's size\)"):
        load_table(str(path), memory_limit=100_000)
    assert load_table(str(path), memory_limit=10**7)[0].shape == (5000, 6)


# --- item 3: an unsupervised method on a labelled CSV -----------------------------------
def test_pca_on_iris_csv_sets_the_species_aside(tmp_path, capsys):
    X, _ = _iris(tmp_path / "iris.csv")
    with pytest.warns(text.DataNote, match=r"iris.csv: column 'species' \(index 4\), the "
                                           r"last, holds text: set aside as the class labels "
                                           r"\(3 classes\)"):
        Xr, y, _ = load_table(str(tmp_path / "iris.csv"))
    np.testing.assert_array_equal(Xr, X)
    status, out, err = _run(["compare", "--method", "pca", "--data", str(tmp_path / "iris.csv"),
                             "--starts", "0", "--solvers", "trust-region"], capsys)
    assert status == 0, err
    assert "ldr: note: iris.csv: column 'species' (index 4), the last, holds text" in err
    cost = ldr.solve(PCA(X, 2), "trust-region", start="heuristic").cost
    assert f"{cost:.10g}" in out and "(n=150, d=4, r=2)" in out


def test_text_in_the_middle_or_without_repeats_is_still_an_error(tmp_path, capsys):
    middle = tmp_path / "middle.csv"
    middle.write_text("a,colour,b\n1,red,2\n3,blue,4\n5,red,6\n7,blue,8\n")
    status, _, err = _run(["compare", "--method", "pca", "--data", str(middle)], capsys)
    assert status == 2
    assert "column 'colour' (index 1) is not numeric: data row 1 holds 'red'" in err
    names = tmp_path / "names.csv"
    names.write_text("a,b,c,name\n1,2,3,ann\n3,4,5,bob\n5,6,1,cy\n7,8,2,dee\n")
    status, _, err = _run(["compare", "--method", "pca", "--data", str(names)], capsys)
    assert status == 2 and "column 'name' (index 3) is not numeric" in err
    assert "no value repeats" in err
    two = tmp_path / "two.csv"  # two text columns: neither is set aside
    two.write_text("a,b,kind,class\n1,2,x,p\n3,4,y,q\n5,6,x,p\n")
    status, _, err = _run(["compare", "--method", "pca", "--data", str(two)], capsys)
    assert status == 2 and "column 'kind' (index 2) is not numeric" in err


def test_a_glob_for_an_unsupervised_method_sets_the_labels_aside(tmp_path):
    pytest.importorskip("dask.dataframe")
    X, _ = _iris(tmp_path / "all.csv")
    lines = (tmp_path / "all.csv").read_text().splitlines()
    (tmp_path / "all.csv").unlink()
    for i in range(2):
        (tmp_path / f"p{i}.csv").write_text("\n".join([lines[0], *lines[1 + i::2]]) + "\n")
    with pytest.warns(text.DataNote, match="set aside as the class labels"):
        Xg, _, _ = load_table(str(tmp_path / "p*.csv"))
    assert Xg.shape == (150, 4)


# --- item 7: plain-text help ------------------------------------------------------------
ROLE = re.compile(r":[a-z]+:`|``")


@pytest.mark.parametrize("argv", [["--help"], ["compare", "--help"], ["demo", "--help"]])
def test_help_is_plain_text(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert not ROLE.search(out), ROLE.findall(out)
    assert "ldr compare --method lda --data wine" in out  # the examples, as written
    if argv[0] != "--help":
        assert "--max-time" in out and "--delimiter" in out and "missing value" in out
    assert ROLE.search(cli.__doc__)  # the docstring stays reStructuredText for Sphinx


def test_plain_rewrites_roles():
    from ldr.cli.options import plain

    assert plain("See :func:`~ldr.driver.compare.compare`, :meth:`ldr.Comparison.table` and "
                 ":doc:`the guide <quickstart>`; ``--data`` reads it::") == (
        "See compare, ldr.Comparison.table and the guide; --data reads it:")


# --- item 8: the conclusion line --------------------------------------------------------
def test_compare_ends_with_a_conclusion(capsys):
    status, out, _ = _run(["compare", "--data", "wine", "--starts", "2"], capsys)
    assert status == 0
    last = " ".join(out.strip().split("\n\n")[-1].split())
    assert re.fullmatch(r"Best answer: A, cost -6\.412237021 \(\S+ from rand\d\), reached by "
                        r"8 of 8 runs: a certified global minimum\. It improves on the "
                        r"eigenvector heuristic by 10\.02% of its cost \(survey Eq\. 28\)\.",
                        last), last


def test_the_demo_legend_says_what_scf_solves(capsys):
    status, out, _ = _run(["demo", "--starts", "1"], capsys)
    legend = " ".join(out[out.index("solvers:"):].split())
    assert status == 0 and "scf SCF solves the ratio trace of the objective's pencil" in legend
    assert "a different problem from the cost's trace ratio" in legend
    assert "reached by 7 of 8 runs" in " ".join(out.split())  # SCF's run is not at A
