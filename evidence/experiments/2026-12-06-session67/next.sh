#!/usr/bin/env bash
# The sixty-seventh session's device steps: bash evidence/experiments/2026-12-06-session67/next.sh [STEP]
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# first (~9 min): on an H200, session 66's verify (LEFT_S 400) then its landing (LEFT_S 170); on an H100, session
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
