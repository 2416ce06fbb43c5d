"""WDA's entropic transport in the namespace and on the device of the data (PyTorch, CuPy,
JAX, array-api-strict; issue 24): the algorithm of :mod:`ldr.objectives._transport` —
equations (1)–(4) there, the same log-domain Sinkhorn, the same stored reference kernel
with its re-centring rules or the same row blocks, the same checkpointed reverse pass —
written with array API functions only (no ``out=`` buffers: not every namespace has them).

NumPy arrays never come here (:class:`ldr.objectives.WDA` keeps its NumPy code, and speed,
for them).  The only values read on the host are the scalars of the re-centring decisions
(two per half-iteration while a reference kernel is stored) and the loss; every n×m and
n×d array stays on the device.  Complex dtypes (complex128 from float64, complex64 from
float32) carry the complex step of :meth:`ldr.objectives.WDA.ehvp`; the decisions read real
parts.  Row blocks: as many rows as half of ``cache_bytes`` allows (a device favours few large
products over the CPU's cache-sized ones).
"""

from __future__ import annotations

import math

import numpy as np

from ldr.data import arrays
from ldr.data.rows import moments
from ldr.data.validation import MAX_MAGNITUDE, MIN_MAGNITUDE
from ldr.errors import ParameterError
from ldr.objectives._transport import _OVER, _SAFE, potentials


def _re(xp, a):
    return xp.real(a) if xp.isdtype(a.dtype, "complex floating") else a


def _itemsize(xp, dtype) -> int:
    if xp.isdtype(dtype, "complex floating"):
        return 2 * xp.finfo(dtype).bits // 8
    return xp.finfo(dtype).bits // 8


def _col(v):
    return v[:, None]


class PairKernelXP:
    """:class:`ldr.objectives._transport.PairKernel` in the namespace of ``Ya`` (same
    methods, same iterates to rounding)."""

    def __init__(self, Ya, Yb, reg: float, cache_bytes: float, rows: int | None = None):
        xp = self.xp = arrays.namespace(Ya)
        self.dtype, self.device = Ya.dtype, arrays.device(Ya)
        self.n, self.m = Ya.shape[0], Yb.shape[0]
        self.reg = reg
        itemsize = _itemsize(xp, self.dtype)
        sa, sb = xp.sum(Ya * Ya, axis=1), xp.sum(Yb * Yb, axis=1)  # no conj: complex step
        one_a, one_b = self.ones(self.n), self.ones(self.m)
        self._left = xp.concat([Ya * (2.0 / reg), _col(sa * (-1.0 / reg)), _col(one_a)], axis=1)
        self._right_t = xp.concat([Yb, _col(one_b), _col(sb * (-1.0 / reg))], axis=1).T
        self._mleft = xp.concat([Ya * -2.0, _col(sa), _col(one_a)], axis=1)
        self._mright_t = xp.concat([Yb, _col(one_b), _col(sb)], axis=1).T
        self.cached = self.n * self.m * itemsize <= cache_bytes
        self.rows = min(self.n, int(rows) if rows else max(
            1, int(cache_bytes // (2 * itemsize * max(self.m, 1)))))
        self.K = self.alpha = self.beta = None
        self.exp_passes = 0

    def ones(self, k: int):
        return self.xp.ones(k, dtype=self.dtype, device=self.device)

    def zeros(self, k: int):
        return self.xp.zeros(k, dtype=self.dtype, device=self.device)

    def _factors(self, f=None, g=None):
        """(L, Rᵀ) with L Rᵀ = S + f ⊕ g."""
        xp, L, Rt = self.xp, self._left, self._right_t
        if f is not None:
            L = xp.concat([L[:, :-2], _col(L[:, -2] + f), L[:, -1:]], axis=1)
        if g is not None:
            Rt = xp.concat([Rt[:-1, :], (Rt[-1, :] + g)[None, :]], axis=0)
        return L, Rt

    def _blocks(self):
        for i in range(0, self.n, self.rows):
            yield slice(i, min(i + self.rows, self.n))

    def _max(self, a) -> float:
        return float(self.xp.max(_re(self.xp, a)))

    def _set_reference(self, alpha, beta, shift: str | None = None):
        xp = self.xp
        L, Rt = self._factors(alpha, beta)
        self.K = None  # free the old reference first
        K = L @ Rt
        if shift == "cols":
            s = -xp.max(_re(xp, K), axis=0)
            K += s
            beta = beta + s
        elif shift == "rows":
            s = -xp.max(_re(xp, K), axis=1)
            K += _col(s)
            alpha = alpha + s
        self.K = xp.exp(K)
        self.alpha, self.beta = alpha, beta
        self.exp_passes += 1

    def lse_cols(self, f):
        """LSE_i(S_ij + f_i) for each column j."""
        xp = self.xp
        if not self.cached:
            L, Rt = self._factors(f)
            real = _re(xp, L).dtype
            mx = xp.full(self.m, -math.inf, dtype=real, device=self.device)
            s = self.zeros(self.m)
            for r in self._blocks():
                B = L[r, :] @ Rt
                new = xp.maximum(mx, xp.max(_re(xp, B), axis=0))
                s = s * xp.exp(mx - new) + xp.sum(xp.exp(B - new), axis=0)
                mx = new
            self.exp_passes += 1
            return xp.log(s) + mx
        if self.K is not None:
            dx = self._max(f - self.alpha)
            if dx < _OVER:
                s = xp.exp(f - self.alpha) @ self.K
                low = float(xp.min(_re(xp, s)))
                if low > 0 and dx - math.log(low) < _OVER:
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
                B = L[r, :] @ Rt
                mx = xp.max(_re(xp, B), axis=1)
                parts.append(xp.log(xp.sum(xp.exp(B - _col(mx)), axis=1)) + mx)
            self.exp_passes += 1
            return xp.concat(parts)
        if self.K is not None:
            dy = self._max(g - self.beta)
            if dy < _OVER:
                s = self.K @ xp.exp(g - self.beta)
                low = float(xp.min(_re(xp, s)))
                if low > 0 and dy - math.log(low) < _OVER:
                    return xp.log(s) - self.alpha
        self._set_reference(self.zeros(self.n), g, "rows")
        return xp.log(xp.sum(self.K, axis=1)) - self.alpha

    def _reference_ok(self, f, g) -> bool:
        if self.K is None:
            return False
        dx, dy = self._max(f - self.alpha), self._max(g - self.beta)
        return dx < _OVER and dy < _OVER and dx + dy < _SAFE

    def prod(self, f, g, R, L):
        """(E R, Eᵀ L) for E = exp(S + f ⊕ g)."""
        xp = self.xp
        if not self.cached:
            Lf, Rt = self._factors(f, g)
            parts, ETL = [], 0.0
            for r in self._blocks():
                E = xp.exp(Lf[r, :] @ Rt)
                parts.append(E @ R)
                ETL = ETL + E.T @ L[r, :]
            self.exp_passes += 1
            return xp.concat(parts, axis=0), ETL
        if not self._reference_ok(f, g):
            self._set_reference(f, g)
        x, y = _col(xp.exp(f - self.alpha)), _col(xp.exp(g - self.beta))
        return x * (self.K @ (y * R)), y * ((x * L).T @ self.K).T

    def final(self, f, g, R, L, with_m: bool):
        """:meth:`ldr.objectives._transport.PairKernel.final`: ``(T R, Tᵀ L)`` and, with
        ``with_m``, ``((T∘M) R, (T∘M)ᵀ L, ⟨T, M⟩)``."""
        xp = self.xp
        ref = self._reference_ok(f, g)
        if ref:
            x, y = xp.exp(f - self.alpha), xp.exp(g - self.beta)
        else:
            Lf, Rt = self._factors(f, g)
            self.exp_passes += 1
        TR, TL, TMR, TML, loss = [], 0.0, [], 0.0, 0.0
        for r in self._blocks():
            T = self.K[r, :] * y * _col(x[r]) if ref else xp.exp(Lf[r, :] @ Rt)
            TR.append(T @ R)
            TL = TL + T.T @ L[r, :]
            if with_m:
                TM = (self._mleft[r, :] @ self._mright_t) * T
                TMR.append(TM @ R)
                TML = TML + TM.T @ L[r, :]
                loss = loss + xp.sum(TM)
        TR = xp.concat(TR, axis=0)
        return (TR, TL, xp.concat(TMR, axis=0), TML, loss) if with_m else (TR, TL)

    def plan(self, f, g):
        """The n×m plan T = exp(S + f ⊕ g) itself."""
        Lf, Rt = self._factors(f, g)
        return self.xp.exp(Lf @ Rt)


def pair_plan(Ya, Yb, reg: float, n_iter: int, cache_bytes: float):
    """The plan T of (2) between the rows of Ya and Yb (an n×m array)."""
    kern = PairKernelXP(Ya, Yb, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    return kern.plan(fs[-1], gs[-1])


def pair_loss(Ya, Yb, reg: float, n_iter: int, cache_bytes: float):
    """ℓ = ⟨T, M⟩ of (2) (a 0-d array)."""
    kern = PairKernelXP(Ya, Yb, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    return kern.final(fs[-1], gs[-1], _col(kern.ones(kern.m)), _col(kern.ones(kern.n)),
                      True)[4]


def pair_scatter(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float):
    """:func:`ldr.objectives._transport.pair_scatter` in the namespace (a d×d array)."""
    xp = arrays.namespace(Xa)
    kern = PairKernelXP(Xa @ P, Xb @ P, reg, cache_bytes)
    fs, gs = potentials(kern, n_iter)
    TR, TL = kern.final(fs[-1], gs[-1], xp.concat([_col(kern.ones(kern.m)), Xb], axis=1),
                        _col(kern.ones(kern.n)), False)
    r, c, TXb = TR[:, :1], TL[:, :1], TR[:, 1:]
    cross = Xa.T @ TXb
    return Xa.T @ (r * Xa) + Xb.T @ (c * Xb) - cross - cross.T


def pair_gradient(Xa, Xb, P, reg: float, n_iter: int, cache_bytes: float):
    """``(ℓ, ∇_P ℓ)`` by the reverse pass (3)–(4), in the namespace (P real or complex; the
    data are cast to P's dtype)."""
    xp = arrays.namespace(Xa)
    if Xa.dtype != P.dtype:
        Xa, Xb = xp.astype(Xa, P.dtype), xp.astype(Xb, P.dtype)
    Ya, Yb = Xa @ P, Xb @ P
    kern = PairKernelXP(Ya, Yb, reg, cache_bytes)
    n, m = kern.n, kern.m
    fs, gs = potentials(kern, n_iter)
    Rb = xp.concat([_col(kern.ones(m)), Yb], axis=1)
    La = xp.concat([_col(kern.ones(n)), Ya], axis=1)
    TR, TL, TMR, TML, loss = kern.final(fs[-1], gs[-1], Rb, La, True)
    inv = 1.0 / reg
    WR, WL = TR - inv * TMR, TL - inv * TML
    fbar, gbar = TMR[:, 0], TML[:, 0]
    for t in range(n_iter, 0, -1):
        QR, QTL = kern.prod(fs[t], gs[t], Rb, _col(fbar) * La)
        WR = WR + (n * inv) * _col(fbar) * QR
        WL = WL + (n * inv) * QTL
        gbar = gbar - n * QTL[:, 0]
        PR, PTL = kern.prod(fs[t - 1], gs[t], _col(gbar) * Rb, La)
        WR = WR + (m * inv) * PR
        WL = WL + (m * inv) * _col(gbar) * PTL
        fbar = -m * PR[:, 0]
        gbar = kern.zeros(m)
    gYa = 2.0 * (WR[:, :1] * Ya - WR[:, 1:])
    gYb = 2.0 * (WL[:, :1] * Yb - WL[:, 1:])
    return loss, Xa.T @ gYa + Xb.T @ gYb


def complex_step(egrad, P, V, h64: float, h32: float):
    """The derivative of ``egrad`` at P along V by the complex step, Im ∇f(P + ihV)/h, in
    complex128 (h = ``h64``/max|V|) or, for float32 P, complex64 (h = ``h32``/max|V|)."""
    xp = arrays.namespace(P)
    scale = arrays.max_abs(V)
    if scale == 0.0:
        return xp.zeros_like(V)
    single = P.dtype == xp.float32
    h = (h32 if single else h64) / scale
    cdtype = xp.complex64 if single else xp.complex128
    Pc = xp.astype(P, cdtype) + xp.astype(V * h, cdtype) * 1j
    return xp.astype(xp.imag(egrad(Pc)) / h, P.dtype)


def take(A, rows):
    """The rows ``rows`` (host indices) of A in its namespace."""
    xp = arrays.namespace(A)
    return xp.take(A, xp.asarray(rows, device=arrays.device(A)), axis=0)


def trace(C) -> float:
    """tr C as a Python float (one scalar from the device)."""
    xp = arrays.namespace(C)
    return float(xp.linalg.trace(C)) if xp is not np else float(np.trace(C))


def is_complex(A) -> bool:
    return arrays.namespace(A).isdtype(A.dtype, "complex floating")


def class_rows(X, codes: np.ndarray, n_classes: int, name: str = "X"):
    """WDA's data preparation in X's namespace, on its device (no copy of the rows to the
    host): ``(mean, S_w, S_b, groups, uniform_w)`` — the mean and FDA's scatters (d and d×d,
    NumPy on the host), each class's centered rows (arrays of X's namespace in X's float
    dtype; integers: float64) and tr C_w of uniform plans (a float).  The checks of
    :func:`ldr.data.validation.check_data`: 2-D, real, finite, magnitude.  The statistics are
    computed in float64 and the rows rounded to X's dtype afterwards, as a host copy of X
    would be (:func:`ldr.data.arrays.like`)."""
    xp = arrays.namespace(X)
    if X.ndim != 2:
        raise ParameterError(name, f"expected a 2-D array of shape (n_samples, n_features), "
                                   f"got an array with shape {tuple(X.shape)}")
    if xp.isdtype(X.dtype, "complex floating"):
        raise ParameterError(name, f"complex data is not supported, got dtype {X.dtype}")
    dtype = X.dtype if xp.isdtype(X.dtype, "real floating") else xp.float64
    X64 = X if X.dtype == xp.float64 else xp.astype(X, xp.float64)
    if not arrays.all_finite(X64):
        raise ParameterError(name, "Input X contains NaN or infinity; remove or impute those "
                                   "rows")
    top = arrays.max_abs(X64)
    if top > MAX_MAGNITUDE or 0.0 < top < MIN_MAGNITUDE:
        raise ParameterError(name, f"its largest magnitude is {top:.1e}; products of such "
                                   "values over- or underflow double precision: rescale it "
                                   "(for WDA, scale reg by the square of the factor)")
    mean = xp.mean(X64, axis=0)
    Xc = X64 - mean
    Sw, Sb, _ = moments(Xc, codes, name=name).on_host().class_scatter()
    groups, uniform = [], 0.0
    for c in range(n_classes):
        G = take(Xc, np.flatnonzero(codes == c))
        uniform += 2.0 * float(xp.sum((G - xp.mean(G, axis=0)) ** 2)) / G.shape[0]
        groups.append(G if dtype == xp.float64 else xp.astype(G, dtype))
    return arrays.to_host(mean), Sw, Sb, groups, uniform
