#!/usr/bin/env bash
# the redesign's after runs at the final commit, on a quiet machine: one at a time, under the lock
cd /work/after2
log=/work/bench-after2/times.log
run() {
  local out=$1; shift
  local t0=$(date -u +%s); local s0=$(date -u '+%F %T')
  flock /tmp/ldr-bench.lock bash -c "echo \$(date -u +%s) > /work/bench-after2/$out.lock; $*" > /work/bench-after2/$out 2>&1
  local rc=$?
  local l=$(cat /work/bench-after2/$out.lock)
  echo "* cd /work/after2 && flock /tmp/ldr-bench.lock $* > /work/bench-after2/$out 2>&1" >> $log
  echo "    start $s0 UTC, end $(date -u '+%F %T') UTC, wall $(( $(date -u +%s) - t0 )) s (lock wait $((l - t0)) s), exit status $rc" >> $log
}
( while true; do echo "$(date -u '+%T') $(cat /proc/loadavg)" >> /work/bench-after2/loadavg.log; sleep 30; done ) &
LOADPID=$!
run bench_overhead.txt .venv/bin/python -P benchmarks/bench_overhead.py
run bench_backends.txt .venv/bin/python -P benchmarks/bench_backends.py
run bench_lda.txt .venv/bin/python -P benchmarks/bench_lda.py
run bench_hsic_quick.txt .venv/bin/python -P benchmarks/bench_hsic.py --quick
run bench_hsic_profile_digits.txt .venv/bin/python -P benchmarks/bench_hsic.py --datasets wine --no-cv --profile digits
run wda_ab.txt "for i in 1 2 3; do /work/before/.venv/bin/python benchmarks/results/redesign_after/final/wda_ab.py.txt (then at /tmp/wda_ab.py) before; .venv/bin/python /tmp/wda_ab.py after; done"
kill $LOADPID
echo done >> $log
