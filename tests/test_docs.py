"""Doctests of every module (imported by its ``ldr.`` name) and the README's example."""

import doctest
import importlib
import pathlib
import re

import pytest


def _all_modules() -> list[str]:
    """Every module of the installed package (found by walking it, so a new module is
    included without editing this list)."""
    import pkgutil

    import ldr

    return ["ldr"] + sorted(info.name for info in pkgutil.walk_packages(ldr.__path__, "ldr.")
                            if info.name != "ldr.__main__")


MODULES = _all_modules()
README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


def _readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_marks_its_examples_python():
    """Every code block that is not a shell command is a ```python block (so it runs below)."""
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
    assert len(_readme_python_blocks()) >= 2  # the two examples
    untagged = [body for lang, body in blocks if lang == "" and "import " in body]
    assert not untagged, f"README code with imports not marked ```python: {untagged}"


@pytest.mark.parametrize("index", range(len(_readme_python_blocks())))
def test_readme_example_runs(index, capsys):
    """Each ```python block of the README runs as written, in a fresh namespace."""
    block = _readme_python_blocks()[index]
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(block, f"README.md python block {index}", "exec"), namespace)  # noqa: S102


def test_readme_has_exactly_two_setup_commands_and_ci_uses_the_test_one():
    text = README.read_text(encoding="utf-8")
    commands = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    assert len(commands) == 2
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1].strip() in ci
