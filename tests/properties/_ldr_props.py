"""What the property suite draws and what it asserts; shared by ``tests/properties/`` (the CI
profile) and ``benchmarks/soak.py`` (the long profile).

**Data.**  :func:`datasets` draws rows X (n ≥ 2, d ≥ 1, n < d allowed) with per-feature
scales from 1e-90 to 1e90, degenerate structure (constant, duplicated and collinear columns,
identical rows), a dtype (float32/64, int, object, pandas, pandas nullable), optional NaN or
±inf entries, labels of one type (int, float, str, bool, pandas categorical) with one-sample
classes possible, and parameter values at and past their bounds.

**Outcomes.**  Every call either raises a clear error — a ValueError or TypeError that names
the argument (:class:`ldr.core.errors.ParameterError` carries ``.param``; scikit-learn's input
checks name X or y) — or returns an answer that is finite, of the right shape and dtype,
orthonormal where it should be, equal to a reference where one exists, and marked converged
only at a certified point; the inputs are left unmodified; the same seed gives the same
answer.  A violation raises one of :class:`SilentlyWrong`, :class:`ObscureError`,
:class:`MutatedInput` (AssertionErrors, so pytest and Hypothesis report them).
"""

from __future__ import annotations

import copy
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from ldr.core.errors import ParameterError


class SilentlyWrong(AssertionError):
    """An answer returned without complaint that breaks a property."""


class ObscureError(AssertionError):
    """An exception that is not a ValueError/TypeError naming the argument."""


class MutatedInput(AssertionError):
    """The call changed an array it was given."""


KINDS = {SilentlyWrong: "silently wrong", ObscureError: "obscure error",
         MutatedInput: "mutated input"}

#: per-feature scales; the simplest first (Hypothesis shrinks towards the first element)
SCALES = (1.0, 1e-3, 1e3, 1e-8, 1e8, 1e-30, 1e30, 1e-90, 1e90)
DTYPES = ("float64", "float64", "float64", "float32", "int", "object", "pandas",
          "pandas-nullable")
LABEL_TYPES = ("int", "float", "str", "bool", "category", "series")
STRUCTURES = ("constant", "duplicate", "collinear", "identical-rows")


@dataclass
class Data:
    """One drawn data set: X (as handed to the call), its float64 values, labels, targets,
    and a readable description for the counterexample."""

    X: object
    values: np.ndarray
    y: object = None
    codes: np.ndarray | None = None
    Y: np.ndarray | None = None
    dtype: str = "float64"
    notes: list = field(default_factory=list)
    finite: bool = True

    def __repr__(self) -> str:
        return (f"Data(n={self.values.shape[0]}, d={self.values.shape[1]}, dtype={self.dtype}, "
                f"{', '.join(self.notes)}; X={self.values.tolist()!r}, "
                f"y={None if self.codes is None else self.codes.tolist()!r})")


def _as_dtype(values: np.ndarray, dtype: str):
    if dtype == "float32":
        return values.astype(np.float32)
    if dtype == "int":
        return values.astype(np.int64)
    if dtype == "object":
        return values.astype(object)
    if dtype == "pandas":
        return pd.DataFrame(values, columns=[f"f{j}" for j in range(values.shape[1])])
    if dtype == "pandas-nullable":
        frame = pd.DataFrame(values, columns=[f"f{j}" for j in range(values.shape[1])])
        return frame.astype("Float64").mask(frame.isna(), pd.NA)
    return values


def _labels(codes: np.ndarray, kind: str):
    if kind == "float":  # integral floats: scikit-learn's classes (0.5 would be continuous)
        return codes.astype(float)
    if kind == "str":
        return np.array([f"class-{c}" for c in codes])
    if kind == "bool":
        return codes.astype(bool)
    if kind == "category":
        return pd.Categorical([f"c{c}" for c in codes])
    if kind == "series":
        return pd.Series(codes, name="label")
    return codes


@st.composite
def datasets(draw, max_n: int = 14, max_d: int = 6, labels: bool = True,
             targets: bool = False, min_n: int = 2, nonfinite: bool = True) -> Data:
    """A drawn :class:`Data` (module docstring)."""
    # mostly enough rows for a fit (n < d and n = 2 still drawn, 1 in 4)
    n = draw(st.integers(min_n, max_n) if draw(st.integers(0, 3)) == 0
             else st.integers(max(min_n, max_n // 2 + 1), max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**16 - 1))
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((n, d))
    if draw(st.booleans()):  # a cluster structure, so that classes are separable
        values += 2.0 * rng.integers(0, 3, size=(n, 1)) * rng.standard_normal((1, d))
    notes = [f"seed={seed}"]
    for kind in draw(st.lists(st.sampled_from(STRUCTURES), max_size=2, unique=True)):
        j = draw(st.integers(0, d - 1))
        if kind == "constant":
            values[:, j] = draw(st.sampled_from((0.0, 1.0, -3.5)))
        elif kind == "duplicate" and d > 1:
            values[:, j] = values[:, (j + 1) % d]
        elif kind == "collinear" and d > 2:
            values[:, j] = values[:, (j + 1) % d] - 2.0 * values[:, (j + 2) % d]
        elif kind == "identical-rows":  # all rows (1 in 4), or the second half, as the first
            values[1 if draw(st.integers(0, 3)) == 0 else max(n // 2, 1):] = values[0]
        notes.append(f"{kind}@{j}")
    dtype = draw(st.sampled_from(DTYPES))
    if draw(st.booleans()):  # one scale for all features, or one per feature
        scales = np.full(d, draw(st.sampled_from(SCALES)))
    else:
        scales = np.array(draw(st.lists(st.sampled_from(SCALES), min_size=d, max_size=d)))
    if dtype == "int":  # integers of a sensible size (int64 holds up to 9e18)
        scales = np.clip(scales, 1.0, 1e8) * 10.0
    values = values * scales
    if dtype == "int":
        values = np.rint(values)
    if not np.all(scales == 1.0):
        notes.append(f"scales={scales.tolist()}")
    finite = True
    if nonfinite and draw(st.integers(0, 11)) == 0:
        bad = draw(st.sampled_from((np.nan, np.inf, -np.inf)))
        if dtype == "int":
            dtype = "float64"
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))
        values[i, j] = bad
        notes.append(f"{bad}@({i},{j})")
        finite = False
    with np.errstate(over="ignore", invalid="ignore"):  # float32(1e90) = inf: on purpose
        X = _as_dtype(values, dtype)
    as_given = np.asarray(X.to_numpy(dtype=float, na_value=np.nan) if hasattr(X, "to_numpy")
                          else X, dtype=float)  # float32 rounding and overflow included
    finite = finite and bool(np.all(np.isfinite(as_given)))
    data = Data(X, as_given, dtype=dtype, notes=notes, finite=finite)
    if labels:
        # two or more classes mostly (one class: 1 in 8); every class present, balanced and
        # shuffled, or (1 in 3) any assignment, one-sample and empty classes included
        k = min(n, draw(st.sampled_from((2, 2, 3, 3, 4, 2, 3, 1))))
        codes = rng.permutation(np.arange(n) % k)
        if draw(st.integers(0, 2)) == 0:
            codes = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
        kind = draw(st.sampled_from(LABEL_TYPES))
        if kind == "bool" and np.unique(codes).size > 2:
            kind = "int"
        data.codes, data.y = codes, _labels(codes, kind)
        notes.append(f"labels={kind}")
    if targets:
        q = draw(st.integers(1, 4))
        Y = values[:, :1] @ rng.standard_normal((1, q)) + rng.standard_normal((n, q))
        Y[~np.isfinite(Y)] = 0.0
        data.Y = Y * draw(st.sampled_from(SCALES))
        notes.append(f"q={q}")
    return data


def components(d: int, upper: int | None = None):
    """``n_components`` at and past its bounds: 1, 2, d − 1, d, d + 1, 0, −1, None, a float,
    a bool, a string (``upper``: the largest valid value, where it is not d − 1)."""
    valid = sorted({1, 2, max(d - 1, 1), upper or 1} - {0})
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(valid),
                     st.sampled_from((None, 0, -1, d, d + 1, 1.5, True, "2")))


# --- snapshots of the inputs -------------------------------------------------------------------
def snapshot(*objs):
    return [copy.deepcopy(o) for o in objs]


def _same(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return a.equals(b) and list(a.dtypes) == list(b.dtypes)
    if isinstance(a, pd.Series):
        return a.equals(b) and a.dtype == b.dtype
    if isinstance(a, pd.Categorical):
        return a.equals(b)
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all((x == y) or (x != x and y != y) for x, y in zip(a.ravel(), b.ravel()))
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    return a == b if a is not None else b is None


def check_unmodified(before, *now) -> None:
    for i, (a, b) in enumerate(zip(before, now)):
        if not _same(a, b):
            raise MutatedInput(f"argument {i} was modified by the call")


# --- errors ------------------------------------------------------------------------------------
#: scikit-learn's and ldr's input checks that name what is wrong with X or y
_NAMES_INPUT = re.compile(
    r"\b(X|y|Y|labels?|targets?|classes|class|samples?|features?|n_samples|n_features|"
    r"Input|dtype|NaN|infinity|finite)\b|Found array with|minimum of \d+ is required")


def check_error(exc: BaseException, params=()) -> None:
    """A clear error: a ValueError/TypeError naming the argument; else :class:`ObscureError`."""
    if isinstance(exc, ParameterError):
        if not (isinstance(exc.param, str) and exc.param):
            raise ObscureError(f"ParameterError without a param: {exc}") from exc
        return
    if isinstance(exc, np.linalg.LinAlgError) or not isinstance(exc, (ValueError, TypeError)):
        raise ObscureError(f"{type(exc).__name__}: {exc}") from exc
    message = str(exc)
    if _NAMES_INPUT.search(message) or any(re.search(rf"\b{re.escape(p)}\b", message)
                                           for p in params):
        return
    raise ObscureError(f"{type(exc).__name__} naming no argument: {message}") from exc


# --- answers -----------------------------------------------------------------------------------
def check_finite(name: str, value) -> None:
    arrays = value if isinstance(value, tuple) else (value,)
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind not in "fc" or not np.all(np.isfinite(a)):
            raise SilentlyWrong(f"{name} is not finite (or not floating): {a!r}")


def check_orthonormal(name: str, M, tol: float = 1e-6) -> None:
    M = np.asarray(M, dtype=float)
    err = float(np.max(np.abs(M.T @ M - np.eye(M.shape[1])))) if M.size else 0.0
    if not err <= tol:
        raise SilentlyWrong(f"{name} is not orthonormal: max |MᵀM − I| = {err:.3e}")


def check_output(name: str, out, n: int, r: int, float32: bool) -> None:
    if isinstance(out, (pd.DataFrame,)):
        out = out.to_numpy()
    out = np.asarray(out)
    if out.shape != (n, r):
        raise SilentlyWrong(f"{name} has shape {out.shape}, expected {(n, r)}")
    want = np.float32 if float32 else np.float64
    if out.dtype != want:
        raise SilentlyWrong(f"{name} has dtype {out.dtype}, expected {np.dtype(want)}")
    check_finite(name, out)


def check_certified(res, obj=None, tol: float | None = None) -> None:
    """A Result marked converged must be at a certified point: its gradient (recomputed at
    ``res.M`` when ``obj`` is given) within tol·scale (``tol``: the run's own, ``res.tol``,
    by default; its solver's default when the run turned the gradient rule off)."""
    if not getattr(res, "converged", False) or res.solver == "closed-form":
        return
    if not np.isfinite(res.cost):
        raise SilentlyWrong(f"converged with cost {res.cost}")
    g = res.grad_norm
    if obj is not None and np.isfinite(g):
        from ldr.core.problem import Problem

        problem = Problem(obj)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = problem.manifold.norm(problem.rgrad(res.M, problem.egrad(res.M)))
    if np.isnan(g) or not np.isfinite(res.grad_scale):
        return  # a solver that computes no gradient (SCF) converges on its residual
    if tol is None:
        tol = res.tol if getattr(res, "tol", 0) else 1e-6  # 0: judged by the solver's default
    bound = 1.01 * tol * res.grad_scale + 1e-300  # recomputed: rounding
    if not g <= bound:
        raise SilentlyWrong(f"marked converged ({res.reason}) with gradient norm {g:.3e} > "
                            f"tol·scale = {bound:.3e}")


def sin_angle(A, B) -> float:
    QA, QB = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    s = np.linalg.svd(QA.T @ QB, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - float(np.min(s)) ** 2)))


# --- the estimators ----------------------------------------------------------------------------
def _reg(*extra):
    return st.sampled_from((0.0, 0.0, 0.1, 1.0, -0.1, float("nan"), float("inf"), *extra))


_SIGMA = st.sampled_from((None, None, 1.0, 0.0, -1.0, float("nan")))
_HSIC = {"max_iter": 100, "max_outer": 3}


@dataclass
class Spec:
    """How the property suite fits an estimator: ``fit`` takes X only, class labels
    ("labels") or continuous targets ("targets"); fixed keywords (budgets that keep the suite
    fast); parameters drawn at and past their bounds; which fitted points are orthonormal."""

    fit: str = "X"
    fixed: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    orthonormal: tuple = (0,)  # factors of M_ (0: M_ itself) with orthonormal columns
    args: tuple = ()


ESTIMATORS: dict[str, Spec] = {
    "CCA": Spec("targets", {"max_iter": 200}, {"shrinkage": _reg(1.5)}, orthonormal=()),
    "KDAC": Spec("labels", {**_HSIC}, {"n_clusters": st.sampled_from((2, 2, 1, 0, 50)),
                                       "lam": st.sampled_from((0.5, 0.0, -1.0)),
                                       "sigma": _SIGMA}),
    "LPP": Spec("X", {"max_iter": 200}, {"n_neighbors": st.sampled_from((None, 1, 2, 0, 50)),
                                         "shrinkage": _reg()}),
    "MAF": Spec("X", {"max_iter": 200}, {"lag": st.sampled_from((1, 1, 2, 0, 50)),
                                         "shrinkage": _reg()}),
    "MDS": Spec("X", {"max_iter": 200}),
    "NCA": Spec("labels", {"max_iter": 100}, {"start": st.sampled_from(
        ("auto", "lda", "pca", "identity", "random"))}, orthonormal=()),
    "NPE": Spec("X", {"max_iter": 200}, {"n_neighbors": st.sampled_from((None, 1, 2, 0, 50)),
                                         "shrinkage": _reg()}),
    "PCA": Spec("X", {}, {"whiten": st.booleans()}),
    "PPCA": Spec("X", {"max_iter": 200}, {"noise_variance": st.sampled_from(
        (None, None, 0.1, 0.0, -1.0, float("nan")))}, orthonormal=()),  # W, log σ²: R^{d×r}
    "SFA": Spec("X", {"max_iter": 200}, {"shrinkage": _reg()}),
    "FactorAnalysis": Spec("X", {"max_iter": 200}, orthonormal=()),
    "KernelSDR": Spec("labels", {"max_iter": 100}, {"ridge": st.sampled_from(
        (1e-3, 1e-3, 0.0, -1.0)), "sigma": _SIGMA}),
    "LargeMarginDML": Spec("labels", {"max_iter": 100}, {
        "n_neighbors": st.sampled_from((3, 1, 0, 50)),
        "impostor_weight": st.sampled_from((1.0, 0.0, -1.0)),
        "smoothing": st.sampled_from((0.5, 0.0, -1.0))}, orthonormal=()),
    "LinearDR": Spec("labels", {"max_iter": 200}, args=("lda",)),
    "OrthogonalCCA": Spec("targets", {"max_iter": 200}, {"shrinkage": _reg(1.5)},
                          orthonormal=(0, 1)),
    "OrthogonalLDA": Spec("labels", {"max_iter": 200}, {"shrinkage": st.sampled_from(
        (None, None, "auto", 0.0, 0.5, 1.0, -0.1, 1.1, "oas"))}),
    "ReducedRankRegression": Spec("targets", {"max_iter": 200}, {"alpha": _reg()}),
    "SemiSupervisedHSIC": Spec("labels", {**_HSIC}, {
        "n_clusters": st.sampled_from((2, 2, 1, 0, 50)),
        "mu": st.sampled_from((1.0, 0.0, -1.0)), "sigma": _SIGMA}),
    "SupervisedHSIC": Spec("labels", {"max_iter": 100}, {"sigma": _SIGMA, "y_kernel":
                                                           st.sampled_from(("onehot", "linear"))}),
    "UndercompleteICA": Spec("X", {"max_iter": 200}, {"prior": st.sampled_from(
        ("auto", "supergaussian", "subgaussian", "gaussian"))}, orthonormal=()),
    "UnsupervisedHSIC": Spec("X", {**_HSIC}, {"n_clusters": st.sampled_from((2, 2, 1, 0, 50)),
                                              "sigma": _SIGMA}),
    "WDAClustering": Spec("X", {"max_iter": 50, "max_outer": 2}, {
        "n_clusters": st.sampled_from((2, 2, 1, 0, 50)), "reg": st.sampled_from(
            (1.0, 0.1, 0.0, -1.0))}),
    "WassersteinDA": Spec("labels", {"max_iter": 50, "n_starts": 1}, {
        "reg": st.sampled_from((1.0, 0.1, 0.0, -1.0, float("nan")))}),
}

#: every estimator parameter a clear error may name
_COMMON = ("n_components", "solver", "start", "tol", "max_iter", "solver_params",
           "random_state", "objective", "warm_start")


@st.composite
def estimator_cases(draw, name: str, max_n: int = 12, max_d: int = 5):
    """(data, keyword arguments, whether to fit twice) for the estimator ``name``."""
    spec = ESTIMATORS[name]
    data = draw(datasets(max_n=max_n, max_d=max_d, labels=spec.fit == "labels",
                         targets=spec.fit == "targets"))
    kw = {"n_components": draw(components(data.values.shape[1]))}
    for key, strategy in spec.params.items():
        if draw(st.integers(0, 2)) == 0:
            kw[key] = draw(strategy)
    if draw(st.integers(0, 9)) == 0:  # the shared settings past their bounds
        key = draw(st.sampled_from(("tol", "max_iter", "random_state")))
        kw[key] = draw({"tol": st.sampled_from((0.0, -1e-8, float("nan"), "1e-8")),
                        "max_iter": st.sampled_from((0, -1, 2.5)),
                        "random_state": st.sampled_from((None, 7, -1, "seed"))}[key])
    return data, kw, draw(st.integers(0, 3)) == 0


def _fit(name: str, kw: dict, data: Data):
    import ldr.estimators as E

    spec = ESTIMATORS[name]
    est = getattr(E, name)(*spec.args, **{**spec.fixed, **kw})
    if spec.fit == "labels":
        args = (data.X, data.y)
    elif spec.fit == "targets":
        args = (data.X, data.Y)
    else:
        args = (data.X,)
    return est, args


def check_estimator(name: str, data: Data, kw: dict, repeat: bool = False) -> str:
    """Fit and transform; assert the outcome (module docstring).  Returns "error" or
    "answer"."""
    spec = ESTIMATORS[name]
    est, args = _fit(name, kw, data)
    before = snapshot(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(*args)
            out = est.transform(data.X)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - judged by check_error
            check_unmodified(before, *args)
            check_error(exc, (*_COMMON, *spec.params, *kw))
            return "error"
    check_unmodified(before, *args)
    n, r = data.values.shape[0], est.n_components_
    if not data.finite:
        raise SilentlyWrong(f"fitted data with non-finite entries ({data.notes})")
    check_output("transform(X)", out, n, r, data.dtype == "float32")
    if est.M_ is None and name == "ReducedRankRegression":  # no rank constraint: plain OLS
        return "answer"
    check_finite("M_", est.M_)
    factors = est.M_ if isinstance(est.M_, tuple) else (est.M_,)
    for i in spec.orthonormal:
        check_orthonormal(f"M_[{i}]" if isinstance(est.M_, tuple) else "M_", factors[i],
                          tol=1e-3 if data.dtype == "float32" else 1e-6)
    check_certified(est.result_)  # against the tolerance the run used
    _reference(name, est, data, kw)
    if repeat:
        again, args2 = _fit(name, kw, data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out2 = again.fit(*args2).transform(data.X)
        if not np.array_equal(np.asarray(out), np.asarray(out2)):
            raise SilentlyWrong("two fits with the same random_state differ: max |Δ| = "
                                f"{np.max(np.abs(np.asarray(out) - np.asarray(out2))):.3e}")
    return "answer"


def _reference(name: str, est, data: Data, kw: dict) -> None:
    """Where a reference exists: PCA against eigh; OrthogonalLDA (two classes, r = 1)
    against scikit-learn's LDA."""
    if not est.result_.converged:
        return
    X = data.values
    n, d = X.shape
    r = est.n_components_
    if name == "PCA":
        C = np.cov(X, rowvar=False, bias=True).reshape(d, d)
        w, V = np.linalg.eigh(C)
        w, V = w[::-1], V[:, ::-1]
        gap = (w[r - 1] - w[r]) / max(w[0], 1e-300) if r < d else 0.0
        # a spectrum above the rounding of the data (identical rows leave C at rounding level:
        # any subspace is then as good as eigh's)
        floor = 1e3 * d * np.finfo(float).eps * float(np.max(np.abs(X)) ** 2)
        if gap > 1e-3 and np.isfinite(w).all() and w[r - 1] > floor:
            angle = sin_angle(np.asarray(est.M_, dtype=float), V[:, :r])
            tol = 1e-3 if data.dtype == "float32" else 1e-5
            if not angle <= tol:
                raise SilentlyWrong(f"PCA's subspace is {angle:.2e} (sin of the largest "
                                    f"angle) from eigh's (relative eigengap {gap:.2e})")
    if name == "OrthogonalLDA" and r == 1 and kw.get("shrinkage") in (None, 0.0):
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        classes, counts = np.unique(data.codes, return_counts=True)
        if classes.size != 2 or counts.min() < 2 or n <= d + 2:
            return
        Sw = sum(np.cov(X[data.codes == c], rowvar=False, bias=True).reshape(d, d) * k
                 for c, k in zip(classes, counts))
        if np.linalg.cond(Sw) > 1e6 or d == 1:
            return
        ref = LinearDiscriminantAnalysis(solver="eigen").fit(X, data.codes).scalings_[:, :1]
        angle = sin_angle(np.asarray(est.M_, dtype=float), ref)
        if not angle <= 1e-4:
            raise SilentlyWrong(f"OrthogonalLDA's direction is {angle:.2e} (sine) from "
                                "scikit-learn's two-class LDA")


# --- the objectives ----------------------------------------------------------------------------
@st.composite
def method_cases(draw, name: str, max_n: int = 12, max_d: int = 5):
    """(data, r, command-line options, whether to solve twice) for the method ``name``."""
    from ldr.driver import registry

    m = registry.get(name).method
    data = draw(datasets(max_n=max_n, max_d=max_d, labels=m.supervised))
    d = data.values.shape[1]
    r = draw(st.one_of(st.sampled_from(sorted({1, max(d - 1, 1)})),
                       st.sampled_from((0, d, d + 1, 1.5, None))))
    options = {}
    if "reg" in m.options and draw(st.booleans()):
        options["reg"] = draw(_reg())
    return data, r, options, draw(st.integers(0, 3)) == 0


def _solve(name: str, data: Data, r, options: dict):
    import ldr
    from ldr.driver import registry

    m = registry.get(name).method
    obj = registry.from_table(name, data.X, data.y if m.supervised else None, r, **options)
    return obj, ldr.solve(obj, max_iter=100)


def check_method(name: str, data: Data, r, options: dict, repeat: bool = False) -> str:
    """Build the method's objective from the data (as ``ldr compare`` does) and solve it;
    assert the outcome (module docstring)."""
    from ldr.core.problem import Problem
    from ldr.manifolds import Euclidean

    args = (data.X, data.y)
    before = snapshot(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            obj, res = _solve(name, data, r, options)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - judged by check_error
            check_unmodified(before, *args)
            check_error(exc, ("r", "M0", "shape", *options))
            return "error"
    check_unmodified(before, *args)
    if not data.finite:
        raise SilentlyWrong(f"solved on data with non-finite entries ({data.notes})")
    check_finite("M", res.M)
    if res.converged and not np.isfinite(res.cost):
        raise SilentlyWrong(f"converged with cost {res.cost}")
    if not res.converged and not res.reason:
        raise SilentlyWrong("not converged, and no reason given")
    geom = Problem(obj).manifold
    for part, M in zip(geom.factors, geom.split(res.M)):
        if not isinstance(part, Euclidean):
            check_orthonormal(f"M ({part!r})", M)
    check_certified(res, obj)
    if repeat:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, again = _solve(name, data, r, options)
        for a, b in zip(res.M if isinstance(res.M, tuple) else (res.M,),
                        again.M if isinstance(again.M, tuple) else (again.M,)):
            if not np.array_equal(a, b):
                raise SilentlyWrong("two solves with the same seed differ")
    return "answer"


@st.composite
def quotient_cases(draw, max_d: int = 6):
    """(A, B, r): a symmetric A and a symmetric positive definite B at drawn scales and
    conditioning."""
    d = draw(st.integers(2, max_d))
    rng = np.random.default_rng(draw(st.integers(0, 2**16 - 1)))
    Z = rng.standard_normal((d, d))
    A = (Z + Z.T) * draw(st.sampled_from(SCALES))
    if draw(st.booleans()):  # low rank: ties in the spectrum
        v = rng.standard_normal((d, 1))
        A = v @ v.T * draw(st.sampled_from(SCALES))
    W = rng.standard_normal((d, d))
    cond = draw(st.sampled_from((1.0, 1e3, 1e8)))
    B = W @ np.diag(np.geomspace(1.0, 1.0 / cond, d)) @ W.T + 1e-3 * np.eye(d)
    B *= draw(st.sampled_from(SCALES))
    r = draw(st.integers(1, d - 1))
    return A, B, r


def check_quotient(A, B, r) -> str:
    """QuotientOfTraces: a converged run is the global optimum (its certificate's global
    gap, the reference for quotients of traces)."""
    import ldr
    from ldr.objectives import QuotientOfTraces

    before = snapshot(A, B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            obj = QuotientOfTraces(A, B, r)
            res = ldr.solve(obj, max_iter=200, certify=True)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - judged by check_error
            check_unmodified(before, A, B)
            check_error(exc, ("A", "B", "r", "M0"))
            return "error"
    check_unmodified(before, A, B)
    check_finite("M", res.M)
    check_orthonormal("M", res.M)
    check_certified(res, obj)
    cert = res.certificate
    if res.converged and cert is not None and cert.global_optimum is False:
        raise SilentlyWrong(f"converged ({res.reason}) at a point that is not the global "
                            f"optimum: relative gap {cert.global_gap:.3e}")
    return "answer"


# --- valid tables ------------------------------------------------------------------------------
#: scales of valid data: the data's units (defaults follow them), short of the magnitudes
#: the input check refuses (the property suite above draws those)
VALID_SCALES = (1.0, 1e-3, 1e3, 1e-8, 1e8)


@st.composite
def valid_cases(draw, name: str):
    """(data, keyword arguments) that every estimator must fit: 3 to 6 well-spread features,
    at least 3d + 6 rows in 2 or 3 balanced classes of separated clusters (the labels of the
    supervised, the clusters of the unsupervised), one scale for all features, a plain float
    dtype, n_components = 1."""
    spec = ESTIMATORS[name]
    d = draw(st.integers(3, 6))
    n = draw(st.integers(3 * d + 6, 40))
    k = draw(st.sampled_from((2, 3)))
    seed = draw(st.integers(0, 2**16 - 1))
    rng = np.random.default_rng(seed)
    codes = rng.permutation(np.arange(n) % k)
    centers = 3.0 * rng.standard_normal((k, d))
    values = centers[codes] + rng.standard_normal((n, d))
    scale = draw(st.sampled_from(VALID_SCALES))
    dtype = draw(st.sampled_from(("float64", "float32", "pandas")))
    values = values * scale
    X = _as_dtype(values, dtype)
    as_given = np.asarray(X.to_numpy(dtype=float) if hasattr(X, "to_numpy") else X,
                          dtype=float)
    data = Data(X, as_given, dtype=dtype, notes=[f"seed={seed}", f"scale={scale:g}"])
    data.codes, data.y = codes, codes
    if spec.fit == "targets":
        data.Y = values[:, :1] @ rng.standard_normal((1, 2)) + scale * rng.standard_normal(
            (n, 2))
    return data, {"n_components": 1}


def check_valid_fit(name: str, data: Data, kw: dict) -> None:
    """A valid table fits: no exception (warnings allowed), a finite answer of shape (n, 1)."""
    est, args = _fit(name, kw, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = est.fit(*args).transform(data.X)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - any refusal of valid data is the failure
            raise SilentlyWrong(f"{name} refused a valid table: {type(exc).__name__}: "
                                f"{exc}") from exc
    check_output("transform(X)", out, data.values.shape[0], 1, data.dtype == "float32")
