#!/usr/bin/env bash
# The thirty-fourth session's device steps: bash evidence/experiments/2026-12-04-session34/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (as the thirty-third's next.sh, whose steps this one adds to).
# late-y CELL... (issue 26): the session-33 A/B (ab-lean-keep.py: as it was, LEAN_KEEP, LATE_Y, both) at the cells of
#   the scaled-masked log backward's grid under 92 % after LEAN_KEEP (scaled-masked-log-backward-h200-b). Prediction:
#   lean+late_y ≥ 5 points above lean at the fp32 cells (as at 128256 and 262144), no gain at bf16 1024×131072
#   (lean ran at 98–99 at 4096×128256, which compiles alike: a gap there is not the kernel's).
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s34
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  late-y)
    timeout 300 python3 evidence/experiments/2026-12-04-session33/ab-lean-keep.py $OUT/late-y.csv "$@" \
      > $OUT/late-y.txt 2>&1
    echo "late-y rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/late-y.txt; grep -c "bit for bit" $OUT/late-y.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
