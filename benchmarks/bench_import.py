"""What ``import ldr`` and ``ldr --help`` cost: time and resident memory, against
``import numpy, scipy.linalg`` (the floor: ldr's core needs both).

Each measurement is a fresh interpreter (``python -c``), median of ``--repeats`` runs, with its
peak resident memory (``resource.getrusage``).  Which optional backends are installed (PyTorch,
JAX) is printed: before ldr 0.2, ``import ldr`` imported pymanopt, whose package init imports
every autodiff backend it finds (7.5 s with PyTorch and JAX installed).

    python -P benchmarks/bench_import.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys

PROBE = ("import resource, time, sys\nt = time.perf_counter()\n{code}\n"
         "dt = time.perf_counter() - t\n"
         "import json\nprint(json.dumps([dt, resource.getrusage(resource.RUSAGE_SELF)"
         ".ru_maxrss / 1024, sorted(m for m in ('pymanopt', 'torch', 'jax', 'matplotlib', "
         "'dask', 'sklearn', 'pandas') if m in sys.modules)]))")

CASES = {
    "import numpy, scipy.linalg": "import numpy, scipy.linalg",
    "import ldr": "import ldr",
    "ldr --help": "from ldr.cli import commands as cli\ntry:\n    cli.main(['--help'])\n"
                  "except SystemExit:\n    pass",
    "import ldr.estimators": "import ldr.estimators",
}


def measure(code: str, repeats: int):
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", PROBE.format(code=code)],
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs),
            runs[-1][2])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=10)
    args = p.parse_args(argv)
    installed = [m for m in ("torch", "jax", "pymanopt") if importlib.util.find_spec(m)]
    print(f"installed: {', '.join(installed) or 'none of torch, jax, pymanopt'}; "
          f"median of {args.repeats} fresh interpreters\n")
    floor = None
    print(f"{'what':28s} {'time':>8s} {'over floor':>11s} {'peak RSS':>9s}  heavy modules loaded")
    for name, code in CASES.items():
        t, rss, loaded = measure(code, args.repeats)
        floor = t if floor is None else floor
        print(f"{name:28s} {t:7.3f}s {t - floor:+10.3f}s {rss:7.0f} MB  "
              f"{', '.join(loaded) or '—'}")


if __name__ == "__main__":
    main()
