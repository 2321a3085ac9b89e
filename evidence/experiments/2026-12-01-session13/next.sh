#!/usr/bin/env bash
# The next device session's first commands (issue 32 at HEAD, then the biased wide rows), one device command each:
#   bash evidence/experiments/2026-12-01-session13/next.sh t38-a|t38-b|t36|t36-b|configs
# carry [".bundles", ".ab"] with .ab/gpu2.sh (session 11's gpu-parts.sh), .ab/device-setup.sh and .ab/whl as in
# this folder's README; outputs under $OUT.
set -u
step=$1
parts() { GPU_TEST_WORKERS=16 PART_TIMEOUT=280 EXTRA="--timeout=240" bash .ab/gpu2.sh "$@"; }
case $step in
  t38-a) . .ab/device-setup.sh && parts t38 kernels backward ;;                  # ~3 min
  t38-b) . .ab/device-setup.sh && parts t38 cluster instrument sweeps ;;         # ~9 min
  t36) export PYTHONPATH=$PWD && parts t36 kernels backward cluster instrument ;;  # ~6 min
  t36-b) export PYTHONPATH=$PWD && parts t36 sweeps ;;                           # ~4 min
  configs)  # the biased op's cluster shapes, bf16 then fp32 (COMPILE_ONLY=1 first fills Triton's cache)
    . .ab/device-setup.sh && export PYTHONPATH=$PYTHONPATH:$PWD/scripts
    for d in "bf16 50257 65536 128256 151936 262144" "fp32 128256 151936 262144"; do
      set -- $d; dtype=$1; shift
      COMPILE_ONLY=1 timeout 200 python3 scripts/cluster-configs.py /dev/null $dtype biased "$@" > /dev/null 2>&1
      timeout 200 python3 scripts/cluster-configs.py $OUT/cfg-biased-$dtype.csv $dtype biased "$@" > $OUT/cfg-biased-$dtype.txt 2>&1
    done ;;
  *) echo "usage: next.sh t38-a|t38-b|t36|t36-b|configs" >&2; exit 2 ;;
esac
