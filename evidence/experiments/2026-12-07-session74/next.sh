#!/usr/bin/env bash
# The seventy-fourth session's device step: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session74/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# gate (any card; LEFT_S, ~6 min):
# 1. the GPU tests of the shared rows, the phase copies and the bias (cluster.PHASED_FROM_ROWS, cluster.SHARED_BIASED);
# 2. SHARED_BIASED against BIASED (SHARED_BIASED emptied: shared-biased-before-<form>-<card>-s74) at its cells, biased
#    rows/64 4096x128256 and 8192x50257, bf16 and fp32, softmax and log (shared-biased-<form>-<card>-s74);
# 3. the gate on K at bf16 8192x50257: scaled-masked and biased rows/16 and rows/4 (gated-<op>-rows<K>-<card>-s74),
#    which a launch now reads in place; session 73's small-groups measured them phased and not.
# ab (any card; LEFT_S=560, ~9 min): first `gate`'s GPU tests (row_of's change and the gate's launch test are new), then
#   1. SHARED_BIASED's A/B as in `gate`, the softmax only (shared-biased-[before-]softmax-<card>-s74): on the H200
#      its entries have never run, and since row-of-own-start.patch BIASED's 16 × 8 takes bf16 128256 in 64
#      registers, not the 68 that the scan measured it in;
#   2. row-of-own-start.patch (landed: row_of finds a shared row's window from its own row's start) reversed, then
#      as landed (rowof-<before|after>-<op>-<card>-s74): key-padded and biased rows/64 at the widths whose
#      registers it moves, compiled for sm_90 (16384, 65536, 131072, 128256, 262144), bf16 and fp32;
#   3. the gate's one untried K, rows/32 at bf16 8192×50257, read in place (PHASED_FROM_ROWS = 64) and in phase
#      copies (PHASED_FROM_ROWS = 32), scaled-masked and biased (k32-<op>-<in-place|phased>-<card>-s74).
# tune (an H100; LEFT_S, ~7 min): `softmax-bench tune` of the default grid, the softmax, then causal and scaled-masked
#   joining it, into $OUT/<table_name> (auto_table.table_name of the card and this Triton): an H100 Triton 3.8 table
#   for softmax_bench/auto_tables/ (auto has none there: it takes the rule's picks).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
gpu_tests() {  # gpu_tests NAME: the GPU tests of the shared rows, the phase copies and the bias, into $OUT/tests-NAME.txt
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 12 -rfE tests/test_cluster.py tests/test_cluster_backward.py \
    tests/test_bias.py tests/test_fusion.py -k "shared or phase or bias or keep or broadcast" > $OUT/tests-$1.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$1.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$1.txt | head -20
}
if [[ ${1:-} == gate ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  gpu_tests gate
  for form in softmax log; do
    log=; [[ $form == log ]] && log=--log
    for when in before after; do
      id=shared-biased-$form-$tag-s74; set=pass
      [[ $when == before ]] && id=shared-biased-before-$form-$tag-s74 && \
        set="import softmax_bench.kernels.cluster as c; c.SHARED_BIASED = {2: {}, 4: {}}"
      left 40 && SWEEP_SET=$set bar_sweep $id --shape 4096x128256 --shape 8192x50257 --dtype bf16 --dtype fp32 \
        --op biased --mask-shape rows/64 $log
    done
  done
  for K in 16 4; do
    for op in scaled-masked biased; do
      left 25 && bar_sweep gated-$op-rows$K-$tag-s74 --shape 8192x50257 --dtype bf16 --op $op --mask-shape rows/$K
    done
  done
fi
if [[ ${1:-} == ab ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  gpu_tests ab
  for when in before after; do
    id=shared-biased-softmax-$tag-s74; set=pass
    [[ $when == before ]] && id=shared-biased-before-softmax-$tag-s74 && \
      set="import softmax_bench.kernels.cluster as c; c.SHARED_BIASED = {2: {}, 4: {}}"
    left 40 && SWEEP_SET=$set bar_sweep $id --shape 4096x128256 --shape 8192x50257 --dtype bf16 --dtype fp32 \
      --op biased --mask-shape rows/64
  done
  for when in before after; do
    [[ $when == before ]] && { patch -s -R -p1 < evidence/experiments/2026-12-07-session74/row-of-own-start.patch \
      || { echo "the patch did not reverse"; break; }; }
    for op in key-padded biased; do
      shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
      left 60 && bar_sweep rowof-$when-$op-$tag-s74 --shape 8192x16384 --shape 2048x65536 --shape 1024x131072 \
        --shape 4096x128256 --shape 512x262144 --dtype bf16 --dtype fp32 --op $op $shape
    done
    [[ $when == before ]] && patch -s -p1 < evidence/experiments/2026-12-07-session74/row-of-own-start.patch
  done
  for op in scaled-masked biased; do
    for from in 64 32; do
      form=$([[ $from == 32 ]] && echo phased || echo in-place)
      left 25 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.PHASED_FROM_ROWS = $from" \
        bar_sweep k32-$op-$form-$tag-s74 --shape 8192x50257 --dtype bf16 --op $op --mask-shape rows/32
    done
  done
fi
if [[ ${1:-} == tune ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  table=$OUT/$(python3 -c "import torch; from softmax_bench.auto_table import table_name, triton_version; \
print(table_name(torch.cuda.get_device_name(), triton_version()))")
  for op in softmax causal scaled-masked; do
    left 120 && SOFTMAX_BENCH_COMMIT=$commit timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 -m softmax_bench tune \
      --preset default --op $op --table $table > $OUT/tune-$op.txt 2>&1
    echo "tune $op rc=$? at $SECONDS s"; tail -3 $OUT/tune-$op.txt
  done
fi
