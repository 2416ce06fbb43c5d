"""Errors carry the parameter they concern as data (ldr.core.errors.ParameterError), and callers
that expose a parameter under another name rename it by that attribute, not by parsing the
message."""

import pickle

import numpy as np
import pytest

import ldr
import ldr.estimators as est
from ldr.cli import commands as cli
from ldr.core.errors import ParameterError
from ldr.objectives import LDA, ReducedRankRegression


def test_a_parameter_error_is_a_value_error_with_its_parameter():
    X, y = ldr.datasets.load("wine")
    with pytest.raises(ParameterError) as exc:
        LDA(X, y, r=20)
    assert isinstance(exc.value, ValueError) and exc.value.param == "r"
    assert str(exc.value) == f"r: {exc.value.reason}"
    again = pickle.loads(pickle.dumps(exc.value))  # crosses process boundaries (Dask, joblib)
    assert (again.param, again.reason) == (exc.value.param, exc.value.reason)


def test_estimators_rename_the_objectives_r_to_n_components():
    X, y = ldr.datasets.load("wine")
    with pytest.raises(ParameterError, match=r"^n_components: ") as exc:
        est.LinearDR("lda", n_components=15).fit(X, y)
    assert exc.value.param == "n_components"


def test_the_command_line_renames_by_the_registry(capsys):
    """RRR's alpha is set by --reg: its error names --reg, whatever the objective's wording."""
    with pytest.raises(ParameterError) as exc:
        ReducedRankRegression(np.eye(5), np.eye(5), 1, alpha=-1.0)
    assert exc.value.param == "alpha"
    rrr = ldr.driver.registry.get("rrr").method
    assert cli._option_error(exc.value, rrr).param == "--reg"
    # an objective's reg error reaches the user as --reg (LPP's shrinkage lies in [0, 1])
    assert cli.main(["compare", "--method", "lpp", "--data", "wine", "--reg", "2"]) == 2
    assert capsys.readouterr().err.startswith("ldr: error: --reg: must be a number in [0, 1]")


def test_the_loader_names_its_parameter_and_the_cli_its_option(tmp_path, capsys):
    bad = tmp_path / "t.csv"
    bad.write_text("a,b,c\n1,2,x\n3,4,y\n")
    with pytest.raises(ParameterError) as exc:
        ldr.data.load_table(str(bad), label_column="nope")
    assert exc.value.param == "label_column"
    assert cli.main(["compare", "--data", str(bad), "--label-column", "nope"]) == 2
    assert capsys.readouterr().err.startswith("ldr: error: --label-column: no column named")


# --- errors that name the fix -------------------------------------------------------------------
_NOT_NUMERIC = (r"^X: column 2 \('party'\) is not numeric \(could not convert string to "
                r"float: 'rep'\): X must be numeric\. Encode categorical columns first")


@pytest.mark.parametrize("estimator", [est.OrthogonalLDA(), est.PCA(2), est.MAF(2),
                                       est.WassersteinDA(1), est.SupervisedHSIC(1),
                                       est.ReducedRankRegression(1), est.UndercompleteICA(2),
                                       est.OrthogonalCCA(1), est.LinearDR("pca", 1), est.NCA(1),
                                       est.LPP(1, n_neighbors=5)],
                         ids=lambda e: type(e).__name__)
def test_a_string_column_is_named_with_the_fix(estimator):
    """scikit-learn says "could not convert string to float: 'rep'"; ldr names the column
    (index and DataFrame name) and says to encode categories first."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((30, 4)), columns=["age", "income", "party", "x"])
    X["party"] = ["rep", "dem", "ind"] * 10
    y = np.arange(30) % 2 if not isinstance(estimator, est.OrthogonalCCA) else X[["x"]]
    with pytest.raises(ParameterError, match=_NOT_NUMERIC) as info:
        estimator.fit(X, y)
    assert info.value.param == "X"
    # an object array (no column names) gets the index; so do the objectives
    A = X.to_numpy()
    with pytest.raises(ParameterError, match=r"^X: column 2 is not numeric .*'rep'"):
        estimator.fit(A, y)
    with pytest.raises(ParameterError, match=r"^X: column 2 is not numeric .*'rep'"):
        LDA(A, np.arange(30) % 2, 1)


def test_string_targets_of_a_regressor_say_y_must_be_numeric():
    X = np.random.default_rng(0).standard_normal((30, 3))
    for y in (np.array(["a", "b", "c"] * 10), ["a", "b", "c"] * 10,
              np.array([["a", "b"]] * 30, dtype=object)):
        with pytest.raises(ParameterError, match=r"^y: must be numeric targets \(could not "
                           r"convert string to float: .*\)\. For class labels, one-hot encode "
                           r"them first, e\.g\. with sklearn\.preprocessing\.LabelBinarizer"):
            est.ReducedRankRegression(1).fit(X, y)
    # the fix it names works: one-hot labels are numeric targets
    from sklearn.preprocessing import LabelBinarizer

    Y = LabelBinarizer().fit_transform(["a", "b", "c"] * 10)
    assert est.ReducedRankRegression(1).fit(X, Y).coef_.shape == (3, 3)
