#!/usr/bin/env bash
# The sixty-eighth session's device steps: bash evidence/experiments/2026-12-06-session68/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# shared-row (an H200; ~6 min; within `both`, ~5): the GPU tests of the rows held in shared memory
#   (tests/test_shared_row.py), the A/B of shared memory against registers (shared-row-ab.py), then, with
#   shared_row.SHARED_ROWS switched on in the device's copy, the four cells at 512x262144 (biased bf16 and causal fp32,
#   softmax and log) with auto beside torch_compile, as bar-shared-row-<form>[-log]-<card>-s68 (commit recorded as
#   SHA+shared-rows-on); then test_cluster.py's bias and causal GPU tests in what LEFT_S leaves.
set -u
here=evidence/experiments/2026-12-06-session68
. evidence/experiments/device-step.sh  # card, tag, pack, left
if [[ ${1:-} == shared-row ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_shared_row.py \
    > $OUT/tests-shared-row.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-shared-row.txt)"
  timeout 150 python3 $here/shared-row-ab.py > $OUT/shared-row-ab.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/shared-row-ab.txt | tail -13
  # the sweeps with shared_row.SHARED_ROWS on in this copy of the tree (off as committed), recorded so
  sed -i 's/^SHARED_ROWS = False/SHARED_ROWS = True/' softmax_bench/kernels/shared_row.py
  for form in biased biased-log causal causal-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    dtype=bf16; [[ $op == causal ]] && dtype=fp32
    id=bar-shared-row-$form-$tag-s68
    left 45 || break
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA}+shared-rows-on timeout 100 python3 -m softmax_bench sweep \
      --out $OUT/runs --run-id $id --shape 512x262144 --dtype $dtype --op $op $log --variant auto \
      --variant torch_compile > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.variant}:{r.dtype}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
  done
  sed -i 's/^SHARED_ROWS = True/SHARED_ROWS = False/' softmax_bench/kernels/shared_row.py
  left 40 && timeout $(( ${LEFT_S:-600} - SECONDS - 5 )) python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
    tests/test_cluster.py -k "bias or scale_mask_causal" > $OUT/tests-cluster.txt 2>&1
  echo "cluster tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-cluster.txt)"
fi
# both (an H200; one call of ~10 min): shared-row in its first 330 s, then session 67's patches (phased,
#   backward-shared, bias-once, each with its own patch alone) in what LEFT_S leaves.
if [[ ${1:-} == both ]]; then
  LEFT_S=330 bash $0 shared-row
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-06-session67/next.sh patches
fi
