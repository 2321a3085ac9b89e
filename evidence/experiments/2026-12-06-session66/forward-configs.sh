#!/usr/bin/env bash
# Forward cluster layouts at one cell each: cluster.config_for replaced in the process by CTAs x warps (cap).
# COMMIT=SHA bash forward-configs.sh; carry the slim bundle. Cells: causal fp32 512x262144 (softmax and log; 92.9 and
# 91.9 in 16 x 8 on the H200) and biased bf16 512x262144 (84.3 in 16 x 16 capped at 64).
. .ab/device-setup.sh > /dev/null; export PYTHONUNBUFFERED=1
one() {  # one ID DTYPE CTAS WARPS CAP SWEEP-ARGS...
  local id=$1 dtype=$2 ctas=$3 warps=$4 cap=$5; shift 5
  SOFTMAX_BENCH_COMMIT=$COMMIT timeout 100 python3 -c "
import dataclasses, sys, torch
from softmax_bench.kernels import cluster
from softmax_bench.kernels.aligned import window_lanes
dtype = {'bf16': torch.bfloat16, 'fp32': torch.float32}['$dtype']
how = 'fp32' if dtype == torch.float32 else 'packed'
cap = None if '$cap' == 'None' else int('$cap')
chosen = dataclasses.replace(cluster.layout(window_lanes(262144, dtype), $ctas, $warps, dtype, how),
                             max_registers=cap, evict=cluster.forward_evict_setting())
cluster.config_for = lambda N, dtype, fusion=None: chosen
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id --dtype $dtype --shape 512x262144 --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.pct_of_roofline:.1f} {r.ms*1e3:.1f} us regs {r.n_regs} sp {r.n_spills} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
for log in --log ""; do
  for c in "16 8 None" "16 16 64" "16 16 80" "16 16 None" "16 4 None" "8 16 None"; do
    one fc-causal-fp32${log}-$(tr ' ' x <<< "$c") fp32 $c --op causal $log
  done
done
for c in "16 16 64" "16 4 None" "16 4 128" "8 16 None" "8 16 96" "8 8 None"; do
  one fc-biased-bf16-$(tr ' ' x <<< "$c") bf16 $c --op biased
done
cd $OUT && tar czf all.tgz runs sweep-* && rm -rf runs sweep-*
