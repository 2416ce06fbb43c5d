"""Issue 23, item 1: time budgets that hold inside a step, progress lines, memory limits.

Time is a fake clock that only the oracles advance (``time.perf_counter`` patched), so the
tests check what a budget does — which oracle call is not started, which run is not run —
without any wall-clock threshold.
"""

import io
import time
import tracemalloc

import numpy as np
import pytest

import ldr
from ldr.cli import budget as cli_budget
from ldr.cli import commands as cli
from ldr.core.errors import BudgetExceeded
from ldr.core.problem import Problem
from ldr.driver import registry
from ldr.objectives import PCA


class Clock:
    """A ``time.perf_counter`` that only the oracles of :func:`_slow` move."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(time, "perf_counter", c)
    return c


def _slow(X, clock, hvp=1.0, other=0.01):
    """PCA whose Hessian-vector product takes ``hvp`` seconds of ``clock``."""
    class Slow(PCA):
        def cost(self, M):
            clock.t += other
            return super().cost(M)

        def egrad(self, M):
            clock.t += other
            return super().egrad(M)

        def ehvp(self, M, V):
            clock.t += hvp
            return super().ehvp(M, V)

    return Slow(X, 3)


def test_no_oracle_call_starts_that_would_overrun_the_deadline(pca_data, clock):
    problem = Problem(_slow(pca_data, clock))
    M = problem.manifold.random_point(np.random.default_rng(0))
    problem.cost(M)
    problem.ehvp(M, M)  # no deadline: it runs, and its time (1 s) is remembered
    problem.deadline = clock.t + 1.5
    problem.ehvp(M, M)  # 1 s of the 1.5 s left
    with pytest.raises(BudgetExceeded, match="0.5 s were left, less than the 1 s"):
        problem.ehvp(M, M)
    assert problem.counts["hvp"] == 3  # counted, but the objective was not called
    problem.cost(M)  # a cheap oracle still fits
    with pytest.raises(BudgetExceeded, match="the 1 s that a call of Slow.egrad"):
        problem.egrad(M)  # never timed: as slow as the slowest so far


def test_max_time_cuts_a_trust_region_step_between_hessian_products(pca_data, clock):
    """The trust region's first inner solve needs many Hessian-vector products of 1 s each;
    with 3.5 s the run ends inside that step, at its start point, not converged, within
    the budget (before: the step ran to its end however long)."""
    t0 = clock.t
    res = ldr.solve(_slow(pca_data, clock), "trust-region", start="random", max_time=3.5)
    assert not res.converged and res.budget == "max_time"
    assert "max_time 3.5s reached inside a step" in res.reason
    assert res.counts["hvp"] == 4 and res.n_iter == 3  # the 4th product was not made
    assert clock.t - t0 <= 3.5
    # with time for it, the same run converges
    assert ldr.solve(_slow(pca_data, clock, hvp=1e-3), "trust-region", start="random",
                     max_time=1e4).converged


def test_the_start_point_is_always_evaluated(pca_data):
    res = ldr.solve(PCA(pca_data, 3), "gradient", start="random", max_time=0.0)
    assert not res.converged and res.budget == "max_time" and res.n_iter == 0
    assert res.cost == pytest.approx(PCA(pca_data, 3).cost(
        ldr.manifolds.Grassmann(12, 3).random_point(np.random.default_rng(0))))
    assert ldr.solve(PCA(pca_data, 3), "gradient", start="random",
                     max_iter=1).budget == "max_iter"
    assert ldr.solve(PCA(pca_data, 3), "trust-region").budget == ""


def test_a_certificate_within_a_time_budget(pca_data, clock):
    obj = _slow(pca_data, clock)
    M = obj.heuristic()
    cert = ldr.certificate(obj, M, max_time=2.5)  # 27 products of 1 s do not fit
    assert cert.method == ("not computed: the time budget ran out after 2 of 27 "
                           "Hessian-vector products")
    assert np.isnan(cert.hess_min) and cert.second_order == "unknown"
    assert cert.grad_norm < 1e-8  # what was computed is kept
    from ldr.driver.answers import verdict

    assert verdict(True, cert) == "global min"  # PCA's global test needs no Hessian
    import dataclasses

    assert verdict(True, dataclasses.replace(cert, global_gap=None)) == "converged"
    assert verdict(False, cert, "max_time") == "budget" and verdict(False, cert) == "NOT conv."
    full = ldr.certificate(obj, M)
    assert full.second_order == "positive" and verdict(True, full) == "global min"


def test_compare_shares_its_time_budget_and_reports_runs_not_made(pca_data, clock):
    """Four runs share 0.9 s: each gets the time left over the runs left (the first 0.9/4 s);
    the first overruns by its first Hessian-vector product (1 s), whose time nothing has
    measured yet, and spends the whole budget; a run cut reads "budget", a run with no time
    left is not started and says so."""
    events = []
    obj = _slow(pca_data, clock)
    t0 = clock.t
    cmp = ldr.compare(obj, ["trust-region", "gradient"], starts=2, time_budget=0.9,
                      progress=lambda event, info: events.append((event, dict(info))))
    budgets = [info["budget"] for event, info in events if event == "start"]
    assert budgets == [pytest.approx(0.9 / 4)]
    assert [row["verdict"] for row in cmp.rows] == ["budget"] * 4
    assert clock.t - t0 <= 0.9 + 1.0  # one oracle call misjudged
    made, not_run = cmp.rows[:1], cmp.rows[1:]
    assert all(row["cost"] is not None and row["reason"].startswith("max_time")
               for row in made)
    assert all(row["cost"] is None and row["reason"] == "not run: the time budget of 0.9 s "
               "was spent" for row in not_run)
    assert [e for e, _ in events].count("done") == 4
    assert "not run: the time budget of 0.9 s was spent" in cmp.table(wide=True)
    assert "4 runs stopped at a budget or did not run" in cmp.conclusion()
    assert [s["runs"] for s in cmp.summary()] == [2, 2]
    assert cmp.summary()[1]["best_cost"] is None


def test_compare_runs_know_the_oracles_times_of_the_runs_before(pca_data, clock):
    """Runs of one comparison share what each oracle took (ldr.core.problem, Deadline): only the
    first run can misjudge the 1 s Hessian-vector product; the second trust-region run does
    not start one in its 0.16 s, and the gradient runs still get their share.  Four runs
    then keep to the 1.5 s (before, each trust-region run overran by a product: 3.5 s)."""
    obj = _slow(pca_data, clock)
    t0 = clock.t
    cmp = ldr.compare(obj, ["trust-region", "gradient"], starts=2, time_budget=1.5)
    assert clock.t - t0 <= 1.5 + 0.02  # to within a cost or gradient call (0.01 s)
    assert [row["verdict"] for row in cmp.rows] == ["budget"] * 4
    assert all(row["cost"] is not None for row in cmp.rows)
    second = cmp.results[("trust-region", "rand1")]
    assert "less than the 1 s that a call of Slow.ehvp takes" in second.reason
    # a later solve of the same objective judges its first product by the last one too
    t1 = clock.t
    res = ldr.solve(obj, "trust-region", start="random", max_time=0.5)
    assert res.budget == "max_time" and clock.t - t1 < 0.5


def test_compare_does_not_start_a_run_whose_start_costs_more_than_its_share(pca_data, clock):
    """Evaluating a start (cost and gradient, 1 s each here) is done whatever a run's share:
    a run whose share is less than that is not started and leaves its share to the runs
    after it.  8 s for 4 runs: the first (2 s share) takes 4 s (its start, and the reference
    point's gradient and cost for the gradient scale); the second's share, 4/3 s, is too
    little; the third's, 4/2 s, and the fourth's are enough."""
    obj = _slow(pca_data, clock, hvp=0.01, other=1.0)
    t0 = clock.t
    cmp = ldr.compare(obj, ["gradient"], starts=4, time_budget=8.0)
    made = [row["cost"] is not None for row in cmp.rows]
    assert made == [True, False, True, True]
    assert cmp.rows[1]["reason"] == ("not run: evaluating a start (cost and gradient) takes "
                                     "about 2 s, more than its 1.33 s share of the time "
                                     "budget of 8 s")
    assert clock.t - t0 <= 8.0 + 1.0  # within one call misjudged
    assert all(row["verdict"] == "budget" for row in cmp.rows)


def test_compare_evaluates_the_reference_gradient_once(pca_data):
    """The gradient scale's reference point is fixed (seed 0): a comparison evaluates its
    gradient once, not once per run, and the runs stop where they did alone."""
    calls = []

    class Counted(PCA):
        def egrad(self, M):
            calls.append(np.array(M))
            return super().egrad(M)

    obj = Counted(pca_data, 3)
    alone = ldr.solve(obj, "gradient", start="random", random_state=1)
    reference = calls[1]  # the start's gradient, then the reference point's
    calls.clear()
    cmp = ldr.compare(obj, ["gradient", "trust-region"], starts=2, random_state=1)
    at_reference = sum(np.array_equal(M, reference) for M in calls)
    assert at_reference == 1
    assert cmp.results[("gradient", "rand0")].n_iter == alone.n_iter
    assert cmp.results[("gradient", "rand0")].grad_scale == alone.grad_scale
    assert all(r.converged for r in cmp.results.values())
    calls.clear()
    # outside a comparison: computed again
    ldr.solve(obj, "gradient", start="random", random_state=1)
    assert sum(np.array_equal(M, reference) for M in calls) == 1


def test_progress_lines(pca_data):
    """On a terminal: the line of a run is rewritten in place, then its final line; else
    only the final line, one per run."""
    for tty in (False, True):
        out = io.StringIO()
        lines = cli_budget.ProgressLines(out, tty=tty, every=0.0)
        cmp = ldr.compare(PCA(pca_data, 3), ["trust-region", "ism"], starts=2,
                          progress=lines)
        text = out.getvalue()
        finals = [line for line in text.replace("\r\x1b[K", "\n").split("\n")
                  if "iterations," in line]
        assert len(finals) == 4
        assert finals[0].startswith("ldr: [1/4] trust-region from rand0: global min, cost "
                                    f"{cmp.rows[0]['cost']:.10g}, {cmp.rows[0]['n_iter']} "
                                    "iterations,")
        assert ("\r\x1b[K" in text) is tty and ("iteration 1, cost" in text) is tty
        assert text.count("\n") == 4


def test_the_command_line_prints_a_line_per_run_and_its_budgets(capsys):
    assert cli.main(["compare", "--data", "iris", "--starts", "2", "--solvers",
                     "gradient"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("ldr: lda on iris: 2 run(s); time budget 45 s shared among the "
                             "runs (--max-time sets one per run); about ")
    assert "memory limit" in err[0]
    assert err[1].startswith("ldr: [1/2] gradient from rand0: global min, cost ")
    assert len(err) == 3
    assert cli.main(["compare", "--data", "iris", "--starts", "1", "--max-time", "7"]) == 0
    assert "time budget 7 s per run" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--max-time", "0"], "argument --max-time: must be a finite number > 0, got '0'"),
    (["--max-time", "inf"], "argument --max-time: must be a finite number > 0"),
    (["--max-time", "soon"], "argument --max-time: expected a number, got 'soon'"),
    (["--delimiter", ";;"], "argument --delimiter: expected one character"),
])
def test_bad_budget_options(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["compare", *argv])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_the_default_memory_limit_is_half_of_what_is_available(monkeypatch):
    free = cli_budget.available_memory()
    assert free is not None and free > 2**20
    monkeypatch.setattr(cli_budget, "available_memory", lambda: 8 * 2**30)
    assert cli_budget.default_memory_limit() == (
        4 * 2**30, "the default, 0.5 of the 8 GiB this machine has available")
    monkeypatch.setattr(cli_budget, "available_memory", lambda: None)
    assert cli_budget.default_memory_limit()[0] is None


def test_a_method_whose_n_by_n_arrays_exceed_the_limit_is_refused(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((600, 4)), np.repeat(["a", "b", "c"], 200)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(",".join([*map(str, x), c]) for x, c in zip(X, y)))
    need = registry.get("nca").method.memory(600, [200, 200, 200]) + 2 * X.nbytes
    status = cli.main(["compare", "--method", "nca", "--data", str(path), "--memory-limit",
                       "10MB"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert (f"--memory-limit: nca needs its data in memory and would need about "
            f"{cli_budget.size(need)}: {cli_budget.size(need - 2 * X.nbytes)} for its n×n "
            "arrays (n = 600 rows) plus") in err
    assert "the limit is 10 MiB (--memory-limit)" in err and "lda, maf" in err
    # WDA's transport plans are per pair of classes: the largest class counts
    status = cli.main(["compare", "--method", "wda", "--data", str(path), "--memory-limit",
                       "1MB"])
    assert status == 2 and "(n = 600 rows, the largest class 200)" in capsys.readouterr().err
    assert cli.main(["compare", "--method", "nca", "--data", str(path), "--memory-limit",
                     "100MB", "--starts", "1", "--solvers", "gradient", "--max-iter",
                     "3"]) == 0


@pytest.mark.parametrize("method", ["nca", "lmnn", "mds", "ksdr", "hsic", "wda"])
def test_declared_memory_bounds_what_the_oracles_allocate(method):
    """``Method.memory`` is an upper bound of the peak the oracles allocate (tracemalloc:
    build, cost, gradient, Hessian-vector product) and not more than 3× it (past a fixed
    128 MiB of blocks), at n = 400 in three unequal classes."""
    rng = np.random.default_rng(0)
    sizes = [200, 120, 80]
    y = np.repeat([0, 1, 2], sizes)
    X = rng.standard_normal((400, 5)) + y[:, None]
    cls = registry.get(method)
    import sklearn.neighbors  # noqa: F401  (imported before tracing: a module is not an array)

    tracemalloc.start()
    try:
        obj = registry.from_table(method, X, y if cls.method.supervised else None, 2)
        problem = Problem(obj)
        M = problem.manifold.random_point(rng)
        problem.cost(M), problem.egrad(M), problem.ehvp(M, M)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    declared = cls.method.memory(400, sizes)
    assert peak <= declared + 2 * X.nbytes + 2**20, (peak, declared)  # + the data
    assert declared - 2**27 * (method == "mds") <= 3 * peak, (peak, declared)
