#!/usr/bin/env bash
# The seventy-sixth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session76/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# sbr-short (any card; LEFT_S, ~4 min): session 75's shared-bias-rows in the order a short lease wants: biased rows/64
#   at 512x262144 and 1024x131072, bf16 and fp32, softmax, shared_row.SHARED_BIAS_ROWS off (sbr-off-<card>-s76) then
#   on (sbr-on-<card>-s76; bf16 131072 given the 262144 entry, 16 x 8, as session 75's probe), then tests/
#   test_shared_row.py on the GPU, then the log off and on, as time allows.
# sbr-tiny (any card; LEFT_S, ~2 min): sbr-short's first two sweeps at bf16 512x262144 alone (the prediction's cell).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == sbr-tiny ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 512x262144 --dtype bf16 --op biased --mask-shape rows/64"
  left 20 && bar_sweep sbr-tiny-off-$tag-s76 $cells
  left 20 && SWEEP_SET="import softmax_bench.kernels.shared_row as s; s.SHARED_BIAS_ROWS = True" \
    bar_sweep sbr-tiny-on-$tag-s76 $cells
fi
if [[ ${1:-} == sbr-short ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  on="import torch, softmax_bench.kernels.shared_row as s; s.SHARED_BIAS_ROWS = True; \
s.SHARED_ROW_AT[('biased', torch.bfloat16)][131072] = (16, 8, False)"
  cells="--shape 512x262144 --shape 1024x131072 --dtype bf16 --dtype fp32 --op biased --mask-shape rows/64"
  left 45 && bar_sweep sbr-off-$tag-s76 $cells
  left 45 && SWEEP_SET=$on bar_sweep sbr-on-$tag-s76 $cells
  left 70 && { timeout $(( ${LEFT_S:-600} - SECONDS - 5 )) python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
    tests/test_shared_row.py > $OUT/tests-sbr.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-sbr.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-sbr.txt | head; }
  left 45 && bar_sweep sbr-off-log-$tag-s76 $cells --log
  left 45 && SWEEP_SET=$on bar_sweep sbr-on-log-$tag-s76 $cells --log
fi
