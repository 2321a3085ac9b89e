#!/usr/bin/env bash
# The fiftieth session's device steps: bash evidence/experiments/2026-12-05-session50/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. Every step is the forty-ninth session's (compiled-parts,
# compiled-order, host-bisect, native) or, through it, the earlier sessions' (biased, biased-rule, biased-evict,
# host-bar, parts, configs, grids, hard-cells, …). This session's own scripts ran as commands.txt lists them.
# First on any GPU (docs/perf-notes.md, fiftieth session): `PART_TIMEOUT=250 next.sh parts backward`, the first run
# of the final traced_arguments (a pointer left at its default None stays None; mask_ptr x as before). Then
# `step-trace`: one compiled training step of each traced (issue 29 item 3; prediction in docs/perf-notes.md).
if [[ $1 == step-trace ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 60 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session50/step-trace.py $OUT \
    > $OUT/step-trace.txt 2>&1; echo "step-trace rc=$? at $SECONDS s"; grep -v Warning $OUT/step-trace.txt | tail -30
  exit 0
fi
exec bash evidence/experiments/2026-12-05-session49/next.sh "$@"
