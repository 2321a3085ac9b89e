#!/usr/bin/env bash
# The sixty-fifth session's device steps: bash evidence/experiments/2026-12-06-session65/next.sh [STEP]
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# h200 (default; on an H200 only, the H100 has these figures), each piece only if LEFT_S leaves time for it:
#   session 64's smem (~40 s; its torch.add of three tensors is the biased floor's question too); bias-evict one
#   round (session 63's: bias-evict.patch against HEAD at biased bf16 512x262144, softmax and log); bias-shapes
#   (below); then session 63's `last` in what is left (fp32 causal 512x262144 and its log beside torch_compile,
#   evict, bias-evict again, bw-configs, the biased floor).
# bias-shapes (any card, ~1 min): biased bf16 512x262144, auto, in the backward's shape (16 x 8, uncapped: 111
#   registers, two CTAs an SM), without then with bias-evict.patch (then all 16 loads evict_last, as the backward's).
# pipelined (any card, ~1.5 min): pipelined-row-probe.py time (FORMS, default all three); not in the h200 step: on
#   the H100 it lost 15-20 points to auto (perf-notes, sixty-fifth session).
# Every step packs $OUT into one all.tgz (the device returns few files).
set -u
s63=evidence/experiments/2026-12-06-session63
. evidence/experiments/device-step.sh  # card, tag, pack, left
case ${1:-h200} in
  pipelined)
    . .ab/device-setup.sh > /dev/null
    timeout 150 python3 evidence/experiments/2026-12-06-session65/pipelined-row-probe.py time ${FORMS:-} \
      > $OUT/pipelined-time.txt 2>&1
    echo "pipelined-row-probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/pipelined-time.txt | tail -24 ;;
  bias-shapes)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    p=$s63/bias-evict.patch
    for patched in "" 1; do
      id=bias-16x8-$tag${patched:+-evict}
      [[ $patched ]] && patch -s -p1 < $p
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -c "
import dataclasses, sys, torch
from softmax_bench.kernels import cluster
from softmax_bench.kernels.aligned import window_lanes
chosen = dataclasses.replace(cluster.layout(window_lanes(262144, torch.bfloat16), 16, 8, torch.bfloat16, 'fp32'),
                             evict=cluster.forward_evict_setting())
cluster.config_for = lambda N, dtype, fusion=None: chosen
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id --op biased --dtype bf16 --shape 512x262144 --variant auto \
        > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.pct_of_roofline:.1f} {r.ms*1e3:.1f} us ({r.ms_p20*1e3:.1f}-{r.ms_p80*1e3:.1f}) regs {r.n_regs} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
      [[ $patched ]] && patch -s -R -p1 < $p
    done ;;
  h200)
    [[ $tag == h200 ]] || { echo "not an H200, nothing run"; exit 0; }
    WARPS="4 8 16" bash evidence/experiments/2026-12-06-session64/next.sh smem
    left 100 && ROUNDS=1 bash $s63/next.sh bias-evict
    left 70 && bash $0 bias-shapes
    left 70 && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s63/next.sh last ;;
esac
