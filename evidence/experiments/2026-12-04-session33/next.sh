#!/usr/bin/env bash
# The thirty-fourth session's device steps (written in the thirty-third):
#   bash evidence/experiments/2026-12-04-session33/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. In order of need for issue 26's "Done when": lean-keep, then
# (if it holds: LEAN_KEEP and LATE_Y turned on, committed) grid ×2 and parts cluster backward; fused-causal;
# fused-log if time is left. A device machine keeps the .git of its first call: a run's git_commit names that
# commit (+ "-dirty") for every later call on the same machine, though the tree is the working tree of the call;
# so `grid` takes COMMIT=SHA (the committed tree's `git rev-parse HEAD`, written into the run command) and records
# it as SOFTMAX_BENCH_COMMIT.
# lean-keep (issue 26; run it with timeout_s 600, ~350–550 s by the exp-ftz A/B's pace of 0.4 s a timing): the GPU
#   tests of cluster_backward.LEAN_KEEP and LATE_Y (test_cluster_backward -k "lean or late", 57), then ab-lean-keep.py: the log backward as it is, with LEAN_KEEP, LATE_Y and both, in alternating rounds,
#   at causal and scaled-masked bf16/fp32 8192×16384, 4096×128256, 512×262144 and scaled 512×262144. Prediction in
#   its docstring: lean ≥ 92 % of a copy at every bf16 cell (as it is 41–85 % of the roofline in the grids) and ≥ 10
#   points above as it is; fp32 ≥ 5 above where under 92; late_y ≥ 92 at fp32 512×262144, within ±1 elsewhere.
# grid RUN_ID ARGS... (issue 26): one default grid beside torch.compile: after lean-keep,
#   `grid causal-log-backward-h200-b --op causal --log --pass backward` and
#   `grid scaled-masked-log-backward-h200-b --op scaled-masked --log --pass backward`. Prediction: ≥ 92 at all but
#   fp32 512×262144 (≥ 90 there with LATE_Y), ahead of torch.compile at every cluster cell.
# fused-causal (issue 26): scripts/fused-configs.py at causal bf16 4096×4000 and 16384×8192 with 2 to 16 warps
#   (WARPS), now with fused.EXP_FTZ on in causal rows: the default grid causal-h200-ftz put 4096×4000 at 83.8 % of
#   the roofline (a kernel moving the bytes and computing nothing: 88.1). Prediction: no tile ≥ 2 points above the
#   default at 4096×4000; at 16384×8192 (96.1 % of a copy in exp-ftz) none either.
# fused-log DTYPE OP MxN (issue 26; if time is left: fp32 biased 16384x8192): scripts/fused-configs.py with `log`,
#   4 to 32 warps, where torch.compile led a fused log (biased --log fp32 16384×8192 102.6 against 103.2; scaled
#   --log fp32 32768×4096 and 16384×8192 in scaled-log-h200, 102.0 against 102.1 and 102.2). Prediction: 16 warps
#   ≥ 1 point of a copy above the default.
# parts PART ...: the GPU parts of the suite named after it (PART_TIMEOUT ≥ 300; kernels 140 s, cluster 184 s,
#   backward 78 s of tests in the thirty-third session).
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s33
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  lean-keep)
    GPU_TEST_WORKERS=8 timeout 180 bash scripts/gpu-tests.sh cluster -k "lean or late" -rfE > $OUT/tests-lean-keep.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-lean-keep.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-lean-keep.txt
    timeout 400 python3 evidence/experiments/2026-12-04-session33/ab-lean-keep.py $OUT/lean-keep.csv > $OUT/lean-keep.txt 2>&1
    echo "lean-keep rc=$? at $SECONDS s"; cat $OUT/lean-keep.txt ;;
  fused-causal)
    WARPS=2,4,8,16 timeout 400 python3 scripts/fused-configs.py $OUT/fused-causal.csv bf16 causal 4096x4000 \
      16384x8192 > $OUT/fused-causal.txt 2>&1
    echo "fused-causal rc=$? at $SECONDS s"; tail -12 $OUT/fused-causal.txt ;;
  fused-log)
    timeout 300 python3 scripts/fused-configs.py $OUT/fused-log-$2-$1-$3.csv $1 $2 log $3 > $OUT/fused-log-$2-$1-$3.txt 2>&1
    echo "fused-log rc=$? at $SECONDS s"; cat $OUT/fused-log-$2-$1-$3.txt ;;
  grid)
    id=$1; shift
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA, the commit of the tree} timeout 280 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id --preset default "$@" --variant auto \
      --variant torch_compile > $OUT/$id.txt 2>&1
    echo "grid $id rc=$? at $SECONDS s"; tar czf $OUT/runs-$id.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  parts)
    for part in "$@"; do
      GPU_TEST_WORKERS=16 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
        > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
