#!/usr/bin/env bash
# The sixty-third session's device steps: bash evidence/experiments/2026-12-06-session63/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal (the tree's commit, recorded in the runs).
# first (any card, ~7 min): on an H200, the sixty-second session's h200-min; on an H100, its lean causal GPU tests
#   alone (rows of 262144 and a scale of 0, not yet run on a GPU). Then diagonal-store.patch's A/B on either card.
# evict (any card, ~3 min): causal bf16 2048x151936, auto, ROUNDS (default 2) rounds of HEAD (PLAIN_LOADS: plain
#   loads there) then evict_last capped at 80 registers (in the process), softmax; then the log once each.
# second (any card): on an H200, h200-min, the biased bf16 512x262144 bar runs (bar-*-h200-s58's commands, runs
#   bar-biased*-h200-s63), then evict; on an H100, evict then the GPU suite's half HALF (default 2; half 1 takes
#   over 500 s).
# bias-evict (any card, ~1.5 min): bias-evict.patch (the bias's vectors loaded evict_last, as x's) A/B at biased bf16
#   512x262144, auto, ROUNDS (default 2) rounds of HEAD then the patch; then the log once each.
# bw-configs (any card, ~1.5 min): the scaled-masked log backward fp32 512x262144 (87.5 on the H200, 16 x 8 at 114
#   registers: two CTAs an SM), auto, in HEAD's 16 x 8, then 16 x 16 uncapped (72 registers, one CTA an SM) and 16 x 16
#   capped at 64 (16 bytes spilled, two CTAs of 16 warps an SM), cluster_backward.config_for replaced in the process.
# third (any card): on an H200, h200-min, evict, bias-evict; on an H100, bias-evict then the GPU suite's first half
#   for SUITE_S (default 300) seconds (-v: what ran is named).
# last (any card, ~5 min, for a budget's end): on an H200, fp32 causal 512x262144 beside torch_compile (softmax,
#   log), evict and bias-evict one round each, bw-configs, then the biased floor, each piece only if LEFT_S (the
#   seconds the call has) leaves time for it; on an H100, bias-evict one round, then the GPU suite's first half for
#   what LEFT_S leaves.
# Every step packs $OUT into one all.tgz (the device returns few files).
# Every other step passes to the sixty-second session's next.sh.
set -u
s62=evidence/experiments/2026-12-06-session62
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
pack() { (cd $OUT && tar czf all.tgz --exclude=all.tgz . && find . -mindepth 1 -not -name all.tgz -delete); }
[[ ${PACKED:-} ]] || { export PACKED=1; trap pack EXIT; }  # the outermost step packs
sweep() {  # sweep RUN_ID ARGS...: causal bf16 2048x151936, auto; EVICT=1: evict_last loads (PLAIN_LOADS' entry
  # dropped in the process) capped at 80 registers (uncapped they take 122; at 80 no spill, 11 loads in one wave)
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -c "
import sys, torch
from softmax_bench.kernels import cluster
if '${EVICT:-}':
    cluster.PLAIN_LOADS[('causal', torch.bfloat16)].discard(151936)
    cluster.CAUSAL_REGISTERS[torch.bfloat16][151936] = 80
from softmax_bench.kernels import Fusion
print('config_for:', cluster.config_for(151936, torch.bfloat16, Fusion(scale=0.125, causal_m=2048)), file=sys.stderr)
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id \
    --op causal --dtype bf16 --shape 2048x151936 --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.N}:{r.pct_of_roofline:.1f} regs {r.n_regs} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
  grep -o "config_for:.*" $OUT/sweep-$id.txt | cut -c1-200
}
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
case $1 in
  evict)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    for r in $(seq ${ROUNDS:-2}); do
      sweep evict-old-$tag-$r
      EVICT=1 sweep evict-new-$tag-$r
    done
    sweep evict-old-log-$tag --log
    EVICT=1 sweep evict-new-log-$tag --log ;;
  first)
    if grep -qi h200 <<< "$card"; then
      bash $s62/next.sh h200-min
    else
      . .ab/device-setup.sh > /dev/null
      timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
        -k "causal_rows_by_vectors_match or scale_mask_causal" tests/test_cluster.py > $OUT/tests-lean.txt 2>&1
      echo "tests rc=$?: $(tail -1 $OUT/tests-lean.txt)"
    fi
    bash $s62/next.sh diagonal ;;
  second)
    if grep -qi h200 <<< "$card"; then
      bash $s62/next.sh h200-min
      . .ab/device-setup.sh > /dev/null
      for spec in "biased bf16 512x262144" "biased-log bf16 512x262144"; do
        set -- $spec; op=${1%-log}; log=; [[ $1 == *-log ]] && log=--log
        SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 90 python3 -m softmax_bench sweep --out $OUT/runs \
          --run-id bar-$1-$2-h200-s63 --op $op $log --dtype $2 --shape $3 --variant auto --variant torch_compile \
          > $OUT/sweep-$1-$2.txt 2>&1
        echo "$1 $2 $3 rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/bar-$1-$2-h200-s63/rows.csv'); \
print(' '.join(f'{r.variant}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
      done
      bash $0 evict
    else
      bash $0 evict
      HALF=${HALF:-2} SUITE_S=${SUITE_S:-300} bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite
    fi ;;
  bias-evict)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    one() {  # one RUN_ID ARGS...
      local id=$1; shift
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op biased --dtype bf16 --shape 512x262144 --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.N}:{r.pct_of_roofline:.1f} {r.ms*1e3:.1f} us ({r.ms_p20*1e3:.1f}-{r.ms_p80*1e3:.1f}) {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
    }
    p=evidence/experiments/2026-12-06-session63/bias-evict.patch
    for r in $(seq ${ROUNDS:-2}); do
      one bias-old-$tag-$r
      patch -s -p1 < $p && one bias-new-$tag-$r; patch -s -R -p1 < $p
    done
    one bias-old-log-$tag --log
    patch -s -p1 < $p && one bias-new-log-$tag --log; patch -s -R -p1 < $p ;;
  bw-configs)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    for shape in "" "16 16 None" "16 16 64"; do
      id=bw-sm-log-fp32-262144-$tag-$(tr ' ' x <<< "${shape:-head}")
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -c "
import dataclasses, sys, torch
from softmax_bench.kernels import cluster, cluster_backward
from softmax_bench.kernels.aligned import window_lanes
shape = '$shape'.split()
if shape:
    ctas, warps, cap = int(shape[0]), int(shape[1]), None if shape[2] == 'None' else int(shape[2])
    chosen = dataclasses.replace(cluster.layout(window_lanes(262144, torch.float32), ctas, warps, torch.float32, 'fp32'),
                                 max_registers=cap, evict=cluster_backward.EVICT)
    cluster_backward.config_for = lambda N, dtype, fusion=None: chosen
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144 \
        --variant auto > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.pct_of_roofline:.1f} regs {r.n_regs} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
    done ;;
  third)
    if [[ $tag == h200 ]]; then
      bash $s62/next.sh h200-min
      bash $0 evict
      bash $0 bias-evict
    else
      bash $0 bias-evict
      HALF=1 SUITE_S=${SUITE_S:-300} bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite
    fi ;;
  last)
    if [[ $tag == h200 ]]; then
      . .ab/device-setup.sh > /dev/null
      for log in "" --log; do
        id=lean-causal${log:+-log}-fp32-512x262144-h200-s63
        SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 60 python3 -m softmax_bench sweep --out $OUT/runs \
          --run-id $id --op causal $log --dtype fp32 --shape 512x262144 --variant auto --variant torch_compile \
          > $OUT/sweep-$id.txt 2>&1
        echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.variant}:{r.pct_of_roofline:.1f} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
      done
      left() { (( SECONDS + $1 < ${LEFT_S:-600} )); }  # LEFT_S: the seconds the call has; a piece starts if it fits
      left 70 && ROUNDS=1 bash $0 evict
      left 70 && ROUNDS=1 bash $0 bias-evict
      left 70 && bash $0 bw-configs
      left 100 && bash $s62/next.sh floor
    else
      ROUNDS=1 bash $0 bias-evict
      (( SECONDS + 60 < ${LEFT_S:-600} )) && HALF=1 SUITE_S=$(( ${LEFT_S:-210} - SECONDS - 30 )) \
        bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite
    fi ;;
  *) bash $s62/next.sh "$@" ;;
esac
