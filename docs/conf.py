"""Sphinx configuration of ldr's documentation site.

Build (what CI does through ``tests/test_docs_site.py``)::

    .venv/bin/sphinx-build -W -n --keep-going -b html docs docs/_build/html

``-W -n``: every warning, an unresolved cross-reference included, fails the build.
Generated sources (``docs/api/generated/``, ``docs/auto_examples/``) are git-ignored.
"""

from __future__ import annotations

import os
import pathlib
import shutil

import ldr
import ldr.driver.registry

HERE = pathlib.Path(__file__).resolve().parent
# Neither autosummary nor sphinx-gallery deletes a page whose source is gone: start from none,
# so a name removed from api.rst or a renamed example leaves no stale page behind (it would
# fail the build as "not included in any toctree").  The gallery's scripts then run anew.
for generated in ("api/generated", "auto_examples"):
    shutil.rmtree(HERE / generated, ignore_errors=True)

# The method table of concepts.rst, from the one registry (ldr.driver.registry): a new method
# appears without an edit here
(HERE / "methods_table.rst").write_text(ldr.driver.registry.rst_table(), encoding="utf-8")

project = "ldr"
author = "the ldr developers"
copyright = "the ldr developers"  # noqa: A001  (Sphinx's name)
version = release = ldr.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "examples", "methods_table.rst", "**.ipynb_checkpoints",
                    "notebooks/figures",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
templates_path = ["_templates"]
default_role = "autolink"  # `name`: a checked cross-reference if it imports, else *name*

# -- API pages: one generated page per public name (docs/api.rst lists them) ----------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"   # types are in the numpydoc sections; signatures stay readable
numpydoc_show_class_members = False   # the class template lists members (no duplicates)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


def _public_bases(cls):
    """``cls``'s bases with each private one (``_Name``) replaced by its own public bases."""
    out = []
    for base in cls.__bases__:
        for b in ([base] if not base.__name__.startswith("_") else _public_bases(base)):
            if b not in out and b is not object:
                out.append(b)
    return out


def _process_bases(app, name, obj, options, bases):
    """Show public base classes only: a private helper class has no page to link to."""
    bases[:] = _public_bases(obj) or [object]


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Document inherited members of ldr's own classes, not scikit-learn's (``get_params``,
    ``set_output``, ...): their docstrings link into scikit-learn's site, unavailable here."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and module and not module.startswith("ldr"):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-bases", _process_bases)
    app.connect("autodoc-skip-member", _skip_foreign_member)

# -- Cross-references to other projects ---------------------------------------------------
# No intersphinx: the build runs offline (CI has no network), so inventories of numpy,
# scipy, scikit-learn and Python cannot be downloaded.  References to those projects' names
# are therefore not links; the one deliberate list below keeps them from failing the
# nitpicky build.  Names of ldr itself are never ignored: an unresolved ``ldr.*`` fails.
_EXTERNAL = (r"(numpy|np|scipy|sklearn|autograd|pymanopt|dask|distributed|pandas|matplotlib|ot|tqdm"
             r"|argparse)")
nitpick_ignore_regex = [
    (r"py:.*", _EXTERNAL + r"(\..*)?"),
    # numpydoc type words and generic names that are not Python objects of any project
    (r"py:.*", r"(array|array-like|array_like|ndarray|callable|optional|default|of|or|shape"
               r"|Generator|RandomState|ArrayLike|NDArray)"),
]

# MathJax comes from its CDN (Sphinx's default); to read the site offline, point
# LDR_DOCS_MATHJAX at a local copy, e.g. file:///path/to/mathjax/es5/tex-mml-chtml.js.
if os.environ.get("LDR_DOCS_MATHJAX"):
    mathjax_path = os.environ["LDR_DOCS_MATHJAX"]

# -- Notebooks: rendered from their stored outputs, never re-executed ---------------------
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
suppress_warnings = ["mystnb.unknown_mime_type"]

# -- Example gallery: short scripts, executed at build time (a few seconds in all) -------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "reference_url": {"ldr": None},
    "show_memory": False,
}
os.environ.setdefault("MPLBACKEND", "Agg")

# -- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ldr {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": [], "quickstart": [], "concepts": []}
html_show_sourcelink = False
