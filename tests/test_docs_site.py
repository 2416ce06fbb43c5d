"""The documentation site builds with zero warnings, nitpicky, as CI builds it.

This is the README's documentation command (``sphinx-build -W -n --keep-going``) run into a
temporary folder: a docstring that breaks reStructuredText or names an object that has no
page fails here, with the warnings listed.  The generated sources (``docs/api/generated``,
``docs/auto_examples``) are written inside ``docs/`` and git-ignored.

Also checked, without building: the README's links and every benchmark script or stored
result that the README and the benchmark pages name exist in the repository (a figure moved
with its source keeps a source that can be opened).
"""

import importlib
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
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
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
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


def test_user_guide_benchmarks_and_design_are_separate_sections(site):
    """The index's toctrees: the user guide, then the benchmarks and the design page, each its
    own section; every benchmark page is built under ``benchmarks/``."""
    index = (site / "index.html").read_text(encoding="utf-8")
    captions = re.findall(r'caption-text">([^<]*)<', index)
    assert captions == ["User guide", "Benchmarks", "Design"], captions
    for page in sorted((DOCS / "benchmarks").glob("*.rst")):
        assert (site / "benchmarks" / f"{page.stem}.html").is_file(), page.name


def _named_sources(text: str) -> set[str]:
    """The benchmark scripts and stored results named (in backticks) in ``text``, as
    repository paths or globs: ``benchmarks/...`` as written, a bare ``bench_*.py`` or
    ``soak.py`` under ``benchmarks/``, a bare ``.txt`` or ``.jsonl`` under
    ``benchmarks/results/`` (where the pages say their sources are)."""
    named = set()
    for token in re.findall(r"`+([\w.*|/-]+\.(?:txt|jsonl|py))(?:\|\w+)?`+", text):
        if token.startswith("benchmarks/"):
            named.add(token)
        elif "/" in token:
            continue  # library or test code: not a benchmark source
        elif token.endswith(".py"):
            if token.startswith(("bench_", "soak")):
                named.add(f"benchmarks/{token}")
        else:
            named.add(f"benchmarks/results/{token}")
    return named


@pytest.mark.parametrize("doc", ["README.md", *sorted(
    str(p.relative_to(ROOT)) for p in (DOCS / "benchmarks").glob("*.rst"))])
def test_named_benchmark_sources_exist(doc):
    named = _named_sources((ROOT / doc).read_text(encoding="utf-8"))
    assert named, f"{doc} names no benchmark script or stored result"
    missing = [path for path in sorted(named) if not any(ROOT.glob(path))]
    assert not missing, f"{doc} names files that do not exist: {missing}"


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"
