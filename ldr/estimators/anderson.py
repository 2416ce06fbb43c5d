"""Anderson acceleration of an alternation whose state is a subspace.

The clustering estimators alternate an embedding step and an assignment step; each round is
a map G of the subspace spanned by W (d×q, orthonormal) — the kernel of XW, and so the next
round, depends on W only through the projector P = WWᵀ.  The plain alternation
``W ← G(W)`` converges linearly, at the rate of G's contraction near its fixed point (the
ratio of consecutive changes), which may be close to 1.

Anderson acceleration (type II, Walker & Ni 2011, Eq. 2.1 there) keeps the last ``depth``
differences of the iterates x = vec(P) and of their residuals f = G(x) − x, solves the small
least-squares problem γ = argmin ‖f_k − ΔF γ‖ and proposes x⁺ = G(x_k) − ΔG γ — the secant
(multisecant quasi-Newton) step on the fixed-point equation G(x) = x.  The proposal is not a
projector: the nearest rank-q projector is its top-q eigenvectors.  Safeguard: when a
round's residual is not smaller than ``restart`` × the previous one, the history is dropped
and the plain step G(x) is taken (it is the alternation itself).  The fixed point, and so
what the estimator returns when it converges, is the plain alternation's: only the path to
it changes.

References
----------
Walker & Ni (2011), Anderson acceleration for fixed-point iterations, SIAM J. Numer. Anal.
49(4), 1715–1735.
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.manifolds import sin_largest_angle


class SubspaceAnderson:
    """Anderson-accelerated proposals for a fixed point of a map of q-dimensional subspaces
    of R^d, represented by orthonormal bases (d×q)."""

    def __init__(self, depth: int = 5, restart: float = 1.0):
        self.depth = depth
        self.restart = restart
        self._x: list[np.ndarray] = []
        self._g: list[np.ndarray] = []
        self._last_residual = np.inf
        self.restarts = 0

    def step(self, W_in: np.ndarray, W_out: np.ndarray) -> np.ndarray:
        """The next input W from the last round's input ``W_in`` and output G(W_in) =
        ``W_out``: Anderson's proposal, or ``W_out`` (plain step) at a restart.  Bases of
        another namespace (d×q on a device) are read on the host, where the history of
        d²-vectors is kept; the proposal is returned in ``W_in``'s namespace."""
        W_host = arrays.host_float64(W_in)
        W_host_out = arrays.host_float64(W_out)
        x = (W_host @ W_host.T).ravel()
        g = (W_host_out @ W_host_out.T).ravel()
        residual = float(np.linalg.norm(g - x))
        if residual >= self.restart * self._last_residual:
            self._x = []  # no progress: drop the history, take the plain step
            self._g = []
            self.restarts += 1
        self._last_residual = residual
        self._x.append(x)
        self._g.append(g)
        if len(self._x) > self.depth + 1:
            self._x.pop(0)
            self._g.pop(0)
        if len(self._x) < 2:
            return W_out
        X = np.array(self._x)
        G = np.array(self._g)
        F = G - X
        dF = np.diff(F, axis=0).T
        dG = np.diff(G, axis=0).T
        gamma = np.linalg.lstsq(dF, F[-1], rcond=1e-10)[0]
        P = (G[-1] - dG @ gamma).reshape(W_in.shape[0], W_in.shape[0])
        _, V = np.linalg.eigh(0.5 * (P + P.T))
        return arrays.like(V[:, ::-1][:, :W_in.shape[1]], W_in)


def alternate(U, dm, round_, max_outer: int, outer_tol: float, acceleration,
              inexact: bool = False, report=None):
    """Run an alternation from the embedding ``(U, dm)``: ``round_(U, dm, W, exact)`` fits W
    from the embedding (warm-started at W, None in the first round) and returns ``(W_out,
    embed, record)`` — ``embed(W)`` the embedding of a subspace, ``record`` the round's entries
    of ``history_``.  A round's change is sin θ(U, embed(W_out)), its fixed-point residual; the
    next round starts from W_out or, with ``acceleration="anderson"``, from
    :class:`SubspaceAnderson`'s proposal.

    ``exact`` is True for every round unless ``inexact``; then it is True only once a round's
    change is within ``outer_tol`` and in round ``max_outer``: an inexact round may take one
    step of the W-step's fixed-point iteration instead of solving it
    (:mod:`ldr.estimators.hsic_alternation`), so that the alternation and the W-step's
    iteration converge together; the alternation stops only on an exact round within
    ``outer_tol``.  ``report``, when given, is called with each round's record (its
    ``history_`` entry) as the round ends.  Returns ``(U, history, rounds, last change)``."""
    if acceleration not in ("anderson", None):
        raise ParameterError("acceleration", f"expected 'anderson' or None, got "
                             f"{acceleration!r}")
    accelerate = SubspaceAnderson() if acceleration == "anderson" else None
    W = None
    history = []
    change = np.inf
    for it in range(1, max_outer + 1):
        exact = not inexact or change <= outer_tol or it == max_outer
        W_out, embed, record = round_(U, dm, W, exact)
        if not exact and W is not None:  # its residual in W: no U-step at W_out
            change = sin_largest_angle(W, W_out)
            history.append({"outer": it, **record, "w_change": change})
            if report is not None:
                report(history[-1])
            W_next = W_out if accelerate is None else accelerate.step(W, W_out)
            W = W_next
            U, dm = embed(W)
            continue
        U_out, dm_out = embed(W_out)
        change = sin_largest_angle(U, U_out)
        history.append({"outer": it, **record, "u_change": change})
        if report is not None:
            report(history[-1])
        if change <= outer_tol or accelerate is None or W is None:
            W = W_out
            U = U_out
            dm = dm_out
        else:
            W_next = accelerate.step(W, W_out)
            U, dm = (U_out, dm_out) if W_next is W_out else embed(W_next)
            W = W_next
        if change <= outer_tol and exact:
            break
    return U, history, it, change
