"""Entropic optimal transport between two classes, as Wasserstein discriminant analysis needs it
(:class:`ldr.objectives.WDA`): Sinkhorn's potentials, products with its plans within a memory
budget, the pair loss with its gradient through the iterations, the pair scatter, and the
classes' centred rows with their Fisher scatters.

Notation (POT's convention): rows Ya (n×p) and Yb (m×p), M_ij = ‖ya_i − yb_j‖², S = −M/reg,
marginals a (n) and b (m), each summing to 1: uniform, a = 1/n and b = 1/m, unless the rows
carry frequency weights (a_i ∝ w_i; a row of integer weight k is then k copies of itself, whose
plan rows add up to the weighted plan's row).  ``n_iter`` = N Sinkhorn iterations from
f_0 = log(n a) (0 for uniform marginals), in the log domain (potentials f = log u, g = log v of
the scaling form u, v; Peyré & Cuturi 2019, Computational Optimal Transport, Remark 4.23):

    g_t = log b − LSE_i(S_ij + f_{t−1,i}),   f_t = log a − LSE_j(S_ij + g_tj),       (1)
    T = exp(S + f_N ⊕ g_N),   ℓ = ⟨T, M⟩.                                              (2)

With the column-stochastic P^t = exp(S + f_{t−1} ⊕ g_t) diag(1/b) and the row-stochastic
Q^t = diag(1/a) exp(S + f_t ⊕ g_t), the reverse pass of (1)–(2) is, from f̄_N = (T∘M)1 and
ḡ_N = (T∘M)ᵀ1, for t = N, …, 1:

    ḡ_t ← ḡ_t − Q^tᵀ f̄_t,   f̄_{t−1} = −P^t ḡ_t   (ḡ_t = 0 for t < N before the update),  (3)
    W = dℓ/dM = T − (T∘M)/reg + (1/reg) Σ_t (diag(f̄_t) Q^t + P^t diag(ḡ_t)),            (4)

and ∇_Ya ℓ = 2(diag(W1) Ya − W Yb), ∇_Yb ℓ = 2(diag(Wᵀ1) Yb − Wᵀ Ya).  W is never formed:
(4) enters only through W1, Wᵀ1, W Yb and Wᵀ Ya, accumulated from the products of (3) with
a few columns.  The pass keeps the 2N potentials (O(n + m) each), never an n×m array per
iteration (checkpointing: memory independent of N).  Its multipliers are stochastic matrices,
so it needs no scaling of u² or v² and cannot overflow.

Every product is with E(f, g) = exp(S + f ⊕ g), whose entries are at most about 1.  When
``n·m`` entries fit ``cache_bytes`` one reference kernel K̃ = exp(S + α ⊕ β) is stored and
E(f, g) = diag(e^{f−α}) K̃ diag(e^{g−β}) is a matrix product (the scaling form's speed); the
reference is re-centred on the current potentials (one ``exp`` pass, as the stabilized
Sinkhorn of Schmitzer 2019 absorbs its scalings) whenever a factor would leave
[e^{−OVER}, e^{OVER}] or a product's factors exceed e^{SAFE}.  Otherwise each product
recomputes E by row blocks (:func:`ldr.kernels.tiles.rows_per_block`), so no n×m array
exists.  Both give the iterates of (1) to rounding.

One implementation for every array namespace (NumPy, PyTorch, CuPy, JAX, array-api-strict),
written with the array API standard's functions, in the namespace and on the device of the
rows; the only values read on the host are the scalars of the re-centring decisions (two per
half-iteration while a reference kernel is stored) and the loss.  Complex dtypes (complex128
from float64, complex64 from float32) carry the complex step of :func:`complex_step`; the
decisions read real parts.

References
----------
Flamary, Cuturi, Courty & Rakotomamonjy (2018), Wasserstein discriminant analysis, Machine
Learning 107.  Schmitzer (2019), Stabilized sparse scaling algorithms for entropy regularized
transport problems, SIAM J. Sci. Comput. 41(3).  Squire & Trapp (1998), Using complex
variables to estimate derivatives of real functions, SIAM Review 40(1).
"""

from __future__ import annotations

import math

import autograd.numpy as anp
import numpy as np

from ldr.data import arrays
from ldr.data.rows import moments
from ldr.data.validation import is_lazy
from ldr.kernels.tiles import rows_per_block

__all__ = ["PairKernel", "class_rows", "class_scatters", "complex_step", "pair_gradient",
           "pair_loss", "pair_plan", "pair_scatter", "pair_scatter_rows", "potentials",
           "sinkhorn_log", "squared_distances"]

#: the factors e^{f−α} e^{g−β} of a product through the reference kernel stay below e^SAFE
#: (entries of K̃ lost to underflow then weigh under e^{−708+SAFE}: nothing)
SAFE = 230.0
#: a single factor or a sum's range beyond e^OVER (float64 ends at e^709) re-centres
OVER = 650.0
#: bytes of one row chunk of the class statistics' pass (:func:`class_scatters`)
CHUNK_BYTES = 16 * 2**20


def _col(v):
    return v[:, None]


class PairKernel:
    """S = −M/reg between the rows of Ya and Yb, and products with E(f, g) (module docstring)
    in the namespace of ``Ya``; the reference kernel is stored when n·m entries fit
    ``cache_bytes``, else products run by ``rows`` rows at a time (default
    :func:`~ldr.kernels.tiles.rows_per_block` within half of ``cache_bytes``)."""

    def __init__(self, Ya, Yb, reg: float, cache_bytes: float, rows: int | None = None,
                 marginals: tuple | None = None):
        xp = self.xp = arrays.namespace(Ya)
        self.dtype = Ya.dtype
        self.device = arrays.device(Ya)
        self.complex = xp.isdtype(self.dtype, "complex floating")  # the complex step's
        self.n = Ya.shape[0]
        self.m = Yb.shape[0]
        self.reg = reg
        #: log a, log b and 1/a, 1/b: scalars for uniform marginals, else vectors of Ya's
        #: namespace, device and dtype (``marginals``: NumPy (a, b), each summing to 1)
        if marginals is None:
            self.loga = -math.log(self.n)
            self.logb = -math.log(self.m)
            self.inva = float(self.n)
            self.invb = float(self.m)
        else:
            a, b = (np.asarray(v, dtype=float) for v in marginals)
            self.loga = arrays.like(np.log(a), Ya)
            self.logb = arrays.like(np.log(b), Ya)
            self.inva = arrays.like(1.0 / a, Ya)
            self.invb = arrays.like(1.0 / b, Ya)
        itemsize = arrays.itemsize(Ya)
        sa = xp.sum(Ya * Ya, axis=1)  # no conj: the complex step
        sb = xp.sum(Yb * Yb, axis=1)
        one_a = _col(self.ones(self.n))
        one_b = _col(self.ones(self.m))
        self._left = xp.concat([Ya * (2.0 / reg), _col(sa * (-1.0 / reg)), one_a], axis=1)
        self._right_t = arrays.transposed_rows(
            xp.concat([Yb, one_b, _col(sb * (-1.0 / reg))], axis=1))
        self._mleft = xp.concat([Ya * -2.0, _col(sa), one_a], axis=1)  # M = mleft · mright_t
        self._mright_t = arrays.transposed_rows(xp.concat([Yb, one_b, _col(sb)], axis=1))
        self.cached = self.n * self.m * itemsize <= cache_bytes
        self.rows = min(self.n, int(rows) if rows else rows_per_block(
            self.m, itemsize, 0.5 * cache_bytes, Ya))
        self.K = None  # the reference kernel K̃ = exp(S + α ⊕ β), and its α, β
        self.alpha = None
        self.beta = None
        self.buffers = arrays.Buffers()  # the row blocks' arrays, reused (NumPy)
        self.exp_passes = 0  # reference kernels or blocked passes computed (for tests)

    def ones(self, k: int):
        return self.xp.ones(k, dtype=self.dtype, device=self.device)

    def zeros(self, k: int):
        return self.xp.zeros(k, dtype=self.dtype, device=self.device)

    # -- S + f ⊕ g by one product of augmented factors ------------------------------------
    def _factors(self, f=None, g=None):
        """(L, Rᵀ) with L Rᵀ = S + f ⊕ g."""
        xp = self.xp
        L = self._left
        Rt = self._right_t
        if f is not None:
            L = xp.concat([L[:, :-2], _col(L[:, -2] + f), L[:, -1:]], axis=1)
        if g is not None:
            Rt = xp.concat([Rt[:-1, :], (Rt[-1, :] + g)[None, :]], axis=0)
        return L, Rt

    def _blocks(self):
        for i in range(0, self.n, self.rows):
            yield slice(i, min(i + self.rows, self.n))

    def _real(self, a):
        """The real part of ``a`` (the decisions read it; the complex step's imaginary parts
        are infinitesimal)."""
        return self.xp.real(a) if self.complex else a

    def _max(self, a) -> float:
        return float(self.xp.max(self._real(a)))

    def _set_reference(self, alpha, beta, shift: str | None = None):
        """K̃ = exp(S + α ⊕ β); ``shift`` "cols"/"rows" first moves β/α so that each
        column/row of the exponent has maximum 0 (then K̃ᵀ1 ≥ 1, resp. K̃1 ≥ 1)."""
        xp = self.xp
        L, Rt = self._factors(alpha, beta)
        self.K = None  # the old reference is replaced: its buffer (NumPy) takes the new one
        K = self.buffers.matmul(L, Rt, "kernel")
        if shift == "cols":
            s = -xp.max(self._real(K), axis=0)
            K += s
            beta = beta + s
        elif shift == "rows":
            s = -xp.max(self._real(K), axis=1)
            K += _col(s)
            alpha = alpha + s
        self.K = arrays.exp_inplace(K)
        self.alpha = alpha
        self.beta = beta
        self.exp_passes += 1

    def _reference_ok(self, f, g) -> bool:
        """Whether E(f, g) = diag(e^{f−α}) K̃ diag(e^{g−β}) is accurate (module docstring)."""
        if self.K is None:
            return False
        dx = self._max(f - self.alpha)
        dy = self._max(g - self.beta)
        return dx < OVER and dy < OVER and dx + dy < SAFE

    # -- the half-iterations of (1) ---------------------------------------------------------
    def lse_cols(self, f):
        """LSE_i(S_ij + f_i) for each column j."""
        xp = self.xp
        if not self.cached:
            L, Rt = self._factors(f)
            mx = xp.full(self.m, -math.inf, dtype=self._real(L).dtype, device=self.device)
            s = self.zeros(self.m)
            for r in self._blocks():
                B = self.buffers.matmul(L[r, :], Rt, "block")
                new = xp.maximum(mx, xp.max(self._real(B), axis=0))
                B -= new
                s = s * xp.exp(mx - new) + xp.sum(arrays.exp_inplace(B), axis=0)
                mx = new
                del B  # before the next block's is made
            self.exp_passes += 1
            return xp.log(s) + mx
        if self.K is not None:
            shift = f - self.alpha
            dx = self._max(shift)
            if dx < OVER:
                s = xp.exp(shift) @ self.K
                low = float(xp.min(self._real(s)))
                if low > 0 and dx - math.log(low) < OVER:
                    return xp.log(s) - self.beta
        self._set_reference(f, self.zeros(self.m), "cols")
        return xp.log(xp.sum(self.K, axis=0)) - self.beta

    def lse_rows(self, g):
        """LSE_j(S_ij + g_j) for each row i."""
        xp = self.xp
        if not self.cached:
            L, Rt = self._factors(None, g)
            parts = []
            for r in self._blocks():
                B = self.buffers.matmul(L[r, :], Rt, "block")
                mx = xp.max(self._real(B), axis=1)
                B -= _col(mx)
                parts.append(xp.log(xp.sum(arrays.exp_inplace(B), axis=1)) + mx)
                del B  # before the next block's is made
            self.exp_passes += 1
            return xp.concat(parts)
        if self.K is not None:
            shift = g - self.beta
            dy = self._max(shift)
            if dy < OVER:
                s = self.K @ xp.exp(shift)
                low = float(xp.min(self._real(s)))
                if low > 0 and dy - math.log(low) < OVER:
                    return xp.log(s) - self.alpha
        self._set_reference(self.zeros(self.n), g, "rows")
        return xp.log(xp.sum(self.K, axis=1)) - self.alpha

    # -- products ---------------------------------------------------------------------------
    def prod(self, f, g, R, L):
        """(E R, Eᵀ L) for E = exp(S + f ⊕ g), whose entries are at most about 1."""
        xp = self.xp
        if not self.cached:
            Lf, Rt = self._factors(f, g)
            parts = []
            ETL = 0.0
            for r in self._blocks():
                E = arrays.exp_inplace(self.buffers.matmul(Lf[r, :], Rt, "block"))
                parts.append(E @ R)
                ETL = ETL + E.T @ L[r, :]
                del E  # before the next block's is made
            self.exp_passes += 1
            return xp.concat(parts, axis=0), ETL
        if not self._reference_ok(f, g):
            self._set_reference(f, g)
        x = _col(xp.exp(f - self.alpha))
        y = _col(xp.exp(g - self.beta))
        return x * (self.K @ (y * R)), y * ((x * L).T @ self.K).T  # (LᵀK̃)ᵀ: K̃ by rows

    def final(self, f, g, R, L, with_m: bool):
        """The plan T = E(f, g) by row blocks (from the reference kernel where accurate, else
        one exponent per entry): ``(T R, Tᵀ L)`` and, with ``with_m``,
        ``((T∘M) R, (T∘M)ᵀ L, ⟨T, M⟩)`` (⟨T, M⟩ a 0-d array)."""
        xp = self.xp
        ref = self._reference_ok(f, g)
        if ref:
            x = xp.exp(f - self.alpha)
            y = xp.exp(g - self.beta)
        else:
            Lf, Rt = self._factors(f, g)
            self.exp_passes += 1
        TR = []
        TL = 0.0
        TMR = []
        TML = 0.0
        loss = 0.0
        buffers = self.buffers  # two blocks: the plan's ("block") and T∘M's ("cost")
        for r in self._blocks():
            if ref:
                T = buffers.multiply(self.K[r, :], y, "block")
                T *= _col(x[r])
            else:
                T = arrays.exp_inplace(buffers.matmul(Lf[r, :], Rt, "block"))
            TR.append(T @ R)
            TL = TL + T.T @ L[r, :]
            if with_m:
                TM = buffers.matmul(self._mleft[r, :], self._mright_t, "cost")
                TM *= T
                TMR.append(TM @ R)
                TML = TML + TM.T @ L[r, :]
                loss = loss + xp.sum(TM)
                del TM
            del T  # before the next block's is made
        self.buffers = arrays.Buffers()  # the blocks released (a re-centred kernel may come
        # next); the stored reference kernel lives on as self.K
        TR = xp.concat(TR, axis=0)
        return (TR, TL, xp.concat(TMR, axis=0), TML, loss) if with_m else (TR, TL)

    def plan(self, f, g):
        """The n×m plan T = exp(S + f ⊕ g) itself."""
        Lf, Rt = self._factors(f, g)
        return arrays.exp_inplace(Lf @ Rt)


def potentials(kern: PairKernel, n_iter: int):
    """The potentials of (1): ``(fs, gs)``, fs = [f_0, …, f_N], gs = [None, g_1, …, g_N]."""
    loga = kern.loga
    logb = kern.logb
    # f_0 = log(n a): 0 for uniform marginals; with weights, the iterates of the rows
    # repeated by their weights (each row's copies summed), as a plan does not change when
    # f and g shift by opposite constants
    f = kern.zeros(kern.n) if isinstance(loga, float) else loga + math.log(kern.n)
    fs = [f]
    gs = [None]
    for _ in range(n_iter):
        g = logb - kern.lse_cols(f)
        f = loga - kern.lse_rows(g)
        fs.append(f)
        gs.append(g)
    return fs, gs


def pair_plan(Ya, Yb, reg: float, n_iter: int, cache_bytes: float, marginals=None):
    """The plan T of (2) between the rows of Ya and Yb (an n×m array); ``marginals``: (a, b),
    None for uniform ones (as in every function here)."""
    kern = PairKernel(Ya, Yb, reg, cache_bytes, marginals=marginals)
    fs, gs = potentials(kern, n_iter)
    return kern.plan(fs[-1], gs[-1])


def pair_loss(Ya, Yb, reg: float, n_iter: int, cache_bytes: float, marginals=None):
    """ℓ = ⟨T, M⟩ of (2) (forward only; a 0-d array)."""
    kern = PairKernel(Ya, Yb, reg, cache_bytes, marginals=marginals)
    fs, gs = potentials(kern, n_iter)
    return kern.final(fs[-1], gs[-1], _col(kern.ones(kern.m)), _col(kern.ones(kern.n)),
                      True)[4]


def pair_scatter(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float, marginals=None):
    """Σ_ij T_ij (xa_i − xb_j)(xa_i − xb_j)ᵀ at the plan T(P) between XaP and XbP:
    Xaᵀ diag(T1) Xa + Xbᵀ diag(Tᵀ1) Xb − S − Sᵀ, S = Xaᵀ T Xb, by row blocks of T."""
    xp = arrays.namespace(Xa)
    kern = PairKernel(Xa @ P, Xb @ P, reg, cache_bytes, marginals=marginals)
    fs, gs = potentials(kern, n_iter)
    TR, TL = kern.final(fs[-1], gs[-1], xp.concat([_col(kern.ones(kern.m)), Xb], axis=1),
                        _col(kern.ones(kern.n)), False)
    cross = Xa.T @ TR[:, 1:]  # Xaᵀ T Xb
    return Xa.T @ (TR[:, :1] * Xa) + Xb.T @ (TL[:, :1] * Xb) - cross - cross.T


def pair_scatter_rows(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float,
                      marginals=None):
    """diag(Tᵀ1) Xb − 2 TᵀXa (m × d): Xbᵀ times it, symmetrized, plus Xaᵀ diag(a) Xa is the
    pair's :func:`pair_scatter` — the rows of T sum to a exactly, as the last half-iteration
    of (1) is f's.  Pairs that share Xb's rows (a class's batch in every pair) sum these
    first and take one d×d product (:meth:`ldr.objectives.WDA.scatter`)."""
    xp = arrays.namespace(Xa)
    kern = PairKernel(Xa @ P, Xb @ P, reg, cache_bytes, marginals=marginals)
    fs, gs = potentials(kern, n_iter)
    TL = kern.final(fs[-1], gs[-1], _col(kern.ones(kern.m)),
                    xp.concat([_col(kern.ones(kern.n)), Xa], axis=1), False)[1]
    return TL[:, :1] * Xb - 2.0 * TL[:, 1:]


def pair_gradient(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float, marginals=None):
    """``(ℓ, ∇_P ℓ)`` for ℓ of (2) between XaP and XbP, by the reverse pass (3)–(4); P real
    or complex (the data are cast to P's dtype)."""
    xp = arrays.namespace(Xa)
    if Xa.dtype != P.dtype:
        Xa = xp.astype(Xa, P.dtype)
        Xb = xp.astype(Xb, P.dtype)
    Ya = Xa @ P
    Yb = Xb @ P
    kern = PairKernel(Ya, Yb, reg, cache_bytes, marginals=marginals)
    inva = kern.inva if isinstance(kern.inva, float) else _col(kern.inva)  # 1/a as a column
    invb = kern.invb
    fs, gs = potentials(kern, n_iter)
    Rb = xp.concat([_col(kern.ones(kern.m)), Yb], axis=1)      # [1, Yb]
    La = xp.concat([_col(kern.ones(kern.n)), Ya], axis=1)      # [1, Ya]
    TR, TL, TMR, TML, loss = kern.final(fs[-1], gs[-1], Rb, La, True)
    inv = 1.0 / reg
    WR = TR - inv * TMR                                   # W [1, Yb] so far
    WL = TL - inv * TML                                   # Wᵀ [1, Ya] so far
    fbar = TMR[:, 0]
    gbar = TML[:, 0]
    for t in range(n_iter, 0, -1):
        fa = _col(fbar) * inva                                       # diag(1/a) f̄
        QR, QTL = kern.prod(fs[t], gs[t], Rb, fa * La)  # Q^t = diag(1/a) E(f_t, g_t)
        WR = WR + inv * fa * QR
        WL = WL + inv * QTL
        gbar = gbar - QTL[:, 0]
        gb = _col(gbar * invb)                                       # diag(1/b) ḡ
        PR, PTL = kern.prod(fs[t - 1], gs[t], gb * Rb, La)  # P^t = E(f_{t−1}, g_t) diag(1/b)
        WR = WR + inv * PR
        WL = WL + inv * gb * PTL
        fbar = -PR[:, 0]
        gbar = kern.zeros(kern.m)
    gYa = 2.0 * (WR[:, :1] * Ya - WR[:, 1:])
    gYb = 2.0 * (WL[:, :1] * Yb - WL[:, 1:])
    return loss, Xa.T @ gYa + Xb.T @ gYb


def complex_step(egrad, P, V, h64: float, h32: float):
    """The derivative of ``egrad`` at P along V by the complex step, Im ∇f(P + ihV)/h
    (Squire & Trapp 1998: no difference is taken, so no cancellation), in complex128
    (h = ``h64``/max|V|) or, for float32 P, complex64 (h = ``h32``/max|V|)."""
    xp = arrays.namespace(P)
    scale = arrays.max_abs(V)
    if scale == 0.0:
        return xp.zeros_like(V)
    single = P.dtype == xp.float32
    h = (h32 if single else h64) / scale
    cdtype = xp.complex64 if single else xp.complex128
    Pc = xp.astype(P, cdtype) + xp.astype(V * h, cdtype) * 1j
    return xp.astype(xp.imag(egrad(Pc)) / h, P.dtype)


# --- autograd's reference ----------------------------------------------------------------
def squared_distances(A, B):
    """M_ij = ‖a_i − b_j‖², floored at 0 (autograd-traceable)."""
    sa = anp.sum(A * A, axis=1)
    sb = anp.sum(B * B, axis=1)
    return anp.maximum(sa[:, None] + sb[None, :] - 2.0 * anp.dot(A, B.T), 0.0)


def sinkhorn_log(M, reg: float, n_iter: int, marginals=None):
    """The plan T of (2) for the cost matrix M by ``n_iter`` iterations of (1), written with
    ``autograd.numpy`` (autograd-traceable: the reference that WDA's cost differentiates
    on an autograd trace, and that the hand-written reverse pass is tested against)."""
    from autograd.scipy.special import logsumexp  # imports scipy.stats: only when needed

    n, m = M.shape
    S = -M / reg
    loga, logb = ((-np.log(n), -np.log(m)) if marginals is None
                  else (np.log(marginals[0]), np.log(marginals[1])))
    f = anp.zeros(n) if marginals is None else loga + np.log(n)  # as in potentials
    g = anp.zeros(m)
    for _ in range(n_iter):
        g = logb - logsumexp(S + f[:, None], axis=0)
        f = loga - logsumexp(S + g[None, :], axis=1)
    return anp.exp(S + f[:, None] + g[None, :])


# --- the classes' rows -------------------------------------------------------------------
def take(A, rows):
    """The rows ``rows`` (host indices) of A, in its namespace and on its device."""
    xp = arrays.namespace(A)
    return xp.take(A, xp.asarray(rows, device=arrays.device(A)), axis=0)


def class_scatters(X, codes: np.ndarray, n_classes: int, chunk_bytes: int | None = None,
                   weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fisher's (S_w, S_b) of the rows X of ``n_classes`` classes (``codes``: each row's class
    index, every class present; survey Eq. 5, divided by n) as NumPy d×d arrays,
    computed in X's namespace and on its device, in float64, by one pass over row chunks of
    about ``chunk_bytes`` (default ``CHUNK_BYTES``, 16 MiB) merged as they come
    (:func:`ldr.data.rows.moments` of an iterator): no array of X's size is made.  With
    frequency ``weights`` (NumPy, one per row) the weighted scatters, in one pass of X.  A
    Dask array is read by one pass over its own chunks."""
    if is_lazy(X):
        return moments(X, codes, name="X").on_host().class_scatter()[:2]
    xp = arrays.namespace(X)
    if weights is not None:
        return moments(xp.astype(X, xp.float64, copy=False), codes, weights=weights,
                       validated=True).on_host().class_scatter()[:2]
    n = X.shape[0]
    rows = max(2, int((CHUNK_BYTES if chunk_bytes is None else chunk_bytes)
                       // (8 * max(X.shape[1], 1))))
    chunks = ((xp.astype(X[i:min(i + rows, n), :], xp.float64, copy=False),
               codes[i:min(i + rows, n)]) for i in range(0, n, rows))
    return moments(chunks, name="X").on_host().class_scatter()[:2]


def class_rows(X, codes: np.ndarray, n_classes: int, weights: np.ndarray | None = None,
               held: list | None = None):
    """WDA's data: ``(mean, groups, S_w, S_b, uniform_w)`` — X's column means (NumPy), each
    class's rows less them (copies in X's namespace, on its device, in its float dtype;
    X is only read), Fisher's scatters (:func:`class_scatters`) and tr C_w of independent
    plans a aᵀ, Σ_c 2 Σ_i a_i ‖x_i − m_c‖² (a float; by row chunks: a chunk's temporaries, not
    a class's).  The groups are the one array of X's size made.  With frequency ``weights``
    (NumPy, one per row) the means and scatters are weighted, and a_i = w_i / Σ_{class} w;
    else a_i = 1/n_c.  ``held`` (one array per class of positions within it, unweighted
    only): the groups hold those rows, and uniform_w is estimated from them; the means and
    scatters are every row's."""
    xp = arrays.namespace(X)
    if weights is None:
        mean = xp.sum(X, axis=0, dtype=xp.float64) / X.shape[0]
    else:
        share = xp.asarray(weights / weights.sum(), dtype=xp.float64, device=arrays.device(X))
        mean = share @ xp.astype(X, xp.float64, copy=False)
    shift = xp.astype(mean, X.dtype)
    groups = []
    uniform = 0.0
    for c in range(n_classes):
        members = np.flatnonzero(codes == c)
        if held is not None:
            members = members[held[c]]
        G = take(X, members)
        G -= shift
        groups.append(G)
        a = None if weights is None else arrays.like(weights[members] / weights[members].sum(), G)
        centre = xp.mean(G, axis=0) if a is None else a @ G
        rows = max(2, int(CHUNK_BYTES // (arrays.itemsize(G) * max(G.shape[1], 1))))
        total = 0.0
        for i in range(0, G.shape[0], rows):
            block = slice(i, min(i + rows, G.shape[0]))
            squares = xp.sum((G[block, :] - centre) ** 2, axis=1)
            total += float(xp.sum(squares)) / G.shape[0] if a is None \
                else float(a[block] @ squares)
        uniform += 2.0 * total
    Sw, Sb = class_scatters(X, codes, n_classes, weights=weights)
    return arrays.to_host(mean), groups, Sw, Sb, uniform
