"""Input validation shared by every objective and estimator.

Each check returns a fresh float64 copy (the caller's arrays are never modified) or raises a
``ValueError`` that names the offending argument.  Array conversion and the finiteness test come
from scikit-learn's ``check_array``; the messages are prefixed with the argument's name.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg

from ldr.core.errors import ParameterError
from ldr.data import arrays

#: Data whose largest magnitude lies outside [MIN_MAGNITUDE, MAX_MAGNITUDE] are rejected: their
#: squares and cross-products (covariances, distances, kernels) over- or underflow float64
#: (whose range is about 1e±308), silently turning statistics into inf or 0.
MAX_MAGNITUDE = 1e100
MIN_MAGNITUDE = 1e-100


def check_magnitude(X, name: str = "X") -> None:
    """Raise a ValueError when the data's magnitude is so large or small that second-order
    statistics of it over- or underflow (all-zero data pass: they are merely constant); X of
    any array namespace (two scalars to the host)."""
    xp = arrays.namespace(X)
    empty = any(k == 0 for k in X.shape)
    top = 0.0 if empty else max(float(xp.max(X)), -float(xp.min(X)))  # no |X| copy
    if top > MAX_MAGNITUDE or 0.0 < top < MIN_MAGNITUDE:
        raise ParameterError(name,
            f"its largest magnitude is {top:.1e}; products of such values "
            f"{'overflow' if top > 1 else 'underflow'} double precision (covariances, distances "
            f"and kernels need |x| in [{MIN_MAGNITUDE:.0e}, {MAX_MAGNITUDE:.0e}]). Rescale it, "
            f"e.g. {name} / np.abs({name}).max(): ldr's methods give the same subspace on "
            "rescaled data (for WDA, scale reg by the square of the factor).")


def non_numeric_column(X) -> tuple[int, object, Exception] | None:
    """``(index, name, error)`` of the first column of the table ``X`` (a DataFrame or a 2-D
    array) whose values cannot be read as floats (name None for an array), or None."""
    columns = getattr(X, "columns", None)
    if columns is not None and hasattr(X, "iloc"):
        cols = ((j, name, X.iloc[:, j]) for j, name in enumerate(columns))
    else:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):  # ragged rows: not a table, nothing to name
            return None
        if arr.ndim != 2 or arr.dtype.kind not in "OSU":
            return None
        cols = ((j, None, arr[:, j]) for j in range(arr.shape[1]))
    for j, name, values in cols:
        try:
            np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            return j, name, exc
    return None


def non_numeric_error(X, name: str = "X") -> ParameterError | None:
    """The ParameterError naming the first non-numeric column of ``X`` (by index, and by name
    for a DataFrame) and how to encode it; None when every column is numeric."""
    found = non_numeric_column(X)
    if found is None:
        return None
    j, col, exc = found
    where = f"column {j}" if col is None else f"column {j} ({col!r})"
    return ParameterError(name,
        f"{where} is not numeric ({exc}): {name} must be numeric. Encode categorical "
        "columns first, e.g. with sklearn.preprocessing.OneHotEncoder (in a "
        "sklearn.compose.ColumnTransformer) or pandas.get_dummies")


def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, with errors that name the fix when X or y is not
    numeric: the first non-numeric column of X, by index and DataFrame column name ("encode
    categorical columns first"), and, for ``y_numeric=True``, that y must be numeric targets."""
    from sklearn.utils.validation import validate_data as sklearn_validate_data

    try:
        out = sklearn_validate_data(estimator, X, y, **kwargs)
    except ValueError as exc:  # (a TypeError, e.g. a dict entry, stays scikit-learn's)
        if isinstance(exc, ParameterError):
            raise
        if not isinstance(X, str):
            better = non_numeric_error(X, "X")
            if better is not None:
                raise better from None
        if kwargs.get("y_numeric") and not isinstance(y, str):
            check_numeric_targets(y)
        raise
    if kwargs.get("y_numeric") and not isinstance(y, str):
        check_numeric_targets(out[1])  # string labels pass scikit-learn's multi-output path
    return out


def check_numeric_targets(y) -> None:
    """A ParameterError naming ``y`` when its entries are not numbers (class labels given to
    a regressor)."""
    if arrays.foreign(y) is not None:  # another namespace's array: numbers or bool
        return
    try:
        if np.asarray(y).dtype.kind in "biufc":
            return
        np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            "y", f"must be numeric targets ({exc}). For class labels, one-hot encode them "
            "first, e.g. with sklearn.preprocessing.LabelBinarizer (or OneHotEncoder for "
            "several label columns)") from None


def check_data(X, name: str = "X", min_samples: int = 2, copy: bool = True) -> np.ndarray:
    """Return ``X`` as a new 2-D float64 array with finite entries of a magnitude whose
    products do not over- or underflow (:func:`check_magnitude`), samples as rows; with
    ``copy=False`` X itself where it already is one (a caller that only reads it)."""
    if X is None:
        raise ParameterError(
            name, "expected a 2-D array of shape (n_samples, n_features), got None")
    if is_lazy(X):  # never materialize a Dask collection silently
        refuse_lazy(X, name, "this method")
    arr = np.asarray(X) if not hasattr(X, "toarray") else X
    if getattr(arr, "dtype", None) is not None and arr.dtype.kind in "OSUc":
        if arr.dtype.kind == "c":
            raise ParameterError(name, f"complex data is not supported, got dtype {arr.dtype}")
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise (non_numeric_error(arr, name) or ParameterError(
                name, f"must be numeric, got non-numeric entries ({exc})")) from None
    if getattr(arr, "ndim", 2) != 2:
        raise ParameterError(name,
            f"expected a 2-D array of shape (n_samples, n_features), "
            f"got an array with {arr.ndim} dimension(s) and shape {np.shape(arr)}"
        )
    if _plain_float64(arr, min_samples):
        # a finite float64 ndarray (an estimator validated it already): what check_array
        # would return — the same array, or np.array's copy keeping its memory layout —
        # without its second pass of checks (the same bits: tests/test_fixed_cost.py)
        # benchmark: benchmarks/bench_real.py --no-cv
        out = np.array(arr) if copy else arr
        check_magnitude(out, name)
        return out
    try:
        from sklearn.utils import check_array  # imports pandas: only when data arrive

        out = check_array(
            arr,
            dtype=np.float64,
            copy=copy,
            ensure_all_finite=True,
            ensure_min_samples=min_samples,
            input_name=name,
        )
    except (TypeError, ValueError) as exc:
        raise ParameterError(name, f"{exc}") from None
    check_magnitude(out, name)
    return out


def check_rows(X, name: str = "X", min_samples: int = 2):
    """``X`` checked as :func:`check_data` checks it, in its own array namespace: an array of
    another namespace than NumPy (a PyTorch tensor, on a GPU or not; CuPy; ...) stays there,
    on its device, in its real float dtype (integers: float64), never copied to the host
    (a few scalars are read); anything else is :func:`check_data`'s float64 NumPy array
    (``copy=False``: the caller only reads it)."""
    xp = arrays.foreign(X)
    if xp is None:
        return check_data(X, name, min_samples, copy=False)
    if X.ndim != 2:
        raise ParameterError(name, f"expected a 2-D array of shape (n_samples, n_features), "
                                   f"got an array with shape {tuple(X.shape)}")
    if xp.isdtype(X.dtype, "complex floating"):
        raise ParameterError(name, f"complex data is not supported, got dtype {X.dtype}")
    if not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64)
    if X.shape[0] < min_samples or X.shape[1] < 1:
        raise ParameterError(name, f"Found array with shape {tuple(X.shape)} while a minimum "
                                   f"of {min_samples} sample(s) and 1 feature is required.")
    if not arrays.all_finite(X):
        raise ParameterError(name, "Input X contains NaN or infinity; remove or impute those "
                                   "rows")
    check_magnitude(X, name)
    return X


def _plain_float64(arr, min_samples: int) -> bool:
    """True for a plain (not a subclass) 2-D native float64 ndarray with at least
    ``min_samples`` rows and one column, and finite entries (its sum is finite: scikit-learn's
    own first test); anything else goes through ``check_array``, for its messages."""
    return (arrays.numpy_fast_path(arr) and arr.dtype == np.float64 and arr.ndim == 2
            and arr.shape[0] >= max(min_samples, 1) and arr.shape[1] >= 1
            and bool(np.isfinite(arr.sum())))


def check_rank(r, d: int, name: str = "r") -> int:
    """Return ``r`` as an int with ``1 <= r < d``."""
    if isinstance(r, bool) or not isinstance(r, numbers.Integral):
        raise ParameterError(name, f"the subspace dimension must be an integer, got {r!r}")
    r = int(r)
    if r < 1:
        raise ParameterError(name, f"the subspace dimension must be at least 1, got {r}")
    if r >= d:
        raise ParameterError(name,
            f"the subspace dimension must be smaller than the number of features "
            f"(r < d), got r={r} with d={d}"
        )
    return r


def check_labels(y, n_samples: int, name: str = "y",
                 min_classes: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(classes, codes)`` for class labels ``y`` of length ``n_samples`` with at least
    ``min_classes`` classes.

    ``codes`` holds, for every sample, the index of its class in ``classes``.
    """
    if y is None:
        raise ParameterError(name, "class labels are required, got None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ParameterError(name, f"expected a 1-D array of labels, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ParameterError(name,
            f"has {y.shape[0]} labels but X has {n_samples} samples; they must match"
        )
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ParameterError(name, "labels contain NaN or infinity")
    classes, codes = np.unique(y, return_inverse=True)
    if classes.shape[0] < min_classes:
        raise ParameterError(name,
            f"at least two classes are needed, got {classes.shape[0]} "
            f"({classes.tolist()!r}): one class has no between-class structure for the "
            "method to find (in a cross-validation, split with StratifiedKFold so that "
            "every fold holds every class)"
        )
    return classes, codes.reshape(-1)


def check_point(M, shape: tuple[int, int], name: str = "M0") -> np.ndarray:
    """Return ``M`` as a new float64 array of the given shape with finite entries."""
    try:
        arr = np.array(M, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(name, f"must be a numeric array ({exc})") from None
    if arr.shape != tuple(shape):
        raise ParameterError(name, f"expected shape {tuple(shape)}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ParameterError(name, "contains NaN or infinity")
    return arr


def check_new_data(X, n_features: int, name: str = "X") -> np.ndarray:
    """Validate data to transform: as :func:`check_data`, with ``n_features`` columns."""
    X = check_data(X, name, min_samples=1)
    if X.shape[1] != n_features:
        raise ParameterError(name,
            f"has {X.shape[1]} features, but the objective was built with {n_features}"
        )
    return X


def shrink(S: np.ndarray, reg, name: str = "shrinkage") -> np.ndarray:
    """(1 − reg) S + reg · tr(S)/d · I, after checking that ``reg`` is a number in [0, 1].

    The one shrinkage of every scatter-matrix method (LDA's S_w, MAF's and SFA's Σ, CCA's Σ_a
    and Σ_b, LPP's and NPE's S_D).
    """
    if isinstance(reg, bool) or not (isinstance(reg, numbers.Real) and 0.0 <= reg <= 1.0):
        raise ParameterError(name, f"must be a number in [0, 1], got {reg!r}")
    if reg == 0:
        return S
    d = S.shape[0]
    trace = float(arrays.namespace(S).linalg.trace(S))  # in S's namespace, on its device
    return (1.0 - reg) * S + reg * trace / d * arrays.eye_like(d, S)


_SHRINK_REMEDY = ("Pass shrinkage > 0 (e.g. shrinkage=1e-3), or reduce the dimension first (PCA) "
                  "and drop constant or duplicated features; the estimators of ldr.estimators "
                  "fit such data as they are, in the span of the rows (subspace_).")


def _singular_error(w: np.ndarray, tol: float, d: int, arg: str, what: str, why: str,
                    n_samples: int | None, remedy: str) -> ValueError:
    rank = int(np.sum(w > tol))
    samples = "" if n_samples is None else f"; n_samples = {n_samples}"
    return ParameterError(arg,
        f"the {what} is singular (numerical rank {rank} < d = {d}{samples}): {why}. "
        + remedy
    )


def _rank_tol(w: np.ndarray, d: int) -> float:
    """Eigenvalues at or below this (relative to the largest) count as zero."""
    return 100 * d * np.finfo(float).eps * max(w[-1], 0.0) if w.size else 0.0


def eigh_nonsingular(S: np.ndarray, arg: str, what: str, why: str,
                     n_samples: int | None = None,
                     remedy: str = _SHRINK_REMEDY) -> tuple[np.ndarray, np.ndarray]:
    """The eigendecomposition ``(w, Q)`` of the symmetric matrix ``S``, or the ValueError of
    :func:`check_nonsingular`.  For methods that need the decomposition anyway (whitening,
    inverse square roots); the test on ``w`` then costs nothing more."""
    d = S.shape[0]
    w, Q = scipy.linalg.eigh(0.5 * (S + S.T))
    tol = _rank_tol(w, d)
    if w[-1] <= 0 or w[0] <= tol:
        raise _singular_error(w, tol, d, arg, what, why, n_samples, remedy)
    return w, Q


#: check_nonsingular trusts LAPACK's condition estimate (which may overstate 1/κ by a small
#: factor, Higham 1988) only this far from the threshold; closer, an eigh decides.
_RCOND_MARGIN = 100.0


def check_nonsingular(S: np.ndarray, arg: str, what: str, why: str,
                      n_samples: int | None = None,
                      remedy: str = _SHRINK_REMEDY) -> np.ndarray:
    """Raise a ValueError that names ``arg`` and ``what``, says ``why`` it matters and how to
    regularize (``remedy``) when the symmetric matrix ``S`` is singular, i.e. when its smallest
    eigenvalue is at most 100·d·ε times its largest; otherwise return its lower Cholesky factor.

    The test is a Cholesky factorization (d³/3 flops, ~20× cheaper than ``eigh``) plus LAPACK's
    O(d²) estimate of the reciprocal 1-norm condition number ``rcond`` (``pocon``).  For a
    symmetric positive definite S, λ_min/λ_max = 1/κ₂ ≥ 1/κ₁ = rcond, so an estimate far above
    the threshold passes; a failed factorization, or an estimate within ``_RCOND_MARGIN`` of
    the threshold, is decided by a full ``eigh`` (the same rule and message as
    :func:`eigh_nonsingular`, with the numerical rank) — so the verdict is the eigenvalue rule's.
    """
    d = S.shape[0]
    if d == 0:
        raise ParameterError(arg, f"the {what} is empty (0×0): there is no direction to work in")
    Ssym = 0.5 * (S + S.T)
    L, info = scipy.linalg.lapack.dpotrf(Ssym, lower=1, clean=1)
    if info == 0:
        anorm = float(np.max(np.sum(np.abs(Ssym), axis=0))) if d else 0.0
        rcond, info_c = scipy.linalg.lapack.dpocon(L, anorm, uplo="L")
        if info_c == 0 and rcond > _RCOND_MARGIN * 100 * d * np.finfo(float).eps:
            return L
    w = scipy.linalg.eigvalsh(Ssym)
    tol = _rank_tol(w, d)
    if w[-1] <= 0 or w[0] <= tol:
        raise _singular_error(w, tol, d, arg, what, why, n_samples, remedy)
    return np.linalg.cholesky(Ssym)


def span_basis(S: np.ndarray, data_name: str | None = None) -> np.ndarray | None:
    """An orthonormal basis (d×k, as columns) of the span of the symmetric positive
    semi-definite ``S`` — its eigenvectors whose eigenvalues exceed 100·d·ε times the largest,
    :func:`check_nonsingular`'s rule, each signed so that its largest entry is positive — or
    None when ``S`` is non-singular by that rule (the
    common case, decided by a Cholesky factorization without an eigendecomposition).

    For a covariance, the directions left out are those in which the data do not vary at
    all (constant features, features that are linear combinations of others, or all but
    n − 1 directions when n ≤ d): every row has the same coordinate along them.  With
    ``data_name`` (``S`` the covariance of those data), a span of dimension 0 — every row the
    same point — is a ParameterError naming them.
    """
    try:
        check_nonsingular(S, "S", "matrix", "")
        return None
    except ValueError:
        pass
    d = S.shape[0]
    w, Q = scipy.linalg.eigh(0.5 * (S + S.T))
    keep = w > _rank_tol(w, d) if d else np.zeros(0, dtype=bool)
    if data_name is not None and not keep.any():
        raise ParameterError(data_name, "every row is the same point (the data do not vary in "
                                        "any direction): there is no subspace to fit")
    U = Q[:, keep][:, ::-1]
    if not U.shape[1]:  # S = 0: an empty span
        return U
    # a sign convention (each column's largest entry positive, scikit-learn's svd_flip), so
    # that the basis does not depend on the rounding of S (its statistics computed in another
    # array namespace, or another order)
    top = U[np.argmax(np.abs(U), axis=0), np.arange(U.shape[1])]
    return U * np.where(top < 0, -1.0, 1.0)


def nullity(S: np.ndarray) -> int:
    """The dimension of the null space of the symmetric positive semi-definite ``S`` by
    :func:`check_nonsingular`'s rule (eigenvalues at most 100·d·ε times the largest count as
    zero): 0 when ``S`` is non-singular (decided by a Cholesky factorization), else d minus
    the dimension of :func:`span_basis`."""
    U = span_basis(S)
    return 0 if U is None else S.shape[0] - U.shape[1]


def oas_shrinkage(S: np.ndarray, n_samples: float) -> float:
    """The Oracle Approximating Shrinkage coefficient ρ ∈ [0, 1] of a sample covariance ``S``
    (p×p) from ``n_samples`` observations (Chen, Wiesel, Eldar & Hero 2010, Eq. 23, in
    scikit-learn's form, :func:`sklearn.covariance.oas`): with μ = tr(S)/p and
    α = ‖S‖²_F/p²,

        ρ = min(1, (α + μ²) / ((n + 1)(α − μ²/p))),

    for :func:`shrink`'s (1 − ρ) S + ρ μ I.  It needs S alone (no fourth moments of the rows,
    unlike Ledoit–Wolf), so it is computed from one-pass statistics."""
    p = S.shape[0]
    if p < 2:
        return 0.0
    alpha = float(np.mean(S * S))
    mu = float(np.trace(S)) / p
    den = (float(n_samples) + 1.0) * (alpha - mu * mu / p)
    return 1.0 if den <= 0 else float(min((alpha + mu * mu) / den, 1.0))


# --- lazy data and chunks -------------------------------------------------------------
def is_lazy(X) -> bool:
    """Whether ``X`` is a Dask collection (array or DataFrame): ``dask.is_dask_collection``'s
    test (a ``__dask_graph__()`` that is not None), without importing Dask."""
    if isinstance(X, type):
        return False
    try:
        return X.__dask_graph__() is not None
    except (AttributeError, TypeError):
        return False


def _nbytes(n) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def refuse_lazy(X, name: str, method: str, pairwise: bool = False) -> None:
    """Raise a ValueError, stating the memory needed, when ``X`` is a Dask collection.

    For methods that need the data (and, with ``pairwise``, an n×n matrix) in memory.
    Nothing is computed: n comes from the known chunk sizes.
    """
    if not is_lazy(X):
        return
    shape = tuple(getattr(X, "shape", ()))
    n = shape[0] if shape else float("nan")
    d = shape[1] if len(shape) > 1 else (len(getattr(X, "columns", ())) or float("nan"))
    if isinstance(n, numbers.Number) and np.isfinite(n) and np.isfinite(d):
        data = 8 * int(n) * int(d)
        need = f"{_nbytes(data)} for the n×d float64 data (n = {int(n)}, d = {int(d)})"
        if pairwise:
            need += f" plus {_nbytes(8 * int(n) ** 2)} for each n×n matrix it forms"
    else:
        need = (f"8·n·d bytes for the data (d = {d}, n unknown: Dask does not know its chunk "
                "sizes)" + (" plus 8·n² bytes for each n×n matrix it forms" if pairwise else ""))
    raise ParameterError(name,
        f"{method} needs its data in memory and does not accept a Dask array: it "
        f"would need at least {need}. Compute it first ({name}.compute()) if that fits, or "
        "subsample. PCA, OrthogonalLDA, MAF, SFA, CCA, OrthogonalCCA, PPCA and "
        "FactorAnalysis read a Dask array by its chunks, and so do MDS and KernelSDR at "
        "their defaults, LPP and NPE with a k-nearest-neighbour graph, WassersteinDA and "
        "WDAClustering with mini-batches, NCA and LargeMarginDML past stochastic_above "
        "samples with solver=None, and the HSIC estimators with an approximate Gaussian "
        "kernel (their default) and the Nyström U-step.")


def check_chunk(X, name: str, start: int | None, values: bool = True):
    """One chunk of rows, checked: two dimensions, numeric, and (``values``) finite entries
    of a safe magnitude; ``start`` (its first row number) goes into the messages.  NumPy (or
    anything that is not an array of another namespace) is returned as float64; an array of
    another namespace stays there, in its real float dtype (integers: float64)."""
    xp = arrays.foreign(X)
    if xp is None:
        xp = np
        X = np.asarray(X)
    where = "" if start is None else f" (rows {start}..{start + X.shape[0] - 1})"
    if X.ndim != 2:
        raise ParameterError(name, f"expected 2-D chunks of shape (n_rows, n_features), got "
                         f"shape {tuple(X.shape)}{where}")
    if not xp.isdtype(X.dtype, ("bool", "integral", "real floating")):
        raise ParameterError(name, f"must be numeric, got dtype {X.dtype}{where}")
    if xp is np or not xp.isdtype(X.dtype, "real floating"):
        X = xp.astype(X, xp.float64, copy=False)
    if values:
        if not arrays.all_finite(X):
            raise ParameterError(name, f"Input contains NaN or infinity{where}")
        check_magnitude(X, name)
    return X


def check_chunk_labels(y, n_rows: int, name: str, start: int | None) -> np.ndarray:
    """One chunk's labels: one per row, finite."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != n_rows:
        where = "" if start is None else f" at rows {start}..{start + n_rows - 1}"
        raise ParameterError(name, f"has a chunk of shape {y.shape}{where} where X has "
                         f"{n_rows} rows; one label per row is needed")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ParameterError(name, "labels contain NaN or infinity")
    return y
