"""bench_real's rows and their report: one fit's outcome (``Run``), the per-method tables,
the summary against issue 23's criteria, and the JSON-lines files that ``--save`` writes and
``--report`` merges (``benchmarks/bench_real.py``)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import _common
import numpy as np


@dataclass
class Run:
    finished: bool = False
    converged: bool = False
    seconds: float = math.nan
    value: float = math.nan
    score: float = math.nan
    error: str = ""
    warnings: list = field(default_factory=list)
    reason: str = ""  # the fitted estimator's ``result_.reason`` (ldr's), when it has one


def _cell(run, what):
    if run is None:
        return "—"
    if not run.finished:
        return "FAIL"
    value = getattr(run, what)
    if what == "seconds":
        return _common.fmt_time(value)
    return "—" if not math.isfinite(value) else f"{value:.4g}"


def report(rows) -> None:
    by_method = defaultdict(list)
    for row in rows:
        by_method[row["method"]].append(row)
    for method, items in by_method.items():
        print(f"\n{method}")
        table = []
        for r in items:
            ours, theirs = r["ours"], r.get("theirs")
            ratio = (ours.seconds / theirs.seconds if theirs is not None and ours.finished
                     and theirs.finished and theirs.seconds > 0 else math.nan)
            table.append([r["table"] + ("" if r["development"] else " *"), r["shape"],
                          "yes" if ours.finished else "NO",
                          "yes" if ours.converged else ("—" if not ours.finished else "WARN"),
                          _cell(ours, "seconds"), _cell(theirs, "seconds"),
                          _common.fmt_ratio(ratio), _cell(ours, "value"),
                          _cell(theirs, "value"), _cell(ours, "score"), _cell(theirs, "score"),
                          (r["note"] + " " + _also_note(r) + " " +
                           (ours.error or "; ".join(ours.warnings))[:90]).strip()])
        _common.print_table(["table (* other)", "n×d", "done", "conv", "ldr", "other",
                             "ratio", "value", "other's", "score", "other's", "note"], table,
                            left=2)
    print("\nsummary (development | other | all tables): finished, converged without warning, "
          "median time ratio, mean score (ldr's), mean score difference (ldr − counterpart)")
    summary = []
    for method, items in by_method.items():
        cells = [method]
        for dev in (True, False, None):
            part = [r for r in items if dev is None or r["development"] == dev]
            if not part:
                cells += ["—"] * 5
                continue
            done = sum(r["ours"].finished for r in part)
            conv = sum(r["ours"].converged for r in part)
            ratios = [r["ours"].seconds / r["theirs"].seconds for r in part
                      if r.get("theirs") and r["ours"].finished and r["theirs"].finished]
            diffs = [r["ours"].score - r["theirs"].score for r in part
                     if r.get("theirs") and math.isfinite(r["ours"].score)
                     and math.isfinite(r["theirs"].score)]
            scores = [r["ours"].score for r in part if math.isfinite(r["ours"].score)]
            cells += [f"{done}/{len(part)}", f"{conv}/{len(part)}",
                      _common.fmt_ratio(_common.median(ratios)) if ratios else "—",
                      f"{np.mean(scores):.3f}" if scores else "—",
                      f"{np.mean(diffs):+.3f}" if diffs else "—"]
        summary.append(cells)
    _common.print_table(["method", "dev done", "conv", "ratio", "score", "Δscore", "other done",
                         "conv", "ratio", "score", "Δscore", "all done", "conv", "ratio",
                         "score", "Δscore"], summary)
    _also_summary(by_method)
    flagged = [(r, why) for r in rows for why in [_flags(r)] if why]
    if flagged:
        print("\nfits that warn, fail, take over 3× the counterpart's time or score over 1 point "
              "below it (with ldr's result_.reason)")
        for r, why in flagged:
            print(f"  {r['method']:22s} {r['table'] + ('' if r['development'] else ' *'):22s} "
                  f"{why}")


def _ratio_of(r, key) -> float:
    ours, other = r["ours"], r.get(key)
    return (ours.seconds / other.seconds if other is not None and ours.finished
            and other.finished and other.seconds > 0 else math.nan)


def _also_note(r) -> str:
    """The note's brackets: a failed counterpart's error, the second counterpart's cells."""
    theirs, also, out = r.get("theirs"), r.get("also"), []
    if theirs is not None and not theirs.finished:
        out.append(f"[{r['counterpart']}: {theirs.error[:60]}]")
    if also is not None and not also.finished:
        out.append(f"[{r['also_label']}: {also.error[:60]}]")
    elif also is not None:
        out.append(f"[{r['also_label']} {_common.fmt_time(also.seconds)}, ratio "
                   f"{_common.fmt_ratio(_ratio_of(r, 'also'))}, score {_cell(also, 'score')}]")
    return " ".join(out)


def _also_summary(by_method) -> None:
    """Median time ratio and mean score difference against the second counterparts."""
    lines = []
    for method, items in by_method.items():
        if not any(r.get("also") for r in items):
            continue
        cells = [method, items[0]["also_label"]]
        for dev in (True, False, None):
            part = [r for r in items if dev is None or r["development"] == dev]
            ratios = [x for x in (_ratio_of(r, "also") for r in part) if math.isfinite(x)]
            diffs = [r["ours"].score - r["also"].score for r in part if r.get("also")
                     and math.isfinite(r["ours"].score) and math.isfinite(r["also"].score)]
            cells += [_common.fmt_ratio(_common.median(ratios)) if ratios else "—",
                      f"{np.mean(diffs):+.3f}" if diffs else "—"]
        lines.append(cells)
    if lines:
        print("\nagainst the second counterpart (the note's [...]): median time ratio, mean "
              "score difference (dev | other | all)")
        _common.print_table(["method", "counterpart", "dev ratio", "Δscore", "other ratio",
                             "Δscore", "all ratio", "Δscore"], lines)


def _flags(r) -> str:
    """Why a row misses issue 23's criteria, or ''."""
    ours, theirs, why = r["ours"], r.get("theirs"), []
    if not ours.finished:
        return ours.error
    if not ours.converged:
        why.append("warns: " + "; ".join(ours.warnings)[:120])
    if theirs is not None and theirs.finished and theirs.seconds > 0:
        ratio = ours.seconds / theirs.seconds
        if ratio > 3:
            why.append(f"{ratio:.3g}× ({_common.fmt_time(ours.seconds)} against "
                       f"{_common.fmt_time(theirs.seconds)})")
        if math.isfinite(ours.score) and math.isfinite(theirs.score) and \
                ours.score < theirs.score - 0.01:
            why.append(f"{100 * (ours.score - theirs.score):+.1f} points "
                       f"({ours.score:.4f} against {theirs.score:.4f})")
    if why and ours.reason:
        why.append(f"reason: {ours.reason[:100]}")
    return "; ".join(why)


def _save(rows, path) -> None:
    """Append the rows as JSON lines (``--report`` merges several runs' files)."""
    import dataclasses
    import json

    with open(path, "a") as fh:
        for r in rows:
            out = {k: (dataclasses.asdict(v) if isinstance(v, Run) else v) for k, v in r.items()}
            fh.write(json.dumps(out) + "\n")


def _load(paths) -> list:
    import json

    rows = []
    for path in paths:
        with open(path) as fh:
            for line in fh:
                r = json.loads(line)
                for k in ("ours", "theirs", "also"):
                    if k in r:
                        r[k] = Run(**r[k])
                rows.append(r)
    return rows
