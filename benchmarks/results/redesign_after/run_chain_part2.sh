#!/usr/bin/env bash
cd /work/after
log=/work/bench-after/times.log
run() {
  local out=$1; shift
  local t0=$(date -u +%s); local s0=$(date -u '+%F %T')
  flock /tmp/ldr-bench.lock bash -c "$*" > /work/bench-after/$out 2>&1
  local rc=$?
  echo "* cd /work/after && flock /tmp/ldr-bench.lock $* > /work/bench-after/$out 2>&1" >> $log
  echo "    start $s0 UTC, end $(date -u '+%F %T') UTC, wall $(( $(date -u +%s) - t0 )) s, exit status $rc" >> $log
}
run bench_real_part2.txt .venv/bin/python -P benchmarks/bench_real.py --no-cv --only WDAClustering --tables digits,anes96/PID,anes96/vote,fair/rate_marriage,fair/religious,grunfeld/firm,modechoice/mode,randhie/health,star98/pass,ccard/ownrent,spector/grade --save /work/bench-after/bench_real_rows.jsonl
run bench_real_part3.txt .venv/bin/python -P benchmarks/bench_real.py --no-cv --only MAF,SFA,CCA,OrthogonalCCA --save /work/bench-after/bench_real_rows.jsonl
echo done2 >> $log
