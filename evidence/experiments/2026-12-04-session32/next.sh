#!/usr/bin/env bash
# The thirty-third session's device steps (written in the thirty-second):
#   bash evidence/experiments/2026-12-04-session32/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. In order of need for issue 26's "Done when": forms-log-cells,
# log-evict (×2), exp-ftz, grid (×5), parts kernels cluster backward, fused-causal; compiled-code for issue 29;
# fused-log if time is left. Some 1900 s in all by this session's timings (a sweep of 64 cells 100–130 s, a GPU
# part 120–190 s): more than a session's 1800, so in this order.
# log-evict DTYPE OP N (issue 26; a call each: fp32 causal 151936, bf16 causal 128256): scripts/eviction.py with
#   `log`: the form's log_softmax with plain and with evict_last loads in alternating rounds, torch.compile beside
#   them, at the cells cluster.LOG_PLAIN_LOADS now loads plainly (built from two runs in different processes,
#   causal-log-h200-d and -e). Prediction: plain ahead by ≥ 3 points of a copy at each (the runs: 9.9 and 4.5);
#   where it is not, that width leaves LOG_PLAIN_LOADS.
# forms-log-cells (issue 26): those cells, and biased bf16 4096×128256 and 8192×50257 (their log now uncapped:
#   LOG_REGISTERS' caps hold only in the configuration they were measured in), through the sweep beside
#   torch.compile. Prediction: causal fp32 2048×151936 ≥ 92 (94.5 with plain loads before), causal bf16
#   4096×128256 ≥ 96; biased bf16 4096×128256 ≥ 96 (98.0 uncapped in biased-log-h200-b, 88.6 spilling under the
#   cap in biased-log-h200-d), 8192×50257 ≥ 99 (100.6 and 98.1).
# fused-causal (issue 26): scripts/fused-configs.py at causal bf16 4096×4000 and 16384×8192 with 2 to 16 warps
#   (WARPS), the cells under 92 % that fused runs. The thirty-second session's causal-floor (floor/causal-floor.txt):
#   at 4096×4000 a kernel that only moves the modelled bytes reaches 88.1 % of the roofline at best (15.25 µs),
#   fused 75.9 % (17.70 µs); at 16384×8192 the floor 94.1 % (8 warps), fused 91.6 %. Prediction: no tile closes
#   more than half of fused's gap to the floor at 4096×4000 (its 4 warps and 48 registers were the best of the
#   twenty-eighth session's search); at 16384×8192 one within 1 point of the floor.
# exp-ftz (issue 26): ab-exp-ftz.py, fused with tl.exp against masking.exp2_ftz (fused.EXP_FTZ, off) in
#   alternating rounds at seven cells, then its GPU test (test_fusion -k exponentials); prediction in the script's
#   docstring: causal bf16 4096×4000 and 16384×8192 ≥ 2 points of a copy faster, the rest within ±0.5, bit for bit.
# fused-log DTYPE OP MxN (issue 26; if time is left: fp32 biased 16384x8192): scripts/fused-configs.py with `log`,
#   4 to 32 warps, at the one cell where torch.compile leads a fused form (biased --log fp32 16384×8192: 102.6
#   against 103.2 in biased-log-h200-d, 102.8 against 104.4 in biased-log-h200; fused's 8 warps, evict_last).
#   Prediction: 16 warps ≥ 1 point of a copy above the default, enough to lead.
# compiled-code (issue 29): where compiled_op's host µs over torch_compile's go (77.8 against 51.9 in static-user/),
#   now that inductor's static launcher takes our kernel and gained nothing: the two graphs' generated code
#   (TORCH_LOGS=output_code) and the twenty-ninth session's compiled-profile.py (cProfile, 2000 calls) with the
#   static launcher on. There, compiled_op's call ran two Tensor.view a call, 7 µs each under the profiler
#   (in-graph/profile-1.txt), torch_compile's none. Prediction: those views are in compiled_op's graph code (our op's
#   2-D rows and y back to x's shape), and they, with Triton's launcher's Python, make most of the difference.
# grid RUN_ID ARGS... (issue 26): one default grid beside torch.compile, for the forms whose grid was never run:
#   `grid scaled-log-h200 --op scaled --log` (the scaled log's cluster cells only, in scaled-log-cluster-h200), and
#   the log's backward of each form, `grid causal-log-backward-h200 --op causal --log --pass backward` (and
#   scaled, scaled-masked, biased). 100–130 s each. Prediction: scaled --log ≥ 92 at 32 and ahead of torch.compile
#   at 32 (its softmax's figures); the log backwards as their softmax's backward (≥ 90 at all but fp32 512×262144).
# parts PART ...: the GPU parts of the suite named after it (kernels, cluster and backward after LOG_PLAIN_LOADS,
#   LOG_REGISTERS and EXP_FTZ: fused's kernel names masking.exp2_ftz, which inductor copies into a compiled graph's
#   code; PART_TIMEOUT ≥ 300).
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s32
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  log-evict)  # next.sh log-evict DTYPE OP N
    name=log-evict-$2-$1-$3
    timeout 300 python3 scripts/eviction.py $OUT/$name.csv $1 rounds=5 op=$2 log compile $3 > $OUT/$name.txt 2>&1
    echo "$name rc=$? at $SECONDS s"; tail -8 $OUT/$name.txt ;;
  forms-log-cells)
    timeout 250 python3 -m softmax_bench sweep --out $OUT/runs --run-id causal-log-cells-h200 --op causal --log \
      --shape 2048x151936 --shape 4096x128256 --variant auto --variant torch_compile > $OUT/causal-log-cells.txt 2>&1
    echo "causal-log-cells rc=$? at $SECONDS s"
    timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id biased-log-cells-h200 --op biased --log \
      --shape 4096x128256 --shape 8192x50257 --variant auto --variant torch_compile > $OUT/biased-log-cells.txt 2>&1
    echo "biased-log-cells rc=$? at $SECONDS s"; tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  fused-causal)
    WARPS=2,4,8,16 timeout 400 python3 scripts/fused-configs.py $OUT/fused-causal.csv bf16 causal 4096x4000 \
      16384x8192 > $OUT/fused-causal.txt 2>&1
    echo "fused-causal rc=$? at $SECONDS s"; tail -12 $OUT/fused-causal.txt ;;
  exp-ftz)
    timeout 300 python3 evidence/experiments/2026-12-04-session32/ab-exp-ftz.py $OUT/exp-ftz.csv > $OUT/exp-ftz.txt 2>&1
    echo "exp-ftz rc=$? at $SECONDS s"; cat $OUT/exp-ftz.txt
    GPU_TEST_WORKERS=4 timeout 200 bash scripts/gpu-tests.sh kernels -k exponentials -rfE > $OUT/tests-exp-ftz.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-exp-ftz.txt)" ;;
  fused-log)
    timeout 300 python3 scripts/fused-configs.py $OUT/fused-log-$2-$1-$3.csv $1 $2 log $3 > $OUT/fused-log-$2-$1-$3.txt 2>&1
    echo "fused-log rc=$? at $SECONDS s"; cat $OUT/fused-log-$2-$1-$3.txt ;;
  compiled-code)
    TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS=1 TORCH_LOGS=output_code timeout 200 python3 \
      evidence/experiments/2026-12-04-session29/compiled-profile.py > $OUT/compiled-code.txt 2>&1
    echo "compiled-code rc=$? at $SECONDS s"; grep -n "def call\|\.view(\|reinterpret_tensor\|empty_strided" \
      $OUT/compiled-code.txt | head -30 ;;
  grid)
    id=$1; shift
    timeout 280 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id --preset default "$@" --variant auto \
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
