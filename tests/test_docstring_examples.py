"""Every docstring example of the library runs and prints what it shows, in the current
vocabulary: a deprecated name (a FutureWarning) in an example is a failure."""

import doctest
import importlib
import pkgutil
import warnings

import pytest

import ldr
import ldr.objectives
import ldr.solvers


def _modules():
    seen = set()
    for package in (ldr, ldr.objectives, ldr.solvers):
        for name in [package.__name__] + [info.name for info in pkgutil.walk_packages(
                package.__path__, package.__name__ + ".")]:
            if name not in seen:
                seen.add(name)
                yield name


def _with_examples():
    names = []
    finder = doctest.DocTestFinder()
    for name in _modules():
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional backend's module
            continue
        if any(test.examples for test in finder.find(module)):
            names.append(name)
    return names


@pytest.mark.parametrize("name", _with_examples())
def test_the_examples_run_in_the_current_vocabulary(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS
                                 | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed"
