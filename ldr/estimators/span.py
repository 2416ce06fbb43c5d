"""Fitting on singular data: the estimators work in the span of the data where an objective
would refuse it.

A covariance (or within-class scatter, or S_D) is singular when some direction v carries no
variance: a constant feature (a dummy column that is constant in a cross-validation fold), a
feature that is a linear combination of others (all the dummies of a categorical variable,
or a total next to its parts, as survey tables often have), or fewer samples than features.
Every row has the same coordinate along such a v, so nothing about the data is lost by
dropping it: with U (d×k) an orthonormal basis of the span of the centered rows
(:func:`ldr.data.validation.span_basis`), the estimator fits the objective on the
coordinates z = Uᵀx, a problem of dimension k that is well posed, and maps the answer back,
``M_ = U M`` (an orthonormal d×r point again) and ``components_`` in the original features.
The estimator records U as ``subspace_`` (None when the data span the whole space — the
common case, where nothing changes and the check costs one Cholesky factorization).

The objectives themselves keep refusing singular statistics: they are the mathematical
objects, whose ratio is 0/0 along such a v.  The reduction happens only where the objective
would refuse (no shrinkage); a shrinkage > 0 already makes the matrix non-singular.
"""

from __future__ import annotations

import numbers

import numpy as np

from ldr.core.errors import ParameterError
from ldr.data import arrays
from ldr.data.rows import as_dask_array, moments
from ldr.data.validation import is_lazy, span_basis

__all__ = ["check_span_components", "reduce_rows"]


def _no_shrinkage(level) -> bool:
    return isinstance(level, numbers.Real) and not isinstance(level, bool) and level == 0


def reduce_rows(data, shrinkage, moment_options: dict | None, rows: bool = False,
                stats=None):
    """For an estimator whose objective inverts the covariance of X (MAF, SFA, LPP, NPE): the
    rows' :class:`~ldr.data.statistics.Moments` (built with ``moment_options``) and, when
    ``shrinkage`` is 0 and the covariance is singular, the data's span U and the reduced
    data — the Moments of the rows Uᵀx, which the objective reads in place of X, or the rows
    X U themselves with ``rows`` (objectives that need the rows: a neighbour graph).
    ``stats``: the rows' moments when already computed (a partial fit's merged batches).  Sets
    ``data.stats``, ``data.X`` (the Moments, unless ``rows``), ``data.basis`` and
    ``data.mean`` (the mean of the original features); returns U, or None."""
    if rows and not _no_shrinkage(shrinkage):
        return None
    if stats is None:
        stats = moments(data.X, name="X", min_samples=3 if moment_options else 2,
                        validated=True, **(moment_options or {})).on_host()
    data.stats = stats
    if not _no_shrinkage(shrinkage):
        data.X = stats
        return None
    U = span_basis(stats.covariance(), "X")
    if not rows:
        data.X = stats if U is None else stats.project(U)  # one pass, read by the objective
    if U is None:
        return None
    if rows:
        data.X = as_dask_array(data.X, "X") @ U if is_lazy(data.X) \
            else data.X @ arrays.like(U, data.X)
    data.basis = U
    data.mean = np.asarray(stats.mean)
    return U


def check_span_components(q, k: int, d: int, default: int | None = None) -> int:
    """``n_components`` for data that span only k < d dimensions: 1 <= q < k (None: ``default``,
    else k − 1, the largest proper subspace of the span)."""
    if q is None:
        q = k - 1 if default is None else min(default, k - 1)
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or not 1 <= q < k:
        raise ParameterError("n_components",
            f"must be an integer with 1 <= n_components < {k}, the rank of X: X spans only "
            f"{k} of its {d} dimensions (constant or collinear features, or fewer samples "
            f"than features) and the fit works in that span (subspace_); got {q!r}")
    return int(q)
