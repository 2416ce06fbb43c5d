"""Undercomplete ICA's source priors (:mod:`ldr.objectives.ica`): their log-densities and
derivatives, the columns' best scales along a direction, and extended infomax's switching
statistic that chooses a prior per source.

* ``"supergaussian"``: p(y) = 1/(π cosh y), log p = −log cosh y − log π;
* ``"subgaussian"``: p(y) = ½[N(y; 1, 1) + N(y; −1, 1)], log p = log cosh y − y²/2 − ½ log 2πe.

References
----------
Lee, Girolami & Sejnowski (1999), Independent component analysis using an extended infomax
algorithm for mixed subgaussian and supergaussian sources, Neural Computation 11(2).
"""

from __future__ import annotations

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays

__all__ = ["HALF_LOG_2PI_E", "LOG_PI", "PRIORS", "best_scales", "check_priors", "log_cosh",
           "log_prior", "prior_derivatives", "switching_statistic"]

PRIORS = ("supergaussian", "subgaussian")
#: log π, the super-Gaussian prior's constant
LOG_PI = float(np.log(np.pi))
#: ½ log 2πe = ½(1 + log 2π), the sub-Gaussian prior's constant (and a unit Gaussian's entropy)
HALF_LOG_2PI_E = 0.5 * (1.0 + np.log(2.0 * np.pi))


def log_cosh(y):
    """log cosh y without overflow: |y| + log1p(exp(−2|y|)) − log 2 (in y's namespace;
    autograd-traceable)."""
    xp = arrays.namespace(y)
    a = xp.abs(y)
    return a + xp.log1p(xp.exp(-2.0 * a)) - np.log(2.0)


def log_prior(y, prior: str):
    """log p(y) of a source prior (module docstring), elementwise."""
    if prior == "supergaussian":
        return -log_cosh(y) - LOG_PI
    return log_cosh(y) - 0.5 * y * y - HALF_LOG_2PI_E


def prior_derivatives(Y: np.ndarray, sub: np.ndarray, second: bool = True, t=None):
    """g′(Y) and, with ``second``, g″(Y) per column (``sub[k]``: column k has the
    sub-Gaussian prior); one tanh per entry (``t``, when given), each branch only on its own
    columns."""
    t = np.tanh(Y) if t is None else t  # read only
    g1 = -t
    if sub.any():
        g1[:, sub] += Y[:, sub]
        g1[:, sub] *= -1.0
    if not second:
        return g1, None
    g2 = t * t
    if sub.all():
        g2 *= -1.0
    else:
        g2 -= 1.0
        if sub.any():
            g2[:, sub] = -(t[:, sub] ** 2)
    return g1, g2


def best_scales(Y: np.ndarray, sub: np.ndarray, lo: float = -5.0, hi: float = 5.0,
                tol: float = 1e-12, max_iter: int = 100) -> np.ndarray:
    """For each column y of ``Y``, the c = e^t, t ∈ [lo, hi], that minimizes the 1-D cost of
    one column along y,

        φ(t) = −t − mean log p(e^t y)   (``sub[k]``: column k has the sub-Gaussian prior).

    With u = e^t y and ρ = −log p, φ′(t) = −1 + mean(u ρ′(u)) and
    φ″(t) = mean(u ρ′(u) + u² ρ″(u)); u ρ′(u) (u tanh u, resp. u² − u tanh u) increases with
    |u|, so φ′ increases in t and the minimizer is its root, or the end of the interval where
    φ′ keeps one sign (checked first: such a column ends there at once).  The other columns
    at once: Newton steps on t, kept inside a bracket that each step narrows (bisection when a
    step leaves it), until each column's step is below ``tol``.

    With a = mean(u tanh u), b = mean(u² tanh² u) and q = mean(u²) = e^{2t} mean(y²):
    mean(u ρ′) = a (super-Gaussian), q − a (sub-Gaussian); mean(u² ρ″) = q − b, resp. b — one
    tanh and two means per column and step.  The ends are checked exactly only where cheap
    bounds leave them open: 0 ≤ u tanh u ≤ u² (so mean(u ρ′) ≤ q) and
    u tanh u ≥ |u| − 0.28 (so mean(u ρ′) ≥ e^t mean|y| − 0.28, resp. q − e^t mean|y|)."""
    Y = np.asarray(Y, dtype=float)
    sub = np.asarray(sub, dtype=bool)
    n = Y.shape[0]  # sums / n: np.mean's arithmetic without its Python layer
    y2 = (Y * Y).sum(axis=0) / n
    y1 = np.abs(Y).sum(axis=0) / n

    def slopes(t, cols):
        et = np.exp(t)
        U = Y[:, cols] * et
        P = U * np.tanh(U)
        a = P.sum(axis=0) / n
        b = (P * P).sum(axis=0) / n
        q = y2[cols] * et * et
        s = sub[cols]
        urho1 = np.where(s, q - a, a)
        return urho1 - 1.0, urho1 + np.where(s, b, q - b)

    r = Y.shape[1]
    t = np.zeros(r)
    e_lo = np.exp(lo)
    e_hi = np.exp(hi)
    open_lo = np.flatnonzero(y2 * e_lo * e_lo >= 0.5)   # else mean(u ρ′) < 1 at lo surely
    at_lo = np.zeros(r, dtype=bool)
    if open_lo.size:
        at_lo[open_lo] = slopes(np.full(open_lo.size, lo), open_lo)[0] >= 0
    low_bound = np.where(sub, y2 * e_hi * e_hi - e_hi * y1, e_hi * y1 - 0.28)
    open_hi = np.flatnonzero(~at_lo & (low_bound <= 1.5))  # else φ′ > 0 at hi surely
    at_hi = np.zeros(r, dtype=bool)
    if open_hi.size:
        at_hi[open_hi] = slopes(np.full(open_hi.size, hi), open_hi)[0] <= 0
    t[at_lo] = lo
    t[at_hi] = hi
    cols = np.flatnonzero(~at_lo & ~at_hi)
    a = np.full(cols.size, lo)
    b = np.full(cols.size, hi)
    x = np.zeros(cols.size)
    for _ in range(max_iter):
        if cols.size == 0:
            break
        d1, d2 = slopes(x, cols)
        a = np.where(d1 < 0, x, a)                  # the root lies above x
        b = np.where(d1 > 0, x, b)                  # … below x
        with np.errstate(divide="ignore", invalid="ignore"):
            new = x - d1 / d2
        inside = np.isfinite(new) & (new > a) & (new < b)
        new = np.where(inside, new, 0.5 * (a + b))
        done = (np.abs(new - x) <= tol) | (b - a <= tol) | (d1 == 0)
        t[cols] = new
        cols, a, b, x = cols[~done], a[~done], b[~done], new[~done]
    return np.exp(t)


def switching_statistic(Y: np.ndarray) -> np.ndarray:
    """Extended infomax's k = E[sech² y]E[y²] − E[y tanh y] for each column of ``Y`` (module
    docstring): positive for a source that the super-Gaussian prior fits stably, negative
    for one that needs the sub-Gaussian prior."""
    t = np.tanh(Y)
    n = Y.shape[0]  # sums / n: np.mean's arithmetic without its Python layer
    return ((1.0 - t * t).sum(axis=0) / n * ((Y * Y).sum(axis=0) / n)
            - (Y * t).sum(axis=0) / n)


def check_priors(prior, r: int) -> tuple[str, ...]:
    """``prior`` as a tuple of r names from ``PRIORS`` ("supergaussian", "subgaussian"); one
    name applies to every source ("auto" is resolved by :class:`UndercompleteICA`)."""
    if isinstance(prior, str):
        prior = (prior,) * r
    try:
        priors = tuple(prior)
    except TypeError:
        priors = ()
    if len(priors) != r or any(not isinstance(p, str) or p not in PRIORS for p in priors):
        raise ParameterError("prior", f"expected 'auto', one of {PRIORS} or a sequence of {r} of "
                         f"them (one per source), got {prior!r}")
    return priors
