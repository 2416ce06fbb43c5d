"""The estimators' solver default: ``ldr.solve``'s (``solver=None, start=None``) against the
trust region from the eigenvector heuristic (``solver="trust-region", start="heuristic"``, the
estimators' default before wave 3), on real tables.

``solver=None`` is the objective's ``default_solver``: for an objective with a Φ-oracle (PCA,
the quotients of traces: OrthogonalLDA, MAF, SFA, LPP, NPE, OrthogonalCCA) the chain ISM →
trust region from ISM's own start (the eigenvectors of Φ₀), otherwise the trust region from the
heuristic — the same as before — so only the estimators listed in ``ESTIMATORS`` can change.

For each estimator and table (``_tables``: development tables, where a default may be chosen,
and held-out tables, where it is checked), on standardized features: fit time of both settings
(median of 5 fits, one BLAS thread), whether each converged without a ConvergenceWarning, and
the cost each reached (``result_.cost``; the difference relative to the larger magnitude).

    flock /tmp/ldr-bench.lock python -P benchmarks/bench_estimator_defaults.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

import ldr.estimators as est

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -P` leaves it out
import _common  # noqa: E402
import _tables  # noqa: E402
from bench_real import _fit  # noqa: E402

#: the estimators whose objective has a Φ-oracle (the only ones the default can change), the
#: kind of table each takes and whether it reads y
ESTIMATORS = {
    "PCA": ("classes", False), "OrthogonalLDA": ("classes", True),
    "LPP": ("classes", False), "NPE": ("classes", False),
    "MAF": ("series", False), "SFA": ("series", False),
    "OrthogonalCCA": ("two-view", True),
}
SETTINGS = {"old": {"solver": "trust-region", "start": "heuristic"},
            "new": {"solver": None, "start": None}}
REPEATS = 5


def measure(name, t, setting):
    kind, supervised = ESTIMATORS[name]
    X = StandardScaler().fit_transform(t.X)
    y = StandardScaler().fit_transform(t.y) if kind == "two-view" else t.y

    def make():
        return getattr(est, name)(**SETTINGS[setting])
    times, run, model = [], None, None
    for _ in range(REPEATS):
        run, model = _fit(make, X, y, supervised, 60.0)
        if not run.finished:
            return run, None
        times.append(run.seconds)
    run.seconds = statistics.median(times)
    return run, model.result_.cost


def main() -> None:
    tables = _tables.all_tables()
    _common.print_header("estimator defaults: ldr.solve's chain vs trust region from the "
                         "heuristic", [f"median of {REPEATS} fits, one BLAS thread; "
                                       "* held-out table"])
    rows, ratios = [], {True: [], False: []}
    with _common.single_threaded():
        for name, (kind, _) in ESTIMATORS.items():
            for t in tables:
                if t.kind != kind or (kind == "classes" and t.X.shape[1] < 2):
                    continue
                old, c_old = measure(name, t, "old")
                new, c_new = measure(name, t, "new")
                dev = t.name in _tables.DEVELOPMENT
                if old.finished and new.finished:
                    ratios[dev].append(new.seconds / old.seconds)
                    gap = (c_new - c_old) / max(abs(c_old), abs(c_new), 1e-300)
                else:
                    gap = np.nan
                rows.append([name, ("" if dev else "*") + t.name,
                             _common.fmt_time(old.seconds), "yes" if old.converged else "NO",
                             _common.fmt_time(new.seconds), "yes" if new.converged else "NO",
                             _common.fmt_ratio(new.seconds / old.seconds), f"{gap:+.1e}"])
                print("  " + "  ".join(map(str, rows[-1])), flush=True)
    _common.print_table(["estimator", "table", "old time", "old conv.", "new time", "new conv.",
                         "new/old", "cost gap"], rows)
    for dev, label in ((True, "development"), (False, "held out")):
        r = ratios[dev]
        if r:
            print(f"{label}: median new/old time {statistics.median(r):.2f} over {len(r)} fits "
                  f"(range {min(r):.2f}–{max(r):.2f})")


if __name__ == "__main__":
    main()
