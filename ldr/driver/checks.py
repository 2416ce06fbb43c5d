"""``ldr.check``: verify an objective's oracles numerically.

At a (random) point M, with unit random directions E:

* **egrad** — central differences ``(f(M+tE) − f(M−tE)) / 2t`` against ``⟨egrad(M), E⟩``,
  in ambient directions (egrad is the gradient of the cost's smooth extension), for
  ``t ∈ {1e-3, …, 1e-7}``; the best relative error must be below ``rtol``;
* **ehvp** — ``(egrad(M+tV) − egrad(M−tV)) / 2t`` against ``ehvp(M, V)``, same protocol;
* **phi** — the Φ-oracle contract ``egrad(M) = 2 Φ(M) M`` and ``Φ = Φᵀ``;
* **pencil** — A symmetric, B symmetric positive definite;
* **invariance** — ``f(MR) = f(M)`` for a random orthogonal R: required on Grassmann, and
  reported on Stiefel (an invariant cost can move to the cheaper Grassmann manifold).

Every row of the printed report says what it means: a test that passed or failed with its
error against its tolerance, an oracle the objective does not provide (and which solver would
need it), or a fact that cannot fail (a Stiefel cost that depends on the basis, as declared).

A deliberately wrong gradient (a factor, a sign, a missing term) gives a relative error of
order one, eight orders above the default tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ldr.core.deprecation import renamed_keywords
from ldr.core.linalg import scaled_norm
from ldr.core.objective import Objective
from ldr.core.problem import Problem
from ldr.manifolds import Euclidean, Grassmann

#: how the report names each check
LABELS = {"egrad": "gradient", "ehvp": "Hessian", "phi": "Φ-oracle", "pencil": "pencil",
          "invariance": "invariance"}


@dataclass
class CheckItem:
    """One row of a :class:`CheckReport`: ``kind`` is ``"test"`` (passed or failed:
    ``error`` against ``tol``), ``"info"`` (a fact reported, which cannot fail) or
    ``"absent"`` (an optional oracle the objective does not provide)."""

    name: str
    ok: bool
    error: float
    tol: float
    message: str
    kind: str = "test"

    def __str__(self) -> str:
        status = {"info": "info", "absent": " -- "}.get(self.kind, "ok  " if self.ok else "FAIL")
        text = self.message
        if self.kind == "test":
            text = (f"error {self.error:.1e} {'≤' if self.ok else '>'} tol {self.tol:.0e}: "
                    f"{text}")
        return f"[{status}] {LABELS.get(self.name, self.name):<10} {text}"


@dataclass
class CheckReport:
    """The outcome of :func:`check`; truthy when every item passed."""

    objective: str
    items: list[CheckItem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(item.ok for item in self.items)

    def __bool__(self) -> bool:
        return self.ok

    def __getitem__(self, name: str) -> CheckItem:
        for item in self.items:
            if item.name == name:
                return item
        raise KeyError(f"no check named {name!r}; have {[i.name for i in self.items]}")

    def __str__(self) -> str:
        lines = [f"ldr.check({self.objective}): {'PASS' if self.ok else 'FAIL'}"]
        return "\n".join(lines + [f"  {item}" for item in self.items])


_STEPS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


def _check_egrad(problem: Problem, M, rng, n_dirs: int, rtol: float) -> CheckItem:
    geom = problem.manifold
    G = problem.egrad(M)
    worst = 0.0
    for _ in range(n_dirs):
        E = geom.random_ambient(rng)
        E = geom.lincomb(1.0 / geom.norm(E), E)
        exact = geom.inner(G, E)
        scale = max(abs(exact), geom.norm(G), 1e-12)
        errs = [abs((problem.cost(geom.lincomb(1.0, M, t, E))
                     - problem.cost(geom.lincomb(1.0, M, -t, E))) / (2 * t)
                    - exact) / scale for t in _STEPS]
        worst = max(worst, min(errs))
    ok = worst <= rtol
    source = "hand-written" if problem.provides("egrad") else problem.objective.backend
    return CheckItem("egrad", ok, worst, rtol, (
        f"egrad ({source}) agrees with central differences of the cost" if ok else
        f"egrad ({source}) disagrees with central differences of the cost: the gradient is "
        "wrong (a factor, a sign or a missing term?)"))


def _check_ehvp(problem: Problem, M, rng, n_dirs: int, rtol: float) -> CheckItem:
    geom = problem.manifold
    worst = 0.0
    for _ in range(n_dirs):
        V = geom.random_ambient(rng)
        V = geom.lincomb(1.0 / geom.norm(V), V)
        exact = problem.ehvp(M, V)
        errs = []
        for t in _STEPS:
            fd = geom.lincomb(1 / (2 * t), problem.egrad(geom.lincomb(1.0, M, t, V)),
                              -1 / (2 * t), problem.egrad(geom.lincomb(1.0, M, -t, V)))
            diff = geom.lincomb(1.0, fd, -1.0, exact)
            errs.append(geom.norm(diff) / max(geom.norm(exact), geom.norm(problem.egrad(M)),
                                              1e-12))
        worst = max(worst, min(errs))
    ok = worst <= rtol
    source = "hand-written" if problem.provides("ehvp") else problem.objective.backend
    return CheckItem("ehvp", ok, worst, rtol, (
        f"ehvp ({source}) agrees with central differences of egrad" if ok else
        f"ehvp ({source}) disagrees with central differences of egrad: the Hessian-vector "
        "product is wrong (or egrad is)"))


def _check_phi(problem: Problem, M, rtol: float) -> CheckItem:
    Phi = problem.phi(M)
    G = problem.egrad(M)
    d = G.shape[0]
    if Phi.shape != (d, d):
        return CheckItem("phi", False, np.inf, rtol, f"phi(M) has shape {Phi.shape}, not {(d, d)}")
    asym = scaled_norm(Phi - Phi.T) / max(scaled_norm(Phi), 1e-300)
    err = scaled_norm(G - 2 * Phi @ M) / max(scaled_norm(G), scaled_norm(Phi), 1e-300)
    ok = err <= rtol and asym <= rtol
    return CheckItem("phi", ok, max(err, asym), rtol,
                     f"egrad(M) = 2 Φ(M) M {'holds' if err <= rtol else 'FAILS'} and Φ is "
                     f"{'symmetric' if asym <= rtol else 'NOT symmetric'} (asymmetry "
                     f"{asym:.1e}): ISM can use it")


def _check_pencil(problem: Problem, M, rtol: float) -> CheckItem:
    A, B = problem.pencil(M)
    asym = max(scaled_norm(A - A.T) / max(scaled_norm(A), 1e-300),
               scaled_norm(B - B.T) / max(scaled_norm(B), 1e-300))
    lmin = float(np.linalg.eigvalsh(0.5 * (B + B.T))[0])
    ok = asym <= rtol and lmin > 0
    return CheckItem("pencil", ok, asym, rtol,
                     f"A, B {'symmetric' if asym <= rtol else 'NOT symmetric'}, λ_min(B) = "
                     f"{lmin:.3e} ({'> 0' if lmin > 0 else 'B is NOT positive definite'}): "
                     f"{'SCF can use it' if ok else 'SCF cannot use it'}")


def _check_invariance(problem: Problem, M, rng, rtol: float) -> CheckItem:
    geom = problem.manifold
    factors = geom.factors

    def rotate(m):  # M → MR with R a random orthogonal r×r matrix (one per stacked factor)
        Q, _ = np.linalg.qr(rng.standard_normal((*m.shape[:-2], m.shape[-1], m.shape[-1])))
        return m @ Q

    MR = geom.apply(rotate, M)
    f = problem.cost(M)
    fR = problem.cost(MR)
    err = abs(f - fR) / max(abs(f), 1e-300)
    invariant = err <= rtol
    found = (f"to M → MR: {'invariant' if invariant else 'not invariant'} (error {err:.1e}, "
             f"tol {rtol:.0e})")
    if any(isinstance(m, Grassmann) for m in factors):
        msg = ("cost(MR) = cost(M), as a Grassmann cost must be" if invariant else
               "cost(MR) ≠ cost(M): NOT a Grassmann cost; declare manifold='stiefel'")
        return CheckItem("invariance", invariant, err, rtol, msg)
    if all(isinstance(m, Euclidean) for m in factors):
        return CheckItem("invariance", True, err, rtol,
                         f"{found}: nothing to check on a Euclidean manifold", kind="info")
    msg = (f"{found}: a Grassmann cost, so manifold='grassmann' would also do (and is cheaper)"
           if invariant else f"{found}: a Stiefel cost, as declared — fine")
    return CheckItem("invariance", True, err, rtol, msg, kind="info")


def _absent(name: str, who: str) -> CheckItem:
    return CheckItem(name, True, float("nan"), float("nan"), f"not provided ({who})",
                     kind="absent")


def check(objective: Objective, M=None, *, random_state=0, n_dirs: int = 3,
          rtol: float = 1e-6, **renamed) -> CheckReport:
    """Check ``objective``'s oracles at ``M``.

    Parameters
    ----------
    objective : ldr.Objective
    M : point on the objective's manifold, optional
        Where to check; default a random point drawn from ``random_state``.
    random_state : int or None, default 0
        Seeds the random point and the random directions of the finite differences.
    n_dirs : int, default 3
        Random directions per finite-difference check.
    rtol : float, default 1e-6
        Relative tolerance of the finite-difference checks.

    Returns
    -------
    CheckReport
        Truthy when every check passed; ``print`` it for a table.  (``seed``, the name of an
        earlier release, still works for one release and warns.)
    """
    if renamed:
        random_state = renamed_keywords("ldr.check", renamed, {"seed": "random_state"},
                                        {"random_state": random_state})["random_state"]
    problem = Problem(objective)
    rng = np.random.default_rng(random_state)
    M = problem.manifold.random_point(rng) if M is None else \
        problem.manifold.validate_point(M, "M")
    report = CheckReport(repr(objective))
    report.items.append(_check_egrad(problem, M, rng, n_dirs, rtol))
    report.items.append(_check_ehvp(problem, M, rng, n_dirs, rtol)
                        if problem.objective.available("ehvp") else
                        _absent("ehvp", "backend='numpy': the trust region and certificates "
                                "need one"))
    report.items.append(_check_phi(problem, M, 1e-10) if problem.provides("phi") else _absent(
        "phi", "ISM needs one: a symmetric Φ(M) with egrad(M) = 2 Φ(M) M"))
    report.items.append(_check_pencil(problem, M, 1e-10) if problem.provides("pencil") else
                        _absent("pencil", "SCF needs one: (A(M), B(M)) with B positive "
                                "definite"))
    report.items.append(_check_invariance(problem, M, rng, 1e-10))
    return report
