#!/usr/bin/env bash
# The sixty-seventh session's device steps: bash evidence/experiments/2026-12-06-session67/next.sh [STEP]
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# Next session, on an H200, in this order (docs/perf-notes.md, sixty-seventh session): patches (or its three steps,
#   phased, backward-shared and bias-once, one call each). Each step below says what it runs.
# first (~9 min; run): on an H200, session 66's verify (LEFT_S 400) then its landing (LEFT_S 170); on an H100, session
#   66's proxy (LEFT_S 380) then verify's tests (LEFT_S 180).
set -u
s66=evidence/experiments/2026-12-06-session66
. evidence/experiments/device-step.sh  # card, tag, pack, left
case ${1:-first} in
  bias-rows) ;;
  first)
    if [[ $tag == h200 ]]; then
      LEFT_S=400 bash $s66/next.sh verify; LEFT_S=170 bash $s66/next.sh landing
    else
      LEFT_S=380 bash $s66/next.sh proxy; LEFT_S=180 bash $s66/next.sh verify
    fi ;;
esac
# bias-rows (any card; ~3 min; with spread.patch applied, as run): bias-rows-probe.py (its docstring), CELLS of its
#   cells (default all); then the GPU tests of shared masks and biases in what LEFT_S leaves.
if [[ ${1:-} == bias-rows ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout $(( ${LEFT_S:-600} - 10 )) python3 evidence/experiments/2026-12-06-session67/bias-rows-probe.py ${CELLS:-} \
    > $OUT/bias-rows.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/bias-rows.txt | tail -12
  # the GPU tests of shared masks and biases (the cluster kernel under SPREAD), for what LEFT_S leaves
  left 40 && timeout $(( ${LEFT_S:-600} - SECONDS - 5 )) python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
    tests/test_cluster.py -k "shared or bias" tests/test_bias.py > $OUT/tests-spread.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-spread.txt)"
fi
# bias-once (an H200; ~4 min; written, not yet run): bias-once.patch applied (it applies at d17a5c7): bias-once-probe.py
#   (its docstring), then the biased rows/64 forward at the default grid's fused widths (N <= 16384), auto beside
#   torch_compile, as once-biased-rows64-h200-s67 (and its log); then test_bias.py on the GPU; the patch reversed.
if [[ ${1:-} == bias-once ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  here=evidence/experiments/2026-12-06-session67
  # bias-once.patch is in the tree since 1236d16 (switched off; the probe sets fused.BIAS_ONCE_ROWS)
  timeout 150 python3 $here/bias-once-probe.py > $OUT/bias-once.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/bias-once.txt | tail -9
  for log in "" --log; do
    id=once-biased-rows64${log:+-log}-$tag-s67
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 150 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
      $(printf -- "--shape %s " 4194304x32 1048576x128 262144x512 131072x1024 65536x2048 4096x4000 32768x4096 \
        16384x8192 8192x16384) --dtype bf16 --dtype fp32 --op biased --mask-shape rows/64 $log \
      --variant auto --variant torch_compile \
      > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
t = d[d.variant == 'torch_compile'].set_index(['dtype', 'M', 'N']).pct_of_roofline; \
print(' '.join(f'{r.dtype}:{r.N}:{r.pct_of_roofline:.1f}/{t[(r.dtype, r.M, r.N)]:.1f}' for r in d[d.variant == 'auto'].itertuples()))" 2>&1 | tail -1)"
  done
  left 60 && timeout $(( ${LEFT_S:-600} - SECONDS - 5 )) python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
    tests/test_bias.py > $OUT/tests-once.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-once.txt)"
fi
# phased (an H200; ~5 min; written, not yet run): phased.patch applied (it applies at ae58c0b): the GPU tests of shared
#   masks and biases (test_a_shared_mask_is_read_where_it_is phased and not, test_a_bias_against_float64), then
#   auto beside torch_compile at N = 50257, key-padded and biased rows/64, softmax and log, forward, as
#   phased-<op>[-log]-h200-s67; the patch reversed.
if [[ ${1:-} == phased ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  here=evidence/experiments/2026-12-06-session67
  patch -s -p1 < $here/phased.patch || { echo "phased.patch does not apply"; exit 1; }
  timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py -k "shared or bias or phase" \
    > $OUT/tests-phased.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-phased.txt)"
  for form in key-padded key-padded-log biased biased-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    id=phased-$form-$tag-s67
    left 50 || break
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -m softmax_bench sweep --out $OUT/runs \
      --run-id $id --shape 8192x50257 --dtype bf16 --dtype fp32 --op $op $log $shape --variant auto \
      --variant torch_compile > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.variant}:{r.dtype}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
  done
  patch -s -R -p1 < $here/phased.patch
fi
# backward-shared (an H200; ~4 min; written, not yet run): backward-shared.patch applied (it applies at e89b8b0): its
#   GPU test (test_a_log_softmaxs_shared_mask_gives_the_expanded_masks_gradient) and test_cluster_backward's others,
#   then the key-padded log backward over the default grid beside torch_compile, as
#   backward-shared-key-padded-log-h200-s67; the patch reversed.
if [[ ${1:-} == backward-shared ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  here=evidence/experiments/2026-12-06-session67
  patch -s -p1 < $here/backward-shared.patch || { echo "backward-shared.patch does not apply"; exit 1; }
  timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster_backward.py -k "not sm90" \
    > $OUT/tests-backward-shared.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-backward-shared.txt)"
  id=backward-shared-key-padded-log-$tag-s67
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
    --preset default --op key-padded --log --pass backward --variant auto --variant torch_compile \
    > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
t = d[d.variant == 'torch_compile'].set_index(['dtype', 'M', 'N']).ms; \
print(' '.join(f'{r.dtype}:{r.N}:{r.ms * 1e3:.0f}/{t[(r.dtype, r.M, r.N)] * 1e3:.0f}us' for r in d[d.variant == 'auto'].itertuples()))" 2>&1 | tail -1)"
  patch -s -R -p1 < $here/backward-shared.patch
fi
# patches (an H200; one call of ~10 min; written, not yet run): the steps phased, backward-shared and bias-once in turn,
#   each with its own patch alone and its own GPU tests, each only if LEFT_S leaves it a minute.
if [[ ${1:-} == patches ]]; then
  for step in phased backward-shared bias-once; do
    left 60 && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 $step
  done
fi
