#!/usr/bin/env bash
# The twenty-eighth session's device steps, after the session-27 A/Bs were applied (cluster.REGISTERS and
# CAUSAL_REGISTERS' entries, fused.CAUSAL_REGISTERS, cross_entropy.FINISH_PDL on):
#   bash evidence/experiments/2026-12-04-session28/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; `quack` runs third of Quack's three (see ../shared/tools).
# parts: the GPU parts of the suite that the changes touch (kernels: rounding, fused forms, cross-entropy; cluster).
# quack: wide rows with Quack (issue 28's speed figures, prediction: bf16 262144 ≥ 95, 196608 ≥ 96, 151936 ≥ 97 %
#   of a copy) and the loss's vocab sweep with every peer (issue 27, prediction: bf16 151936's forward ≥ 92.5 % of a
#   read, every step ≥ 90 % of a copy).
# sweeps: the default grid of the plain softmax with auto (issue 28), causal with torch.compile (its --log did not run).
# quack-ce: after CROSS_ENTROPY's 151936 step cap, its GPU tests and the loss's vocab sweep with every peer.
# Next session: `forms` (causal --log, scaled, scaled-masked default grids with torch.compile), then
#   `parts backward sweeps instrument` (not run since the twenty-seventh session).
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
sweep() {  # ID SECONDS ARG ...
  local id=$1 limit=$2; shift 2
  timeout $limit python3 -m softmax_bench sweep --out $OUT/runs --run-id $id "$@" > $OUT/$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s"
}
case $step in
  parts)
    for part in "$@"; do
      GPU_TEST_WORKERS=16 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
        > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  quack)
    sweep wide-rows-quack-h200-f 240 --config configs/wide-rows.toml --variant auto --variant quack
    sweep cross-entropy-quack-h200-c 300 --preset vocab --op cross-entropy --pass both --variant fused \
      --variant eager --variant torch_compile --variant liger --variant quack
    cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  quack-ce)  # after CROSS_ENTROPY's bf16 151936 step cap: its GPU tests, then the vocab sweep with every peer
    timeout 120 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py -k "151936" -rfE \
      > $OUT/tests-ce-151936.txt 2>&1; echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-ce-151936.txt)"
    sweep cross-entropy-quack-h200-d 200 --preset vocab --op cross-entropy --pass both --variant fused \
      --variant eager --variant torch_compile --variant liger --variant quack
    cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  sweeps)
    sweep softmax-auto-h200-h 120 --preset default --variant auto
    sweep causal-h200-m 200 --preset default --op causal --variant auto --variant torch_compile
    # (not run: the device time went to quack-ce)
    : sweep causal-log-h200-d 200 --preset default --op causal --log --variant auto --variant torch_compile
    cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  forms)  # for the next session (issue 26): the fused forms' default grids after this session's caps, with peers
    sweep causal-log-h200-d 200 --preset default --op causal --log --variant auto --variant torch_compile
    sweep scaled-h200-c 200 --preset default --op scaled --variant auto --variant torch_compile
    sweep scaled-masked-h200-g 200 --preset default --op scaled-masked --variant auto --variant torch_compile
    cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
