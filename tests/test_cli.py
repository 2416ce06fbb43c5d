import json

import pytest

from ldr import cli


def test_cli_runs_lda_on_wine_and_writes_json(tmp_path, capsys):
    out = tmp_path / "wine.json"
    assert cli.main(["run", "--solvers", "trust-region", "gradient", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "LDA on wine" in text and "trust-region" in text
    summary = json.loads(out.read_text())
    rows = {row["solver"]: row for row in summary["results"]}
    # orthogonal LDA beats the eigenvector heuristic on wine, and both solvers agree
    assert rows["trust-region"]["improvement"] > 0.05
    assert rows["trust-region"]["score"] == pytest.approx(rows["gradient"]["score"], rel=1e-8)
    assert all(row["converged"] and row["certified"] for row in rows.values())


def test_cli_pca_shows_no_improvement(capsys):
    assert cli.main(["run", "--dataset", "iris", "--method", "pca", "--r", "2",
                     "--solvers", "trust-region"]) == 0
    assert "0.000%" in capsys.readouterr().out


def test_cli_reports_bad_input_as_error(capsys):
    assert cli.main(["run", "--r", "5"]) == 2
    assert "n_classes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["run", "--dataset", "mnist"])
