#!/usr/bin/env bash
# the redesign's after runs: one at a time, under the lock, from /work/after
cd /work/after
log=/work/bench-after/times.log
run() {
  local out=$1; shift
  local t0=$(date -u +%s); local s0=$(date -u '+%F %T')
  flock /tmp/ldr-bench.lock bash -c "echo locked \$(date -u +%s) > /work/bench-after/$out.lock; $*" > /work/bench-after/$out 2>&1
  local rc=$?
  local t1=$(date -u +%s); local l=$(cut -d' ' -f2 /work/bench-after/$out.lock)
  echo "* cd /work/after && flock /tmp/ldr-bench.lock $* > /work/bench-after/$out 2>&1" >> $log
  echo "    start $s0 UTC, end $(date -u '+%F %T') UTC, wall $((t1-t0)) s (lock wait $((l-t0)) s), exit status $rc" >> $log
}
( while true; do echo "$(date -u '+%T') $(cat /proc/loadavg)" >> /work/bench-after/loadavg.log; sleep 30; done ) &
LOADPID=$!
run bench_overhead.txt .venv/bin/python -P benchmarks/bench_overhead.py
run bench_backends.txt .venv/bin/python -P benchmarks/bench_backends.py
run bench_lda.txt .venv/bin/python -P benchmarks/bench_lda.py
run bench_hsic_quick.txt .venv/bin/python -P benchmarks/bench_hsic.py --quick
run bench_hsic_profile_digits.txt .venv/bin/python -P benchmarks/bench_hsic.py --datasets wine --no-cv --profile digits
run bench_scale.txt .venv/bin/python -P benchmarks/bench_scale.py
run bench_wda.txt timeout 2400 .venv/bin/python -P benchmarks/bench_wda.py
run bench_real.txt .venv/bin/python -P benchmarks/bench_real.py --no-cv --save /work/bench-after/bench_real_rows.jsonl
kill $LOADPID
echo done >> $log
