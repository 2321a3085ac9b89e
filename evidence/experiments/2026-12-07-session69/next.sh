#!/usr/bin/env bash
# The sixty-ninth session's device steps: bash evidence/experiments/2026-12-07-session69/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# first (an H200; one call of ~10 min): session 68's shared-row in its first 320 s (the gate of three bar cells: biased
#   bf16 512x262144 and its log, causal log fp32), then session 67's backward-shared in what is left (the key-padded
#   log backward: 16 cells under the bar by the floor, 8 with a peer ahead); the patches phased and bias-once after.
# rows-held (any card; ~4 min): session 67's bias-once.patch applied, rows-held-probe.py (its docstring): fused programs
#   of 1, 2 and 4 rows of one group of a rows/64 bias at the one-row widths; the patch reversed.
# h200 (an H200; one call of ~10 min; written for the seventieth session): what this session's H100 could not show.
#   1. The bar cells of the rows now held in shared memory (SHARED_ROWS on as committed): biased bf16 and causal fp32
#      512x262144, softmax and log, auto beside torch_compile, as bar-shared-row-<form>-h200-s69.
#   2. The key-padded log backward over the default grid with the mask read where it is (landed), beside
#      torch_compile, as bar-key-padded-log-backward-h200-s69.
#   3. group-rows' probe (lead 2: a cluster holding R rows of one group of a shared bias or mask) in what is left.
# phased-both (an H200; one call of ~7 min): phased-both.patch (session 67's phased.patch with the log backward's
#   shared mask laid out in phase copies too, where it was written out to y's rows first) at 8192x50257:
#   key-padded and biased rows/64 forward, softmax and log, and the key-padded log backward, first without the
#   patch (unphased-<form>-<card>-s69), then its GPU tests, then with it (phased-<form>-<card>-s69); the patch
#   reversed.
# lead6 (an H200; ~4 min): session 67's lead 6, the fused backward's tiles for the key-padded log (a shared mask) at
#   the widths where it runs behind the softmax backward (bf16 2048-8192: 200-203 us against 180) or torch_compile
#   (fp32 65536x2048: 95.4 against 100.3 on the H200), scripts/backward-tiles.py in 5 rounds beside torch_compile.
# group-rows (an H200; ~3 min): session 67's lead 2 as a probe (group-rows-probe.py, its docstring): a cluster holding
#   R = 1, 2, 4 rows of one group of a rows/64 bias, the bias piece copied into shared memory once, beside auto.
set -u
here=evidence/experiments/2026-12-07-session69
. evidence/experiments/device-step.sh  # card, tag, pack, left
if [[ ${1:-} == first ]]; then
  LEFT_S=320 bash evidence/experiments/2026-12-06-session68/next.sh shared-row
  for step in backward-shared phased bias-once; do
    left 60 && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-06-session67/next.sh $step
  done
fi
sweep() {  # sweep ID ARGS...: auto beside torch_compile into $OUT/runs/ID, one line of % of the roofline
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
    "$@" --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.variant}:{r.dtype}:{r.N}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
if [[ ${1:-} == h200 ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  for form in biased biased-log causal causal-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    dtype=bf16; [[ $op == causal ]] && dtype=fp32
    left 40 && sweep bar-shared-row-$form-$tag-s69 --shape 512x262144 --dtype $dtype --op $op $log
  done
  left 150 && sweep bar-key-padded-log-backward-$tag-s69 --preset default --op key-padded --log --pass backward
  left 120 && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 group-rows
fi
if [[ ${1:-} == phased-both ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  phased_sweeps() {  # phased_sweeps PREFIX: the five cells at 8192x50257
    for form in key-padded key-padded-log biased biased-log key-padded-log-backward; do
      op=key-padded; [[ $form == biased* ]] && op=biased
      log=; [[ $form == *-log* ]] && log=--log
      pass=; [[ $form == *-backward ]] && pass="--pass backward"
      shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
      left 30 && sweep $1-$form-$tag-s69 --shape 8192x50257 --dtype bf16 --dtype fp32 --op $op $log $pass $shape
    done
  }
  phased_sweeps unphased
  patch -s -p1 < $here/phased-both.patch || { echo "phased-both.patch does not apply"; exit 1; }
  timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py tests/test_cluster_backward.py \
    -k "shared or bias or phase" > $OUT/tests-phased-both.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-phased-both.txt)"
  phased_sweeps phased
  patch -s -R -p1 < $here/phased-both.patch
fi
if [[ ${1:-} == lead6 ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout $(( ${LEFT_S:-600} / 2 - 10 )) python3 scripts/backward-tiles.py $OUT/lead6-fp32.csv fp32 rounds=5 modes=last \
    op=key-padded log 65536x2048 > $OUT/lead6-fp32.txt 2>&1
  echo "fp32 rc=$? at $SECONDS s"; tail -4 $OUT/lead6-fp32.txt
  timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 scripts/backward-tiles.py $OUT/lead6-bf16.csv bf16 rounds=5 modes=last \
    op=key-padded log 65536x2048 32768x4096 16384x8192 > $OUT/lead6-bf16.txt 2>&1
  echo "bf16 rc=$? at $SECONDS s"; tail -8 $OUT/lead6-bf16.txt
fi
if [[ ${1:-} == group-rows ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout $(( ${LEFT_S:-600} - 10 )) python3 $here/group-rows-probe.py > $OUT/group-rows.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/group-rows.txt | tail -6
fi
if [[ ${1:-} == rows-held ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  # bias-once.patch is in the tree since 1236d16 (switched off; the probe sets fused.BIAS_ONCE_ROWS)
  timeout $(( ${LEFT_S:-600} - 15 )) python3 $here/rows-held-probe.py > $OUT/rows-held.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/rows-held.txt | tail -17
fi
