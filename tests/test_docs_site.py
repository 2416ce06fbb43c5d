"""The documentation site builds with zero warnings, nitpicky, as CI builds it.

This is the README's documentation command (``sphinx-build -W -n --keep-going``) run into a
temporary folder: a docstring that breaks reStructuredText or names an object that has no
page fails here, with the warnings listed.  The generated sources (``docs/api/generated``,
``docs/auto_examples``) are written inside ``docs/`` and git-ignored.
"""

import importlib
import os
import pathlib
import re
import subprocess
import sys

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
PACKAGES = ["ldr", "ldr.objectives", "ldr.solvers", "ldr.estimators"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("sphinx", reason="sphinx is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs")
    cmd = [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    # cwd outside the repository: `python -m` puts the cwd on sys.path, and the checkout's
    # ldr/ would shadow the installed package (whose ldr.objectives is mapped).
    proc = subprocess.run(cmd, cwd=out, capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    problems = [line for line in (proc.stderr + proc.stdout).splitlines()
                if re.search(r"WARNING|ERROR|Error|Traceback", line)]
    assert proc.returncode == 0, (
        f"sphinx-build failed ({len(problems)} problems; fix the docstring or page named, "
        f"or see docs/conf.py for the external names deliberately ignored):\n"
        + "\n".join(problems[:60]) + "\n--- end of output ---\n" + proc.stderr[-3000:])
    return out / "html"


def test_site_builds_without_warnings(site):
    assert (site / "index.html").is_file()


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_has_an_api_page(site, package):
    names = importlib.import_module(package).__all__
    api_index = (site / "api.html").read_text(encoding="utf-8")

    def documented(name):
        page = f"api/generated/{package}.{name}.html"
        return ((site / page).is_file() and f'href="{page}"' in api_index
                or f'id="module-{package}.{name}"' in api_index)  # a subpackage's section

    missing = [n for n in names if not documented(n)]
    assert not missing, f"add to docs/api.rst (under {package}): {missing}"


def test_notebooks_rendered_from_stored_outputs_with_figures(site):
    notebooks = sorted((DOCS.parent / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 7
    for nb in notebooks:
        html = (site / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert re.search(r'<img[^>]+src="[^"]+\.png"', html), f"{nb.name}: no figure rendered"


def test_gallery_examples_ran_and_show_figures(site):
    scripts = sorted((DOCS / "examples").glob("plot_*.py"))
    assert len(scripts) >= 3
    index = (site / "auto_examples" / "index.html").read_text(encoding="utf-8")
    for script in scripts:
        page = site / "auto_examples" / f"{script.stem}.html"
        assert f"{script.stem}.html" in index
        assert re.search(r'<img[^>]+sphx_glr_' + script.stem + r'_\d+\.png',
                         page.read_text(encoding="utf-8")), f"{script.name}: no figure"
