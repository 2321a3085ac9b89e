#!/usr/bin/env bash
# The forty-ninth session's device steps: bash evidence/experiments/2026-12-05-session49/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step as the forty-eighth
# session's next.sh has it (biased, biased-rule, biased-evict, host-bar, parts, configs, grids, hard-cells, …).
# compiled-parts (issue 29): compiled-parts.py in three processes: compiled_op's and torch_compile's host µs a call,
#   whole, Inductor's graph `call` alone, and that call with its launches stubbed. Prediction: whole - graph (dynamo's
#   guards and AOTAutograd's wrappers) is 1-3 µs larger for compiled_op (73 guard lines against 30); most of the
#   8-10 µs gap is graph - no-launch, the launch of fused_rows_kernel through Triton's launcher (19 arguments).
set -u
case $1 in compiled-parts) ;; *) exec bash evidence/experiments/2026-12-05-session48/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
for p in a b c; do
  timeout 150 env PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session49/compiled-parts.py \
    > $OUT/compiled-parts-$p.txt 2>&1
  echo "compiled-parts $p rc=$? at $SECONDS s"; grep -E "µs|kernels|Error" $OUT/compiled-parts-$p.txt
done
grep -h -E "\.run\(|empty_strided" $OUT/compiled-parts-a.txt
