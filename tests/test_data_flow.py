"""X flows one way: followed at run time from ``fit``, the data return to a library module they
had left at most twice, for every estimator.

The walk records each call of a library function that receives X (the array given to ``fit``,
the validated array that replaces it, a view of either, or the ``FitData`` carrying it) on the
chain of calls that handed X on.  A *return* is a call into a module that is already on that
chain below its caller's module: X handed back to a module it had left (``base → family →
base``).  A hook the pipeline calls and that returns is no return; a hook that calls back into
the pipeline's module is one."""

import sys
import warnings

import numpy as np
import pytest
from test_units import FITS, build_case

import ldr.estimators as E

LIBRARY = ("ldr", "objectives", "solvers")


def returns_of(est, X, *target) -> set[str]:
    """The distinct returns of X while ``est.fit(X, *target)`` runs, each as the chain of
    modules ending in the module re-entered and the function called there."""
    tracked = {id(X)}
    alive = [X]  # every tracked array kept alive: a freed one's id is reused by new arrays
    stack = []  # (frame id, module) of the calls that hold X
    returns = set()

    def holds_x(frame) -> bool:
        for value in frame.f_locals.values():
            if id(value) in tracked:
                return True
            if isinstance(value, np.ndarray):
                if value.base is not None and id(value.base) in tracked:
                    tracked.add(id(value))
                    alive.append(value)
                    return True
                continue
            carried = getattr(value, "X", None)
            if carried is not None and id(carried) in tracked:
                return True
        return False

    def profile(frame, event, arg):
        module = frame.f_globals.get("__name__", "")
        if event == "return":
            if stack and stack[-1][0] == id(frame):
                stack.pop()
                carried = getattr(arg, "X", None)  # the FitData the validation returns
                if isinstance(carried, np.ndarray):
                    tracked.add(id(carried))
                    alive.append(carried)
            return
        if event != "call" or not module.startswith(LIBRARY) or not holds_x(frame):
            return
        chain = []
        for _, held in stack:
            if not chain or chain[-1] != held:
                chain.append(held)
        if chain and chain[-1] != module and module in chain[:-1]:
            returns.add(" → ".join(chain + [module]) + f" ({frame.f_code.co_name})")
        stack.append((id(frame), module))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            est.fit(X, *target)
        finally:
            sys.setprofile(None)
    return returns


@pytest.mark.parametrize("name", sorted(FITS))
def test_x_returns_at_most_twice(name):
    est, X_fit, target = build_case(name)
    returns = returns_of(est, X_fit, *target)
    assert len(returns) <= 2, "\n".join(sorted(returns))


def test_the_walk_sees_a_return():
    """The walk is not blind: a family module whose hook hands X back to the pipeline's
    module (here a function of ``ldr.estimators.base``) is counted."""
    family = {"__name__": "ldr.estimators.family", "E": E}
    exec(
        "class Back(E.PCA):\n"
        "    def _prepare(self, data):\n"
        "        E.base.sign_rule(data.X)\n"
        "        super()._prepare(data)\n", family)
    X = np.random.default_rng(0).standard_normal((40, 4))
    returns = returns_of(family["Back"](2), X)
    assert returns == {"ldr.estimators.base → ldr.estimators.family → ldr.estimators.base "
                       "(sign_rule)"}
