"""Interrupt and resume: Ctrl-C inside an oracle or a callback keeps the best point so far;
``ldr.solve(obj, M0=result)`` continues a run; ``warm_start`` continues a fit; fitted
estimators and Results survive pickle and joblib."""

import io
import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

import ldr
import ldr.estimators as est
from ldr.objectives import LDA, WDA


class InterruptedLDA(LDA):
    """LDA whose gradient raises KeyboardInterrupt at its ``at``-th call (Ctrl-C in an
    oracle)."""

    def __init__(self, X, y, r, at):
        super().__init__(X, y, r)
        self.calls, self.at = 0, at

    def egrad(self, M):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().egrad(M)


@pytest.mark.parametrize("solver", ["gradient", "lbfgs", "trust-region", "conjugate-gradient"])
def test_ctrl_c_inside_an_oracle_returns_the_last_iterate(wine, solver):
    X, y = wine
    full = ldr.solve(LDA(X, y, 2), solver, start="random", random_state=3)
    assert full.converged
    obj = InterruptedLDA(X, y, 2, at=6)
    res = ldr.solve(obj, solver, start="random", random_state=3)
    assert res.interrupted and not res.converged and res.reason.startswith("interrupted")
    assert res.budget == "" and res.certificate is None
    # the point returned is the last one the trace recorded (evaluated, not half a step)
    assert res.cost == res.trace["cost"][-1] == pytest.approx(LDA(X, y, 2).cost(res.M))
    assert res.cost < res.trace["cost"][0]  # the progress made is kept
    assert res.n_iter == res.trace["iteration"][-1] > 0
    np.testing.assert_allclose(res.M.T @ res.M, np.eye(2), atol=1e-10)
    # resuming reaches the same optimum as the uninterrupted run, numbered on
    again = ldr.solve(LDA(X, y, 2), solver, start=res)
    assert again.converged and not again.interrupted
    assert again.cost == pytest.approx(full.cost, rel=1e-9, abs=1e-12)
    it = again.trace["iteration"]
    assert it[len(res.trace)] == res.n_iter and np.all(np.diff(it[len(res.trace):]) >= 0)
    assert again.n_iter >= res.n_iter and again.trace[len(res.trace)]["resumed"]
    assert again.time >= res.time and again.counts["grad"] >= res.counts["grad"]


def test_ctrl_c_in_the_callback_and_resume_numbers_the_trace_on(wine):
    X, y = wine
    obj = LDA(X, y, 2)
    full = ldr.solve(obj, "gradient", start="random", random_state=0)
    seen = []

    def callback(state):
        seen.append(state.cost)
        if len(seen) == 20:
            raise KeyboardInterrupt

    first = ldr.solve(obj, "gradient", start="random", random_state=0, callback=callback)
    assert first.interrupted and first.n_iter == 19 and first.cost == seen[-1]
    rest = ldr.solve(obj, "gradient", start=first)
    # the rows of the first run are kept, the resumed run's start repeats its last number
    assert rest.trace["iteration"][:20].tolist() == list(range(20))
    assert rest.trace["iteration"][20] == 19 and rest.trace["iteration"][-1] == rest.n_iter
    # the optimum of the uninterrupted run (gradient descent keeps no memory but its step
    # size, which restarts: the costs agree to the solver's tolerance)
    assert full.converged and rest.converged
    assert rest.cost == pytest.approx(full.cost, rel=1e-9)


def test_ctrl_c_in_a_chain_keeps_the_first_stage(wine):
    X, y = wine
    obj = WDA(X[::3], y[::3], 2, reg=1.0)
    calls = []

    def callback(state):
        calls.append(state)
        if len(calls) == 4:
            raise KeyboardInterrupt

    res = ldr.solve(obj, ["scf", "trust-region"], callback=callback)
    assert res.interrupted and not res.converged
    assert np.isfinite(res.cost) and res.cost == calls[-1].cost
    assert len(res.stages) <= 2 and not res.stages[-1].converged


def test_ctrl_c_before_any_point_propagates(wine):
    X, y = wine
    obj = InterruptedLDA(X, y, 2, at=1)  # the start's own gradient
    with pytest.raises(KeyboardInterrupt):
        ldr.solve(obj, "gradient", start="random")


def test_resume_from_a_budget_stop_equals_one_long_run(wine):
    X, y = wine
    obj = LDA(X, y, 2)
    long = ldr.solve(obj, "trust-region", start="random", random_state=1)
    short = ldr.solve(obj, "trust-region", start="random", random_state=1, max_iter=2)
    assert short.budget == "max_iter" and not short.converged
    resumed = ldr.solve(obj, "trust-region", start=short)
    assert resumed.converged and resumed.cost == pytest.approx(long.cost, rel=1e-12)
    assert resumed.n_iter > short.n_iter >= 1  # max_iter=2 counts the inner products too
    with pytest.raises(ValueError, match="start"):  # a Result of another shape
        ldr.solve(LDA(X, y, 1), "trust-region", start=short)


def test_nca_warm_start_continues_like_scikit_learn():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nca = est.NCA(2, max_iter=3, warm_start=True).fit(X, y)
    first = nca.objective_value_
    assert nca.n_iter_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        nca.fit(X, y)  # from the previous map, the trace numbered on
    assert nca.n_iter_ > 3 and nca.objective_value_ > first
    assert nca.result_.trace["iteration"][4] == 3
    with pytest.raises(ValueError) as err:
        nca.fit(X[:, :3], y)  # another n_features
    assert err.value.param == "warm_start"
    with pytest.raises(ValueError) as err:
        est.NCA(2, warm_start="yes").fit(X, y)
    assert err.value.param == "warm_start"
    # warm_start=False ignores the previous fit: the same answer as a fresh estimator
    nca.set_params(warm_start=False, max_iter=50)
    with warnings.catch_warnings():  # 50 iterations: not converged (NCA's capped steps)
        warnings.simplefilter("ignore", ConvergenceWarning)
        fresh = est.NCA(2, max_iter=50).fit(X, y)
        np.testing.assert_array_equal(nca.fit(X, y).components_, fresh.components_)


def test_linear_dr_warm_start_resumes_a_budget_stop(wine):
    X, y = wine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = est.LinearDR("lda", 2, start="random", max_iter=2, warm_start=True).fit(X, y)
    assert not model.result_.converged
    model.set_params(max_iter=1000)
    model.fit(X, y)
    full = est.LinearDR("lda", 2, start="random").fit(X, y)
    assert model.result_.converged and model.cost_ == pytest.approx(full.cost_, rel=1e-10)
    assert model.n_iter_ > 2 and model.result_.trace["iteration"][3] == 2


def _roundtrips(obj):
    yield pickle.loads(pickle.dumps(obj))
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    yield joblib.load(buffer)


@pytest.mark.parametrize("name", ["PCA", "OrthogonalLDA", "NCA", "LargeMarginDML", "LPP",
                                  "SupervisedHSIC", "UndercompleteICA", "WassersteinDA",
                                  "PPCA", "SFA", "MDS", "KernelSDR"])
def test_fitted_estimators_pickle_and_transform_identically(name, wine):
    X, y = wine
    X, y = X[::3], y[::3]
    Est = getattr(est, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"max_iter": 30} if name in ("KernelSDR", "WassersteinDA", "MDS") else {}
        fitted = Est(2, **kw)
        fitted = fitted.fit(X, y) if fitted.__sklearn_tags__().target_tags.required \
            else fitted.fit(X)
    expected = fitted.transform(X)
    for again in _roundtrips(fitted):
        np.testing.assert_array_equal(again.transform(X), expected)
        assert again.result_.cost == fitted.result_.cost


def test_results_pickle_and_resume_after_reload(wine):
    X, y = wine
    obj = LDA(X, y, 2)
    short = ldr.solve(obj, "lbfgs", start="random", random_state=2, max_iter=3, certify=True)
    for again in _roundtrips(short):
        np.testing.assert_array_equal(again.M, short.M)
        assert again.trace.columns == short.trace.columns and again.reason == short.reason
        for column in short.trace.columns:
            np.testing.assert_array_equal(again.trace[column], short.trace[column])
        assert again.certificate == short.certificate
        resumed = ldr.solve(obj, "lbfgs", start=again)
        assert resumed.converged and resumed.trace["iteration"][4] == 3
