"""The house's floors and rooms: which package may import which, modules by concept, no
import cycles.

Every ``import`` of an ldr module anywhere in a file — at the top or inside a function — is
read from the source (``ast``) and must point to the same floor or a lower one:

0. the ground: the Objective, the Problem, manifolds, results, errors, the stopping rules,
   ``ldr.data`` (validation, moments, rows, files), ``ldr.kernels``, ``ldr.datasets``;
1. ``ldr.objectives`` and ``ldr.solvers`` (neither imports the other);
2. the driver and what runs it: ``ldr.driver``, ``ldr.certificate``, ``ldr.driver.checks``,
   ``ldr.compare``, ``ldr.driver.answers``, ``ldr.driver.tables``, ``ldr.driver.registry``;
3. ``ldr.estimators`` — the pipeline (``base``) and one module per family of estimators, which
   imports the pipeline and shared helpers but no sibling family;
4. the command line and the package's front door (``ldr.cli``, ``ldr/__init__.py``).

A function-local import is fine for laziness (a heavy dependency, a downward arrow) but
cannot hide an upward one.

Modules hold one concept each and are named for it: no name that starts with an underscore
(a module's private name, or a private module) is imported from another module — what
crosses a module's boundary is public.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: installed module prefix → folder of the checkout
FOLDERS = {"ldr.objectives": ROOT / "objectives", "ldr.solvers": ROOT / "solvers",
           "ldr": ROOT / "ldr"}
#: floor 0: the protocols, the manifolds, data in and statistics out, the kernels
GROUND = ("ldr.core", "ldr.manifolds", "ldr.data", "ldr.kernels")
#: floor 2: the loop, certificates, checks, comparisons, the registry
DRIVER = ("ldr.driver",)


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            if prefix == "ldr" and parts and parts[0] in ("objectives", "solvers"):
                continue
            out[name] = path
    return out


MODULES = _modules()


def floor(name: str) -> int:
    if name == "ldr" or name == "ldr.cli" or name.startswith("ldr.cli."):
        return 4
    if name.startswith("ldr.estimators"):
        return 3
    if name.startswith(DRIVER):
        return 2
    if name.startswith(("ldr.objectives", "ldr.solvers")):
        return 1
    if name.startswith(GROUND):
        return 0
    raise AssertionError(f"{name} is on no floor: add it to tests/test_layout.py")


def _resolve(module: str, node: ast.AST, is_package: bool) -> list[str]:
    """The ldr modules an import statement reads (``from ldr import x`` names module x when
    it is one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "ldr"]
    assert isinstance(node, ast.ImportFrom)
    if node.level:  # relative imports are not used in ldr; resolve them anyway
        base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "ldr":
        return []
    out = []
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.append(sub if sub in MODULES else target)
    return out


def imports(name: str, top_level_only: bool = False) -> set[str]:
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(_resolve(name, node, path.name == "__init__.py"))
    found.discard(name)
    return found


def test_every_module_has_a_floor():
    for name in MODULES:
        floor(name)
    assert "ldr.estimators.base" in MODULES and "ldr.driver.registry" in MODULES


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name):
    """No module imports one on a higher floor, at the top or inside a function."""
    up = sorted(m for m in imports(name) if floor(m) > floor(name))
    assert not up, f"{name} (floor {floor(name)}) imports {up} from above"


def test_objectives_and_solvers_do_not_import_each_other():
    for name in MODULES:
        if name.startswith("ldr.objectives"):
            assert not [m for m in imports(name) if m.startswith("ldr.solvers")], name
        if name.startswith("ldr.solvers"):
            assert not [m for m in imports(name) if m.startswith("ldr.objectives")], name


def _families() -> set[str]:
    """The modules of ``ldr.estimators`` that define an estimator it exports."""
    init = ast.parse(MODULES["ldr.estimators"].read_text(encoding="utf-8"))
    return {node.module for node in init.body
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.startswith("ldr.estimators.") and node.module != "ldr.estimators.base"}


def test_estimator_families_do_not_import_each_other():
    """A family module (ldr/estimators/pca.py, ...) imports the pipeline and shared helpers,
    never a sibling family."""
    families = _families()
    assert "ldr.estimators.pca" in families
    for name in families:
        siblings = sorted(m for m in imports(name) if m in families and m != name)
        assert not siblings, f"{name} imports the families {siblings}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_name_crosses_a_module_boundary(name):
    """No ``from ldr.x import _name`` and no import of a private module ``ldr.x._y``: what
    one module uses of another is public (tests may read internals; the library may not)."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ldr":
            if any(part.startswith("_") for part in node.module.split(".")):
                found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "ldr"
                      and any(part.startswith("_") for part in a.name.split("."))]
    assert not found, f"{name} imports private names {found}"


def test_no_import_cycles():
    """The graph of top-level imports between ldr's modules has no cycle (package
    ``__init__`` files aside: they import their own modules by design)."""
    graph = {n: {m for m in imports(n, top_level_only=True) if m in MODULES
                 and not MODULES[m].name == "__init__.py"}
             for n in MODULES if MODULES[n].name != "__init__.py"}
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " → ".join(path + [node, nxt]))
            if nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_no_file_cites_a_path_outside_the_repository():
    """Every file a user's clone holds is self-contained: none cites ../shared/ or a path
    above the repository."""
    tracked = [p for p in ROOT.rglob("*") if p.is_file() and p.suffix in (
        ".py", ".md", ".rst", ".ipynb", ".cfg", ".toml", ".txt")
        and not any(part.startswith(".") or part in ("_build", "generated", "auto_examples")
                    for part in p.relative_to(ROOT).parts)]
    offenders = [str(p.relative_to(ROOT)) for p in tracked
                 if "../shared" in p.read_text(encoding="utf-8", errors="replace")
                 and p.name != "test_layout.py"]
    assert not offenders, offenders
