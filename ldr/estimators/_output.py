"""What every estimator's output shares: float32 fidelity and feature names.

**dtype.**  float32 data in → float32 transforms and fitted arrays out, as in scikit-learn
(declared with its ``preserves_dtype`` tag, so ``check_estimator`` runs
``check_transformer_preserve_dtypes``); any other input (float64, integers) gives float64.
The *computation* stays in float64 throughout: the objectives upcast the data once when they
are built (:func:`ldr.data.validation.check_data`), the solvers iterate in float64, and only the
answers are rounded to float32 at the end of ``fit`` (:func:`cast_fitted`) and of
``transform`` (:func:`as_output`).  So a float32 fit equals the float64 fit on the same
(float32-rounded) values to float32 precision, at the cost of one float64 copy of X during
``fit``.  ``result_`` and ``objective_`` (the driver's record and the fitted objective) keep
float64, and scalar scores (``cost_``, ``ratio_``, ...) stay Python floats.

**Feature names.**  ``get_feature_names_out`` names the outputs with the lowercased class name
and the component index (``wassersteinda0``, ``wassersteinda1``, ...), scikit-learn's
:class:`~sklearn.base.ClassNamePrefixFeaturesOutMixin`; ``feature_names_in_`` is set from a
DataFrame's columns, and ``set_output(transform="pandas")`` returns DataFrames (through
:class:`~sklearn.base.TransformerMixin`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin
from sklearn.utils.validation import check_is_fitted
from sklearn.utils.validation import validate_data as _sk_validate_data

from ldr.data.arrays import foreign, to_host
from ldr.data.validation import non_numeric_error
from ldr.errors import ParameterError

#: The dtypes ``validate_data`` keeps (others are converted to the first, float64).
FLOAT_DTYPES = (np.float64, np.float32)

#: Fitted attributes that are labels, not numbers computed from X: never cast.
_LABELS = frozenset({"classes_", "existing_classes_", "labels_", "feature_names_in_"})


def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, with errors that name the fix when X or y is not
    numeric: the first non-numeric column of X, by index and DataFrame column name ("encode
    categorical columns first"), and, for ``y_numeric=True`` (regressors), that y must be
    numeric targets (one-hot encode class labels).  An estimator without the
    ``array_api_support`` tag reads an array of another namespace (under scikit-learn's
    ``array_api_dispatch``) as NumPy, copied to the host, and answers in NumPy."""
    if not estimator.__sklearn_tags__().array_api_support:
        X, y = _on_host(X), _on_host(y)
    try:
        out = _sk_validate_data(estimator, X, y, **kwargs)
    except ValueError as exc:  # (a TypeError, e.g. a dict entry, stays scikit-learn's)
        if isinstance(exc, ParameterError):
            raise
        if not isinstance(X, str):
            better = non_numeric_error(X, "X")
            if better is not None:
                raise better from None
        if kwargs.get("y_numeric") and not isinstance(y, str):
            _check_numeric_targets(y)
        raise
    if kwargs.get("y_numeric") and not isinstance(y, str):
        _check_numeric_targets(out[1])  # string labels pass scikit-learn's multi-output path
    return out


def _on_host(a):
    """An array of another namespace than NumPy (a PyTorch tensor, ...) as a NumPy array on
    the host; anything else (NumPy, Dask, lists, the "no_validation" marker) as it is."""
    return a if foreign(a) is None else to_host(a)


def _check_numeric_targets(y) -> None:
    if foreign(y) is not None:  # another namespace's array: numbers or bool, all of them
        return
    try:
        if np.asarray(y).dtype.kind in "biufc":  # numbers (complex: scikit-learn's error)
            return
        np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            "y", f"must be numeric targets ({exc}). For class labels, one-hot encode them "
            "first, e.g. with sklearn.preprocessing.LabelBinarizer (or OneHotEncoder for "
            "several label columns)") from None


def output_dtype(X) -> type:
    """float32 for float32 data (an array, a Dask array, or a DataFrame whose columns are all
    float32), float64 for anything else."""
    dtype = getattr(X, "dtype", None)
    if dtype is None and hasattr(X, "dtypes"):  # a DataFrame: one dtype for all columns
        dtypes = set(np.asarray(X.dtypes).tolist())
        dtype = dtypes.pop() if len(dtypes) == 1 else None
    try:
        return np.float32 if dtype is not None and np.dtype(dtype) == np.float32 else np.float64
    except TypeError:  # an extension dtype (pandas) that numpy does not know
        return np.float64


def as_output(Z, dtype):
    """``Z`` (an array or a tuple of arrays, computed in float64) as ``dtype``; finite values
    beyond float32's range are an error naming X, not infinities."""
    if isinstance(Z, tuple):
        return tuple(as_output(z, dtype) for z in Z)
    Z = np.asarray(Z)
    if np.dtype(dtype) == np.float32 and _overflows_float32(Z):
        raise ParameterError("X", f"the output reaches {float(np.max(np.abs(Z))):.3g}, beyond "
                             "float32's range (3.4e38): pass X as float64")
    return Z.astype(dtype, copy=False)


def _overflows_float32(a: np.ndarray) -> bool:
    if a.dtype != np.float64 or not a.size:
        return False
    finite = np.abs(a[np.isfinite(a)])
    return bool(finite.size and finite.max() > np.finfo(np.float32).max)


def project_centered(estimator, X):
    """``(X − mean_) @ components_.T`` for new rows ``X`` of a fitted ``estimator`` (checked
    against its fit: feature count and names), float32 for float32 ``X``."""
    check_is_fitted(estimator, "components_")
    X = validate_data(estimator, X, reset=False, dtype=FLOAT_DTYPES)
    return as_output((X - estimator.mean_) @ estimator.components_.T, output_dtype(X))


def _cast(value, dtype):
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        # a fitted array beyond float32's range (a coefficient of 1e39 between data at 1e-31
        # and targets at 1e8) stays float64: cast, it would be inf
        return value if _overflows_float32(value) else value.astype(dtype)
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        return tuple(_cast(v, dtype) for v in value)
    return value


def cast_fitted(estimator, dtype) -> None:
    """Round the fitted float64 arrays of ``estimator`` (public attributes ending in ``_``,
    tuples of arrays included; labels excepted) to ``dtype`` — a no-op for float64; an array
    float32 cannot hold (beyond 3.4e38) stays float64."""
    if np.dtype(dtype) == np.float64:
        return
    for name, value in list(vars(estimator).items()):
        if name.startswith("_") or not name.endswith("_") or name in _LABELS:
            continue
        cast = _cast(value, dtype)
        if cast is not value:
            setattr(estimator, name, cast)


def preserve_float32(tags):
    """scikit-learn tags with ``transformer_tags.preserves_dtype = ["float64", "float32"]``
    (a clusterer calls it again after :class:`~sklearn.base.ClusterMixin`, which empties the
    list)."""
    if tags.transformer_tags is not None:
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
    return tags


class OutputMixin(ClassNamePrefixFeaturesOutMixin):
    """``get_feature_names_out`` (prefix names, ``n_components_`` of them) and the
    ``preserves_dtype`` tag ["float64", "float32"] (module docstring)."""

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def __sklearn_tags__(self):
        return preserve_float32(super().__sklearn_tags__())
