"""Maximum autocorrelation factors: a quotient of traces (survey §3.1.5, Eq. 11–12).

Rows x_1, …, x_n of X are samples **in time order**, centered by their mean.  For a lag δ:

    Σ   = (1/n) Σ_t x_t x_tᵀ,
    C_δ = (1/n) Σ_{t=1}^{n−δ} x_t x_{t+δ}ᵀ,           Σ_δ = ½ (C_δ + C_δᵀ),

    minimize  f(M) = −tr(MᵀΣ_δM) / tr(MᵀΣM)  over orthonormal d×r M      (Eq. 12)

(the survey maximizes the lag-δ autocorrelation ρ(M) = tr(MᵀΣ_δM)/tr(MᵀΣM) of the projection
y_t = Mᵀx_t, Eq. 11; the cost is its negative).  As a quotient of traces with A = Σ_δ,
B = Σ (:class:`~ldr.objectives.quotient.QuotientOfTraces`):

* gradient  ∇f(M) = −2 (Σ_δ − ρΣ) M / tr(MᵀΣM) = 2 Φ(M) M
* Φ-oracle  Φ(M) = −(Σ_δ − ρ(M) Σ) / tr(MᵀΣM)   (ISM on it is the trace-ratio iteration)
* pencil    (Σ_δ, Σ)
* heuristic the orthonormalized top-r eigenvectors of Σ⁻¹Σ_δ — optimal for r = 1 only
  (survey §3.1.5); for r > 1 it solves the trace of quotient, not Eq. 12.

Σ_δ may be indefinite (negative autocorrelation); Σ must be positive definite, or be shrunk
with ``shrinkage``.

**Why 1/n for C_δ.**  With both sums divided by n, ρ(M) is the standard (biased) sample
autocorrelation — statsmodels' ``acf(adjusted=False)`` of y_t = mᵀx_t for r = 1 — and, for
every M, a trace-weighted mean of such autocorrelations, so −1 ≤ ρ(M) ≤ 1 (Cauchy–Schwarz:
|Σ_{t≤n−δ} y_t y_{t+δ}| ≤ Σ_t y_t²).  The survey's code (cunni/ldr ``run_maf.m``) divides the
lagged sum by n − 1 instead, which lets the score exceed 1 by up to n/(n − δ) (1.002 on
statsmodels' macrodata in levels); the two differ by the constant factor (n − δ)/n, so they
have the same maximizers.
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.core.deprecation import renamed_value
from ldr.core.errors import ParameterError
from ldr.core.objective import Method
from ldr.data.rows import moments
from ldr.data.validation import (
    check_nonsingular,
    check_rank,
    shrink,
)
from ldr.objectives.quotient import QuotientOfTraces

__all__ = ["MAF"]


def check_lag(lag, n_samples: int, name: str = "lag") -> int:
    """Return ``lag`` as an int with 1 ≤ lag < n_samples − 1 (at least two lagged pairs)."""
    if isinstance(lag, bool) or not isinstance(lag, numbers.Integral):
        raise ParameterError(
            name, f"the time lag must be an integer number of samples, got {lag!r}")
    lag = int(lag)
    if lag < 1 or lag >= n_samples - 1:
        raise ParameterError(name,
            f"the time lag must satisfy 1 <= lag < n_samples - 1 = {n_samples - 1} "
            f"(at least two pairs (x_t, x_t+lag) are needed), got lag={lag} with "
            f"n_samples={n_samples}"
        )
    return lag


def lagged_covariance(X, lag: int = 1) -> np.ndarray:
    """Σ_δ = ½ (C_δ + C_δᵀ), C_δ = (1/n) Σ_t x_t x_{t+δ}ᵀ, of the mean-centered rows of X
    (MAF's lagged covariance; divided by n, so vᵀΣ_δv / vᵀΣv is the sample autocorrelation
    of Xv and lies in [−1, 1]).

    The rows of ``X`` must be in time order; ``lag`` is δ, in samples.  ``X`` may be anything
    :func:`ldr.data.rows.moments` reads (pairs across chunk boundaries are counted).
    """
    if isinstance(lag, bool) or not isinstance(lag, numbers.Integral):
        check_lag(lag, 3)
    stats = moments(X, lag=max(int(lag), 1), name="X", min_samples=3)
    check_lag(lag, stats.n)
    return stats.lagged_covariance(adjusted=False)


class MAF(QuotientOfTraces):
    """Maximum autocorrelation factors: maximize tr(MᵀΣ_δM)/tr(MᵀΣM) (cost is the negative).

    The **row order of X is the time order**, and keeping it is the caller's responsibility:
    the objective cannot tell time-ordered rows from shuffled ones, and shuffled (or sorted by
    anything but time) rows silently give a meaningless answer — Σ_δ of shuffled rows is
    close to zero and the "factors" are noise.

    Parameters
    ----------
    X : array (n_samples, n_features), Dask array, iterator of chunks, or Moments
        Samples as rows, in time order (equally spaced); centered per feature (a copy).
        Only Σ and Σ_δ are kept, computed in one pass by :func:`ldr.data.rows.moments` (the lagged
        pairs that straddle chunk boundaries included).
    r : int
        Subspace dimension, 1 ≤ r < n_features.
    lag : int
        The time lag δ in samples, 1 ≤ lag < n_samples − 1.
    shrinkage : float in [0, 1]
        s in the shrinkage of the covariance, Σ ← (1 − s) Σ + s · tr(Σ)/d · I (Σ_δ is left as
        it is).  A singular Σ (fewer samples than features, constant or collinear features)
        makes the ratio unbounded and raises an error that asks for ``shrinkage > 0``.
    manifold : {"grassmann", "stiefel"}

    Attributes
    ----------
    mean_ : (n_features,) per-feature mean
    Sigma : (n_features, n_features) covariance Σ (divided by n; shrunk when shrinkage > 0)
    Sigma_lag : (n_features, n_features) symmetrized lag-δ cross-covariance Σ_δ (divided by n)
    lag : int

    Examples
    --------
    >>> import ldr
    >>> X = ldr.datasets.make_maf(200, 8, seed=0)
    >>> obj = ldr.objectives.MAF(X, 2)
    >>> res = ldr.solve(obj, "trust-region", start="heuristic")
    >>> bool(obj.autocorrelation(res.M) >= obj.autocorrelation(obj.heuristic()))
    True

    Default solver: ``["ism", "trust-region"]``, as for every quotient of traces.
    """

    method = Method("maf", "maximum autocorrelation factors (rows in time order), lag 1",
                    options={"reg": "shrinkage"}, chunks={"lag": 1})


    def __init__(self, X, r: int, lag: int = 1, shrinkage: float = 0.0,
                 manifold: str = "grassmann", *, reg="deprecated"):
        shrinkage = renamed_value(type(self).__name__, "reg", "shrinkage", reg, shrinkage)
        if isinstance(lag, bool) or not isinstance(lag, numbers.Integral):
            check_lag(lag, 3)
        stats = moments(X, lag=max(int(lag), 1), name="X", min_samples=3)
        n = stats.n
        d = stats.d
        r = check_rank(r, d)
        lag = check_lag(lag, n)
        self.mean_ = stats.mean
        self.n_samples_ = n
        Sigma = shrink(stats.covariance(), shrinkage)
        check_nonsingular(Sigma, "X", "covariance Σ", "the autocorrelation ratio is unbounded",
                          n)
        super().__init__(stats.lagged_covariance(adjusted=False), Sigma, r, manifold)
        self.Sigma_lag, self.Sigma, self.lag = self.A, self.B, lag

    def autocorrelation(self, M) -> float:
        """ρ(M) = tr(MᵀΣ_δM)/tr(MᵀΣM), the lag-δ autocorrelation of X M (Eq. 11), in [−1, 1]
        (for r = 1, statsmodels' ``acf(X @ m, adjusted=False)[δ]``)."""
        return self.ratio(M)

    def linear_map(self, M):
        """x ↦ (x − ``mean_``) M."""
        return self.mean_, M
