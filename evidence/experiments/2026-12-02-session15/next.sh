#!/usr/bin/env bash
# The fifteenth session's device steps (the fourteenth's next.sh runs its experiments: ce, ce-cluster, packed).
#   bash evidence/experiments/2026-12-02-session15/next.sh ce-sweep|fused-sweeps   (device; carry [".bundles", ".ab"])
# ce-sweep: `sweep --preset vocab --op cross-entropy --pass both` with the peers that install from .ab/whl (Liger).
set -u
step=$1
wheels() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
  export PYTHONPATH=$PYTHONPATH:/tmp/site
}
sweep() { timeout "$1" python3 -m softmax_bench sweep --out $OUT/runs "${@:2}" > $OUT/${RUN_ID}.txt 2>&1;
          echo "$RUN_ID rc=$?"; tail -40 $OUT/${RUN_ID}.txt; }
case $step in
  ce-sweep)
    . .ab/device-setup.sh && wheels && export PYTHONUNBUFFERED=1
    RUN_ID=${RUN_ID:-cross-entropy-h200} sweep 400 --preset vocab --op cross-entropy --pass both --variant fused \
      --variant eager --variant torch_compile --variant liger --run-id ${RUN_ID:-cross-entropy-h200} ;;
  fused-sweeps)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    for op in scaled-masked causal; do
      RUN_ID=$op-h200-${SUFFIX:-d} sweep 250 --preset default --op $op --variant auto --variant torch_compile \
        --run-id $op-h200-${SUFFIX:-d}
    done ;;
  *) echo "usage: next.sh ce-sweep|fused-sweeps" >&2; exit 2 ;;
esac
