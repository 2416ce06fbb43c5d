"""Solvers, one per module, each named by a short string.

========================  ==================================  =====================
name                      class (in ``ldr.solvers``)          needs
========================  ==================================  =====================
``"gradient"``            :class:`GradientDescent`            cost (+ egrad)
``"conjugate-gradient"``  :class:`ConjugateGradient`          cost (+ egrad)
``"lbfgs"``               :class:`LBFGS`                      cost (+ egrad)
``"trust-region"``        :class:`TrustRegion`                cost, egrad, ehvp
``"pymanopt"``            :class:`Pymanopt`                   cost (+ egrad, ehvp)
``"ism"``                 :class:`ISM`                        phi (+ phi0)
``"scf"``                 :class:`SCF`                        pencil
``"sgd"``                 :class:`SGD`                        n_terms, batch
``"adam"``                :class:`Adam`                       n_terms, batch
``"svrg"``                :class:`SVRG`                       n_terms, batch
========================  ==================================  =====================

The last three are stochastic: for a cost that is a sum of terms (``n_terms``, ``batch``:
:class:`ldr.Objective`), one iteration is one epoch of mini-batches, and the driver certifies
their runs on the full gradient only (:func:`ldr.solve`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ldr.core.errors import ParameterError
from ldr.solvers.adam import Adam
from ldr.solvers.base import Solver, State
from ldr.solvers.conjugate_gradient import ConjugateGradient
from ldr.solvers.gradient import GradientDescent
from ldr.solvers.ism import ISM
from ldr.solvers.lbfgs import LBFGS
from ldr.solvers.pymanopt_adapter import Pymanopt
from ldr.solvers.scf import SCF
from ldr.solvers.sgd import SGD
from ldr.solvers.svrg import SVRG
from ldr.solvers.trust_region import TrustRegion

REGISTRY: dict[str, type[Solver]] = {
    "gradient": GradientDescent,
    "conjugate-gradient": ConjugateGradient,
    "lbfgs": LBFGS,
    "trust-region": TrustRegion,
    "pymanopt": Pymanopt,
    "ism": ISM,
    "scf": SCF,
    "sgd": SGD,
    "adam": Adam,
    "svrg": SVRG,
}


def register(name: str, cls: type[Solver]) -> None:
    """Make ``cls`` available by ``name`` wherever a solver is accepted."""
    REGISTRY[name] = cls


def get_solver(spec) -> Solver:
    """A Solver instance from a name or an instance."""
    if isinstance(spec, Solver):
        return spec
    if isinstance(spec, str):
        if spec not in REGISTRY:
            raise ParameterError(
                "solver", f"unknown name {spec!r}; choose one of {sorted(REGISTRY)}")
        return REGISTRY[spec]()
    raise ParameterError("solver", f"expected a name {sorted(REGISTRY)} or a Solver, got {spec!r}")


def chain(spec) -> list[Solver]:
    """The solvers of ``spec``: a name, an instance, or a list of them (a chain, each stage
    starting where the last stopped), as :func:`ldr.solve` takes it."""
    specs = list(spec) if isinstance(spec, Sequence) and not isinstance(spec, str) else [spec]
    if not specs:
        raise ParameterError("solver", "an empty chain was given")
    return [get_solver(s) for s in specs]


__all__ = ["ISM", "LBFGS", "REGISTRY", "SCF", "SGD", "SVRG", "Adam", "ConjugateGradient",
           "GradientDescent", "Pymanopt", "Solver", "State", "TrustRegion", "chain", "get_solver",
           "register"]
