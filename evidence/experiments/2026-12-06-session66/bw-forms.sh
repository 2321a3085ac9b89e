#!/usr/bin/env bash
# Call 3 of the sixty-sixth session, as it ran (one command line then; kept here as a file): every backward form of
# fp32 512x262144, auto, in config_for's layout (head) and in 16 x 16 capped at 64 (cluster_backward.config_for
# replaced in the process). COMMIT=SHA bash bw-forms.sh; carry the slim bundle.
. .ab/device-setup.sh > /dev/null; export PYTHONUNBUFFERED=1; mkdir -p $OUT/runs
for spec in "scaled-masked --log" "scaled-masked" "scaled" "scaled --log" "causal" "causal --log" "biased" \
            "biased --log" "softmax" "softmax --log"; do
  for shape in "" "16 16 64"; do
    id=bwc-$(tr -d ' -' <<< "$spec")-$(tr ' ' x <<< "${shape:-head}")
    SOFTMAX_BENCH_COMMIT=$COMMIT timeout 100 python3 -c "
import dataclasses, sys, torch
from softmax_bench.kernels import cluster, cluster_backward
from softmax_bench.kernels.aligned import window_lanes
shape = '$shape'.split()
if shape:
    chosen = dataclasses.replace(cluster.layout(window_lanes(262144, torch.float32), 16, 16, torch.float32, 'fp32'), max_registers=64, evict=cluster_backward.EVICT)
    cluster_backward.config_for = lambda N, dtype, fusion=None: chosen
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id --op $spec --pass backward --dtype fp32 --shape 512x262144 --variant auto \
      > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); print(' '.join(f'{r.pct_of_roofline:.1f} {r.ms*1e3:.1f}us regs {r.n_regs} sp {r.n_spills} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
  done
done
cd $OUT && tar czf all.tgz runs sweep-* && rm -rf runs sweep-*
