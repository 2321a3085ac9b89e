#!/usr/bin/env bash
# The forty-fourth session's device steps: bash evidence/experiments/2026-12-05-session44/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. Every other step as the forty-second session's next.sh has it.
# ce: the loss on the H200 after this session's changes (the gradient written again for a loss gradient other than 1,
#   the softcap's libdevice tanh): test_cross_entropy on the GPU, then scripts/cross-entropy.py at bf16 4096x128256 and
#   8192x50257 and fp32 4096x128256 (ours, ours_inplace, ours_dloss_0.3, torch, torch.compile; the "gradient" rows:
#   gradient_kernel alone). Predictions (perf-notes, forty-fourth session): the tests pass; gradient_kernel >= 90 % of
#   a copy at bf16 4096x128256; ours' step at a loss gradient of 1 as in cross-entropy-quack-h200-d (93-94 %).
set -u
case $1 in ce) ;; *) exec bash evidence/experiments/2026-12-05-session42/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 PYTHONPATH=$PYTHONPATH:$PWD/scripts
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py -rfE > $OUT/tests-ce.txt 2>&1
echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-ce.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-ce.txt
timeout 200 python3 scripts/cross-entropy.py $OUT/ce-bf16.csv 4096x128256 8192x50257 > $OUT/ce-bf16.txt 2>&1
echo "bf16 rc=$? at $SECONDS s"; cat $OUT/ce-bf16.txt
timeout 120 python3 scripts/cross-entropy.py $OUT/ce-fp32.csv --dtype fp32 4096x128256 > $OUT/ce-fp32.txt 2>&1
echo "fp32 rc=$? at $SECONDS s"; cat $OUT/ce-fp32.txt
