"""WDA's entropic transport per pair of classes in bounded memory: Sinkhorn in the log domain
(potentials), products with its plans from one stored reference kernel or by row blocks, and
the gradient of ⟨T, M⟩ by a reverse pass that recomputes the iterates (checkpointing).

Notation (POT's convention, :mod:`ldr.objectives._sinkhorn`): rows Ya (n×p) and Yb (m×p),
M_ij = ‖ya_i − yb_j‖², S = −M/reg, a = 1/n, b = 1/m.  ``n_iter`` = N Sinkhorn iterations
from f_0 = 0, in potentials (u = e^f, v = e^g of the scaling form):

    g_t = log b − LSE_i(S_ij + f_{t−1,i}),   f_t = log a − LSE_j(S_ij + g_tj),       (1)
    T = exp(S + f_N ⊕ g_N),   ℓ = ⟨T, M⟩.                                              (2)

With the column-stochastic P^t = m·exp(S + f_{t−1} ⊕ g_t) and the row-stochastic
Q^t = n·exp(S + f_t ⊕ g_t), the reverse pass of (1)–(2) is, from f̄_N = (T∘M)1 and
ḡ_N = (T∘M)ᵀ1, for t = N, …, 1:

    ḡ_t ← ḡ_t − Q^tᵀ f̄_t,   f̄_{t−1} = −P^t ḡ_t   (ḡ_t = 0 for t < N before the update),  (3)
    W = dℓ/dM = T − (T∘M)/reg + (1/reg) Σ_t (diag(f̄_t) Q^t + P^t diag(ḡ_t)),            (4)

and ∇_Ya ℓ = 2(diag(W1) Ya − W Yb), ∇_Yb ℓ = 2(diag(Wᵀ1) Yb − Wᵀ Ya).  W is never formed:
(4) enters only through W1, Wᵀ1, W Yb and Wᵀ Ya, which are accumulated from the products
of (3) with a few columns.  The pass keeps the 2N potentials (O(n + m) each), never an n×m
array per iteration: its memory does not grow with N.  Multipliers are stochastic matrices,
so (3) needs no scaling of u² or v² and cannot overflow.

Every product is with E(f, g) = exp(S + f ⊕ g), whose entries are at most 1 here.  When
``n·m`` entries fit ``cache_bytes`` one reference kernel K̃ = exp(S + α ⊕ β) is stored and
E(f, g) = diag(e^{f−α}) K̃ diag(e^{g−β}) is a matrix product (the scaling form's speed); the
reference is re-centred on the current potentials (one ``exp`` pass, as the stabilized
Sinkhorn of Schmitzer 2019 absorbs its scalings) whenever the factors would over- or
underflow.  Otherwise each product recomputes E by row blocks of about
``TARGET_BLOCK_BYTES`` (:mod:`ldr.kernels.tiles`), so no n×m array exists.  Both give the
iterates of (1) to rounding.  Everything also runs in complex arithmetic (decisions on real
parts), for complex-step Hessian-vector products (:mod:`ldr.objectives.wda`).
"""

from __future__ import annotations

import numpy as np

from ldr.kernels.tiles import TARGET_BLOCK_BYTES

#: the factors e^{f−α} e^{g−β} of a product through the reference kernel stay below e^SAFE
#: (entries of K̃ lost to underflow then weigh under e^{−708+SAFE}: nothing)
_SAFE = 230.0
#: a single factor or a sum's range beyond e^OVER (float64 ends at e^709) re-centres
_OVER = 650.0


def block_rows(m: int, itemsize: int) -> int:
    """Rows per block of an n×m array: about ``TARGET_BLOCK_BYTES`` (at least 1)."""
    return max(1, TARGET_BLOCK_BYTES // (itemsize * max(m, 1)))


class PairKernel:
    """S = −M/reg between the rows of Ya and Yb, and products with E(f, g) (module
    docstring); the reference kernel is stored when n·m entries fit ``cache_bytes``."""

    def __init__(self, Ya, Yb, reg: float, cache_bytes: float, rows: int | None = None):
        self.dtype = np.result_type(Ya, Yb, float)
        self.n, self.m = len(Ya), len(Yb)
        self.reg = reg
        itemsize = np.dtype(self.dtype).itemsize
        sa, sb = np.sum(Ya * Ya, axis=1), np.sum(Yb * Yb, axis=1)  # no conj: complex step
        one_a, one_b = np.ones(self.n), np.ones(self.m)
        self._left = np.column_stack([Ya * (2.0 / reg), sa * (-1.0 / reg), one_a])
        self._right = np.column_stack([Yb, one_b, sb * (-1.0 / reg)])
        self._mleft = np.column_stack([Ya * -2.0, sa, one_a])      # M = mleft · mrightᵀ
        self._mright_t = np.ascontiguousarray(np.column_stack([Yb, one_b, sb]).T)
        self.cached = self.n * self.m * itemsize <= cache_bytes
        self.rows = min(self.n, int(rows) if rows else max(1, min(
            block_rows(self.m, itemsize), int(cache_bytes // (2 * itemsize * self.m)))))
        self.K = self.alpha = self.beta = None
        self.exp_passes = 0  # reference kernels or blocked passes computed (for tests)

    # -- S + f ⊕ g by one product of augmented factors ------------------------------------
    def _factors(self, f=None, g=None):
        L, R = self._left, self._right
        if f is not None:
            L = L.copy()
            L[:, -2] += f
        if g is not None:
            R = R.copy()
            R[:, -1] += g
        return L, np.ascontiguousarray(R.T)

    def _blocks(self):
        for i in range(0, self.n, self.rows):
            yield slice(i, min(i + self.rows, self.n))

    def _set_reference(self, alpha, beta, shift: str | None = None):
        """K̃ = exp(S + α ⊕ β); ``shift`` "cols"/"rows" first moves β/α so that each
        column/row of the exponent has maximum 0 (then K̃ᵀ1 ≥ 1, resp. K̃1 ≥ 1)."""
        L, Rt = self._factors(alpha, beta)
        if self.K is None:
            self.K = np.empty((self.n, self.m), dtype=self.dtype)
        np.matmul(L, Rt, out=self.K)
        if shift == "cols":
            s = -self.K.real.max(axis=0)
            self.K += s
            beta = beta + s
        elif shift == "rows":
            s = -self.K.real.max(axis=1)
            self.K += s[:, None]
            alpha = alpha + s
        np.exp(self.K, out=self.K)
        self.alpha, self.beta = alpha, beta
        self.exp_passes += 1

    def zeros(self, k: int):
        return np.zeros(k, dtype=self.dtype)

    # -- the half-iterations of (1) ---------------------------------------------------------
    def lse_cols(self, f):
        """LSE_i(S_ij + f_i) for each column j."""
        if not self.cached:
            L, Rt = self._factors(f)
            mx = np.full(self.m, -np.inf)
            s = np.zeros(self.m, dtype=self.dtype)
            buf = np.empty((self.rows, self.m), dtype=self.dtype)
            for r in self._blocks():
                B = np.matmul(L[r], Rt, out=buf[: r.stop - r.start])
                new = np.maximum(mx, B.real.max(axis=0))
                s *= np.exp(mx - new)
                B -= new
                s += np.exp(B, out=B).sum(axis=0)
                mx = new
            self.exp_passes += 1
            return np.log(s) + mx
        if self.K is not None:
            dx = (f - self.alpha).real
            if dx.max() < _OVER:
                s = np.exp(f - self.alpha) @ self.K
                low = s.real.min()
                if low > 0 and dx.max() - np.log(low) < _OVER:
                    return np.log(s) - self.beta
        self._set_reference(f, np.zeros(self.m), "cols")
        return np.log(self.K.sum(axis=0)) - self.beta

    def lse_rows(self, g):
        """LSE_j(S_ij + g_j) for each row i."""
        if not self.cached:
            L, Rt = self._factors(None, g)
            out = np.empty(self.n, dtype=self.dtype)
            buf = np.empty((self.rows, self.m), dtype=self.dtype)
            for r in self._blocks():
                B = np.matmul(L[r], Rt, out=buf[: r.stop - r.start])
                mx = B.real.max(axis=1)
                B -= mx[:, None]
                out[r] = np.log(np.exp(B, out=B).sum(axis=1)) + mx
            self.exp_passes += 1
            return out
        if self.K is not None:
            dy = (g - self.beta).real
            if dy.max() < _OVER:
                s = self.K @ np.exp(g - self.beta)
                low = s.real.min()
                if low > 0 and dy.max() - np.log(low) < _OVER:
                    return np.log(s) - self.alpha
        self._set_reference(np.zeros(self.n), g, "rows")
        return np.log(self.K.sum(axis=1)) - self.alpha

    # -- products ---------------------------------------------------------------------------
    def prod(self, f, g, R, L):
        """(E R, Eᵀ L) for E = exp(S + f ⊕ g), whose entries are at most about 1."""
        if not self.cached:
            Lf, Rt = self._factors(f, g)
            ER = np.empty((self.n, R.shape[1]), dtype=np.result_type(self.dtype, R))
            ETL = np.zeros((self.m, L.shape[1]), dtype=np.result_type(self.dtype, L))
            buf = np.empty((self.rows, self.m), dtype=self.dtype)
            for r in self._blocks():
                E = np.exp(np.matmul(Lf[r], Rt, out=buf[: r.stop - r.start]), out=buf[
                    : r.stop - r.start])
                ER[r] = E @ R
                ETL += E.T @ L[r]
            self.exp_passes += 1
            return ER, ETL
        ok = self.K is not None
        if ok:
            dx, dy = (f - self.alpha).real.max(), (g - self.beta).real.max()
            ok = dx < _OVER and dy < _OVER and dx + dy < _SAFE
        if not ok:
            self._set_reference(f, g)
        x, y = np.exp(f - self.alpha), np.exp(g - self.beta)
        return (x[:, None] * (self.K @ (y[:, None] * R)),
                y[:, None] * ((x[:, None] * L).T @ self.K).T)  # (LᵀK̃)ᵀ: faster than K̃ᵀL

    def final(self, f, g, R, L, with_m: bool):
        """The plan T = E(f, g) by row blocks (from the reference kernel where accurate, else
        one exponent per entry): ``(T R, Tᵀ L)`` and,
        with ``with_m``, ``((T∘M) R, (T∘M)ᵀ L, ⟨T, M⟩)``."""
        ref = self.K is not None
        if ref:  # T = diag(e^{f−α}) K̃ diag(e^{g−β}) where that is accurate (see prod)
            dx, dy = (f - self.alpha).real.max(), (g - self.beta).real.max()
            ref = dx < _OVER and dy < _OVER and dx + dy < _SAFE
        if ref:
            x, y = np.exp(f - self.alpha), np.exp(g - self.beta)
        else:
            Lf, Rt = self._factors(f, g)
            self.exp_passes += 1
        dt = np.result_type(self.dtype, R, L)
        TR = np.empty((self.n, R.shape[1]), dtype=dt)
        TL = np.zeros((self.m, L.shape[1]), dtype=dt)
        if with_m:
            TMR, TML, loss = np.empty_like(TR), np.zeros_like(TL), 0.0
        buf = np.empty((self.rows, self.m), dtype=self.dtype)
        mbuf = np.empty_like(buf) if with_m else None
        for r in self._blocks():
            k = r.stop - r.start
            if ref:
                T = np.multiply(self.K[r], y, out=buf[:k])
                T *= x[r, None]
            else:
                T = np.exp(np.matmul(Lf[r], Rt, out=buf[:k]), out=buf[:k])
            TR[r] = T @ R
            TL += T.T @ L[r]
            if with_m:
                TM = np.matmul(self._mleft[r], self._mright_t, out=mbuf[:k])
                TM *= T
                TMR[r] = TM @ R
                TML += TM.T @ L[r]
                loss = loss + TM.sum()
        return (TR, TL, TMR, TML, loss) if with_m else (TR, TL)


def potentials(kern, n_iter: int):
    """The potentials of (1): ``(fs, gs)``, fs = [f_0, …, f_N], gs = [None, g_1, …, g_N],
    for a ``PairKernel`` or its array-namespace twin ``_transport_xp.PairKernelXP``: both give
    ``zeros``, ``lse_cols`` and ``lse_rows``."""
    loga, logb = -float(np.log(kern.n)), -float(np.log(kern.m))
    f = kern.zeros(kern.n)
    fs, gs = [f], [None]
    for _ in range(n_iter):
        g = logb - kern.lse_cols(f)
        f = loga - kern.lse_rows(g)
        fs.append(f)
        gs.append(g)
    return fs, gs


def pair_loss(Ya, Yb, reg: float, n_iter: int, cache_bytes: float):
    """ℓ = ⟨T, M⟩ of (2) (forward only)."""
    kern = PairKernel(Ya, Yb, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    one_a, one_b = np.ones((kern.n, 1)), np.ones((kern.m, 1))
    return kern.final(fs[-1], gs[-1], one_b, one_a, True)[4]


def pair_scatter(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float):
    """Σ_ij T_ij (xa_i − xb_j)(xa_i − xb_j)ᵀ at the plan T(P) between XaP and XbP:
    Xaᵀ diag(T1) Xa + Xbᵀ diag(Tᵀ1) Xb − S − Sᵀ, S = Xaᵀ T Xb, by row blocks of T."""
    kern = PairKernel(Xa @ P, Xb @ P, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    TR, TL = kern.final(fs[-1], gs[-1], np.column_stack([np.ones(kern.m), Xb]),
                        np.ones((kern.n, 1)), False)
    r, c, TXb = TR[:, 0], TL[:, 0], TR[:, 1:]
    cross = Xa.T @ TXb
    return Xa.T @ (r[:, None] * Xa) + Xb.T @ (c[:, None] * Xb) - cross - cross.T


def pair_scatter_part(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float):
    """:func:`pair_scatter` less its P-independent term, unsymmetrized:
    Xbᵀ (diag(Tᵀ1) Xb − 2 TᵀXa), whose symmetric part plus Xaᵀ Xa / n is the pair's scatter —
    the rows of T sum to a = 1/n exactly, as the last half-iteration of (1) is f's.  One
    d×d product instead of three (the caller adds Σ XaᵀXa/n, once, and symmetrizes)."""
    return Xb.T @ pair_scatter_rows(Xa, Xb, P, reg, n_iter, cache_bytes)


def pair_scatter_rows(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float):
    """diag(Tᵀ1) Xb − 2 TᵀXa (m × d): :func:`pair_scatter_part` is Xbᵀ times it, so pairs
    that share Xb's rows (a class's batch in every pair, ``WDA.scatter``) sum these first
    and take one d×d product."""
    kern = PairKernel(Xa @ P, Xb @ P, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    TL = kern.final(fs[-1], gs[-1], np.ones((kern.m, 1)),
                    np.column_stack([np.ones(kern.n), Xa]), False)[1]
    return TL[:, :1] * Xb - 2.0 * TL[:, 1:]


def pair_gradient(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float,
                  kern_out: list | None = None):
    """``(ℓ, ∇_P ℓ)`` for ℓ of (2) between XaP and XbP, by the reverse pass (3)–(4)."""
    Ya, Yb = Xa @ P, Xb @ P
    kern = PairKernel(Ya, Yb, reg, cache_bytes)
    if kern_out is not None:
        kern_out.append(kern)
    n, m = kern.n, kern.m
    fs, gs = potentials(kern, n_iter)
    Rb = np.column_stack([np.ones(m), Yb])      # [1, Yb]
    La = np.column_stack([np.ones(n), Ya])      # [1, Ya]
    TR, TL, TMR, TML, loss = kern.final(fs[-1], gs[-1], Rb, La, True)
    inv = 1.0 / reg
    WR = TR - inv * TMR                         # W [1, Yb] so far
    WL = TL - inv * TML                         # Wᵀ [1, Ya] so far
    fbar, gbar = TMR[:, 0], TML[:, 0]
    for t in range(n_iter, 0, -1):
        QR, QTL = kern.prod(fs[t], gs[t], Rb, fbar[:, None] * La)   # Q^t = n E(f_t, g_t)
        WR += (n * inv) * fbar[:, None] * QR
        WL += (n * inv) * QTL
        gbar = gbar - n * QTL[:, 0]
        PR, PTL = kern.prod(fs[t - 1], gs[t], gbar[:, None] * Rb, La)  # P^t = m E(f_{t−1}, g_t)
        WR += (m * inv) * PR
        WL += (m * inv) * gbar[:, None] * PTL
        fbar = -m * PR[:, 0]
        gbar = np.zeros(m, dtype=gbar.dtype)
    gYa = 2.0 * (WR[:, :1] * Ya - WR[:, 1:])
    gYb = 2.0 * (WL[:, :1] * Yb - WL[:, 1:])
    return loss, Xa.T @ gYa + Xb.T @ gYb
