"""Second-order optimality certificates from Hessian-vector products.

At a point M, the Riemannian Hessian is a self-adjoint operator on the tangent space (the
horizontal space on Grassmann).  In an orthonormal basis of that space (built by
:meth:`ldr.manifolds.Manifold.tangent_basis`) it is a symmetric matrix; its extreme
eigenvalues come from Lanczos (``scipy.sparse.linalg.eigsh``) on Hessian-vector products, or
from a dense ``eigh`` when the space is small.  A local minimizer has a vanishing gradient and
a positive-semidefinite Hessian.

Where theory gives a *global* test, the objective provides ``global_gap(M)``: an upper bound
on the relative suboptimality ``(f(M) − f*)/|f*|`` that is 0 exactly at a global minimizer — for a
quotient of traces (LDA, MAF, LPP/NPE ratio forms, :class:`~ldr.objectives.QuotientOfTraces`)
from the Dinkelbach/trace-ratio theorem, for PCA from the eigenvalues of C.  The certificate
then reports ``global_optimum`` True/False; None where no global test is known.

For a point of another array namespace than NumPy (a PyTorch tensor, on a GPU or not), the
gradient and every Hessian-vector product are computed in that namespace and on that device,
by the objective's own oracles; the eigenvalue solver (``eigsh``, which has no array API
path) works on the host: each product's d×r answer is copied there, and its direction back.
"""

from __future__ import annotations

import math
import time

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from ldr.core.deprecation import renamed_keywords
from ldr.core.errors import BudgetExceeded
from ldr.core.objective import Objective
from ldr.core.problem import Problem
from ldr.core.result import Certificate
from ldr.data import arrays


def hessian_operator(problem: Problem, M):
    """``(dim, matvec)``: the Riemannian Hessian at ``M`` in an orthonormal tangent basis."""
    geom = problem.manifold
    G = problem.egrad(M)
    dim, to_vector, to_coords = geom.tangent_basis(M)
    hess = problem.hess_operator(M, G)

    def matvec(c):
        c = np.asarray(c, dtype=float).reshape(-1)
        return to_coords(arrays.to_host(hess(arrays.like(to_vector(c), M))))

    return dim, matvec


#: the names of an earlier release (old → new), accepted with a FutureWarning
RENAMED = {"gtol": "tol", "gtol_scale": "tol_scale"}


def certificate(objective: Objective | Problem, M, *, tol: float = 1e-8, tol_scale=None,
                hess_tol: float = 1e-8, global_tol: float = 1e-8,
                dense_max: int = 200, max_time: float = math.inf, **renamed) -> Certificate:
    """Riemannian gradient norm, extreme Hessian eigenvalues and, where the objective has a
    global test, global optimality at ``M``.

    Parameters
    ----------
    objective : Objective (or Problem)
    M : point on the objective's manifold
    tol : float, default 1e-8
        Relative gradient-norm tolerance for ``is_local_min``, as :func:`ldr.solve`'s.
    tol_scale : float or None
        What ``tol`` is relative to; None: the problem's gradient scale
        (:meth:`~ldr.core.problem.Problem.gradient_scale` with M as its start), 1.0 for an
        absolute ``tol``.
    hess_tol : float, default 1e-8
        Relative tolerance on negative eigenvalues for ``psd``.
    global_tol : ``global_optimum`` holds when the objective's ``global_gap(M)`` (a bound on
        the relative suboptimality) is at most this
    dense_max : tangent dimensions up to this use a dense ``eigh``; larger ones use Lanczos.
    max_time : seconds for the whole certificate; no oracle call starts that would overrun
        it (``ldr.core.problem.Problem.deadline``).  When they run out, what was not computed
        is NaN and ``method`` says so (:attr:`~ldr.Certificate.second_order` is then
        ``"unknown"``).

    The names of an earlier release, ``gtol`` and ``gtol_scale``, still work for one release
    and warn (FutureWarning).  (``tol`` was the Hessian tolerance before: it is ``hess_tol``
    now.)
    """
    if renamed:
        named = renamed_keywords("ldr.certificate", renamed, RENAMED,
                                 {"tol": tol, "tol_scale": tol_scale})
        tol = named["tol"]
        tol_scale = named["tol_scale"]
    problem = objective if isinstance(objective, Problem) else Problem(objective)
    M = problem.manifold.validate_point(M, "M")
    saved = problem.deadline
    problem.deadline = min(saved, time.perf_counter() + max_time)
    out = {"grad_norm": np.nan, "hess_min": np.nan, "hess_max": np.nan, "dim": 0,
           "grad_scale": np.nan if tol_scale is None else float(tol_scale),
           "global_gap": None}
    products = [0]
    try:
        G = problem.egrad(M)
        out["grad_norm"] = grad_norm = problem.manifold.norm(problem.rgrad(M, G))
        if tol_scale is None:
            out["grad_scale"] = problem.gradient_scale(grad_norm=grad_norm,
                                                       start=(M, problem.cost(M)))
        if problem.provides("global_gap"):
            out["global_gap"] = float(problem.objective.global_gap(M))
        if not problem.objective.available("ehvp"):
            method = "not computed: the objective has no ehvp (backend='numpy')"
        else:
            out["dim"], matvec = hessian_operator(problem, M)

            def counted(c):
                out = matvec(c)
                products[0] += 1
                return out

            out["hess_min"], out["hess_max"], method = _extremes(out["dim"], counted,
                                                                 dense_max)
    except BudgetExceeded:
        method = (f"not computed: the time budget ran out after {products[0]} of "
                  f"{out['dim'] or '?'} Hessian-vector products")
    finally:
        problem.deadline = saved
    return Certificate(grad_norm=out["grad_norm"], hess_min=out["hess_min"],
                       hess_max=out["hess_max"], dim=out["dim"], tol=tol, hess_tol=hess_tol,
                       method=method, grad_scale=float(out["grad_scale"]),
                       global_gap=out["global_gap"], global_tol=global_tol)


def _extremes(dim: int, matvec, dense_max: int) -> tuple[float, float, str]:
    """The smallest and largest eigenvalue of the symmetric operator ``matvec`` on R^dim,
    and how they were computed."""
    if dim <= dense_max:
        H = np.column_stack([matvec(e) for e in np.eye(dim)])
        w = scipy.linalg.eigvalsh(0.5 * (H + H.T))
        return float(w[0]), float(w[-1]), "dense eigh"
    op = LinearOperator((dim, dim), matvec=matvec, dtype=float)
    v0 = np.ones(dim) / np.sqrt(dim)
    try:
        hi = float(eigsh(op, k=1, which="LA", tol=1e-10, v0=v0, return_eigenvectors=False)[0])
        lo = float(eigsh(op, k=1, which="SA", tol=1e-10, v0=v0, return_eigenvectors=False)[0])
        return lo, hi, "Lanczos (eigsh)"
    except ArpackNoConvergence as exc:
        vals = exc.eigenvalues
        lo = float(np.min(vals)) if len(vals) else np.nan
        hi = float(np.max(vals)) if len(vals) else np.nan
        return lo, hi, "Lanczos (eigsh, NOT converged)"
