"""The soak: the property suite's long profile over every estimator and every objective.

Runs the properties of ``tests/properties/_ldr_props.py`` (a clear error naming the argument,
or a finite, right-shaped, orthonormal, reference-equal, honestly-converged answer; inputs
unmodified; same seed, same answer) on ``--examples`` random examples spread over the 23
estimators, the registered methods and the quotient of traces, and prints the number of
examples run, the outcomes (clear errors / answers), the failures by kind — *silently wrong*,
*obscure error*, *mutated input* — and Hypothesis's shrunk counterexample of each.  A target
whose run fails is restarted with a fresh seed until its share of examples is done, so one
defect does not hide the others.

    flock /tmp/ldr-bench.lock .venv/bin/python benchmarks/soak.py --examples 10000
    .venv/bin/python benchmarks/soak.py --only PCA,lda --examples 200 --seed 3

``--json PATH`` appends the summary of the run (one JSON line) for runs made in chunks
(``--part i/k`` runs every k-th target starting at i); ``--summarize PATH`` adds them up.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "properties"))

import _ldr_props as P  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ldr.driver import registry  # noqa: E402

QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def targets() -> list[tuple[str, str]]:
    return ([("estimator", name) for name in sorted(P.ESTIMATORS)]
            + [("method", name) for name in registry.names()] + [("quotient", "QuotientOfTraces")])


def _body(kind: str, name: str):
    if kind == "estimator":
        def run(case):
            data, kw, repeat = case.draw(P.estimator_cases(name), label="case")
            return f"{name}(**{kw!r}) on {data!r}", lambda: P.check_estimator(
                name, data, kw, repeat)
    elif kind == "method":
        def run(case):
            data, r, options, repeat = case.draw(P.method_cases(name), label="case")
            return f"{name} r={r!r} options={options!r} on {data!r}", lambda: P.check_method(
                name, data, r, options, repeat)
    else:
        def run(case):
            A, B, r = case.draw(P.quotient_cases(), label="case")
            return f"QuotientOfTraces(A={A.tolist()!r}, B={B.tolist()!r}, r={r})", \
                lambda: P.check_quotient(A, B, r)
    return run


def _check(make, state, outcomes, case):
    text, check = make(case)
    try:
        outcome = check()
    except BaseException:
        state["failed"], state["last"] = True, text
        raise
    if not state["failed"]:
        state["count"] += 1
        outcomes[outcome] += 1


def _property(make, state, outcomes, examples: int, seed: int):
    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=QUIET, derandomize=False, print_blob=False)
    @given(case=st.data())
    def prop(case):
        _check(make, state, outcomes, case)
    return prop


def soak_target(kind: str, name: str, examples: int, seed: int, outcomes: Counter,
                failures: dict) -> int:
    """Run ``examples`` examples of one target (restarting after a failure); the count run."""
    done, attempt = 0, 0
    while done < examples and attempt < 20:
        attempt += 1
        state = {"count": 0, "failed": False, "last": None}
        prop = _property(_body(kind, name), state, outcomes, examples - done,
                         seed * 1000 + attempt)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prop()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - recorded, then the soak goes on
            errors = getattr(exc, "exceptions", None) or (exc,)  # an ExceptionGroup
            for err in errors:
                label = next((v for k, v in P.KINDS.items() if isinstance(err, k)),
                             "harness error")
                first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
                key = (f"{kind}:{name}", label, first)
                if key not in failures:
                    failures[key] = {"example": state["last"], "message": str(err)[:2000],
                                     "trace": "".join(traceback.format_exception(err))[-3000:]}
            state["count"] += state["failed"]  # the failing example itself
        done += state["count"]
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma-separated target names")
    parser.add_argument("--part", default="", help="i/k: every k-th target from the i-th")
    parser.add_argument("--json", default="", help="append this run's summary to a file")
    parser.add_argument("--summarize", default="", help="add up the runs in a --json file")
    args = parser.parse_args(argv)
    if args.summarize:
        return summarize(args.summarize)
    chosen = targets()
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [t for t in chosen if t[1] in wanted]
    if args.part:
        i, k = (int(v) for v in args.part.split("/"))
        chosen = chosen[i::k]
    share = max(1, args.examples // max(len(chosen), 1))
    outcomes: Counter = Counter()
    failures: dict = {}
    counts = {}
    start = time.perf_counter()
    for kind, name in chosen:
        t = time.perf_counter()
        counts[name] = soak_target(kind, name, share, args.seed, outcomes, failures)
        print(f"{kind:9s} {name:24s} {counts[name]:6d} examples  {time.perf_counter() - t:7.1f}s",
              flush=True)
    summary = {"examples": sum(counts.values()), "outcomes": dict(outcomes),
               "seconds": round(time.perf_counter() - start, 1), "per_target": counts,
               "failures": [{"target": k[0], "kind": k[1], "first_line": k[2], **v}
                            for k, v in failures.items()]}
    report(summary)
    if args.json:
        with open(args.json, "a") as fh:
            fh.write(json.dumps(summary) + "\n")
    return 0


def report(summary: dict) -> None:
    kinds = Counter(f["kind"] for f in summary["failures"])
    print(f"\n{summary['examples']} examples in {summary['seconds']:.0f}s; outcomes: "
          f"{summary['outcomes'].get('answer', 0)} answers checked, "
          f"{summary['outcomes'].get('error', 0)} clear errors")
    print("failures by kind: " + ", ".join(f"{k}: {kinds.get(k, 0)}" for k in
                                            ("silently wrong", "obscure error", "mutated input",
                                             "harness error")))
    for f in summary["failures"]:
        print(f"\n[{f['kind']}] {f['target']}: {f['first_line']}\n  shrunk: {f['example']}")


def summarize(path: str) -> int:
    total = {"examples": 0, "outcomes": Counter(), "seconds": 0.0, "per_target": Counter(),
             "failures": []}
    for line in Path(path).read_text().splitlines():
        run = json.loads(line)
        total["examples"] += run["examples"]
        total["outcomes"].update(run["outcomes"])
        total["seconds"] += run["seconds"]
        total["per_target"].update(run["per_target"])
        total["failures"] += run["failures"]
    report(total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
