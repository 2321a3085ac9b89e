#!/usr/bin/env bash
# The thirty-first session's device steps:
#   bash evidence/experiments/2026-12-04-session31/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. The A/B that led here ran as the thirtieth session's
# `next.sh evict-ab DTYPE OP` (outputs in evict-ab/).
# sweeps (issue 26): the default grid of each form with the forward loads evict_last (kernels.FORWARD_EVICT, now the
#   default; plain at fused.CAUSAL_EVICT_FROM's and cluster.PLAIN_LOADS' cells), auto beside torch.compile.
#   Prediction, from evict-ab/: auto 1–4 points of its roofline higher than the last committed runs at N ≥ 4096
#   (softmax-auto-h200-h, scaled-h200-c, scaled-masked-h200-g, causal-h200-m, biased-h200-b), fp32 scaled 8192 and
#   16384 ≥ torch.compile; narrower rows and PLAIN_LOADS' cells within the runs' noise.
# forms-log (next session, issue 26): the log_softmax of each fused form over the default grid beside torch.compile,
#   now that its forward loads evict_last too (PLAIN_LOADS keyed by form, unmeasured for the log). Prediction: 1–4
#   points of its roofline above causal-log-h200-d, scaled-masked-log-h200-c, biased-log-h200-c; ≥ torch.compile at
#   every cell.
# causal-floor (next session, issue 26): causal-floor.py, a kernel that moves exactly a causal cell's modelled bytes
#   and computes nothing, beside the copy and fused's causal kernel (its prediction in its docstring): is 92 % of the
#   roofline reachable at bf16 4096×4000 and 16384×8192?
# configs-evict DTYPE OP N (next session, issue 26; fp32 causal 262144, bf16 causal 151936, bf16 biased 262144, a
#   call each): scripts/cluster-configs.py with EVICT=both (every configuration with
#   evict_last and with plain loads) at the cluster cells still under 92 % of their roofline: causal fp32 262144
#   (16 × 8 plain: 91.0), causal bf16 151936 (8 × 8 plain: 90.8), biased bf16 262144 (79.6). Compiled for sm_90
#   here: causal bf16 151936 in 8 × 8 with evict_last takes 113 registers uncapped and 80 capped at 80 with no spill
#   (the script tries that cap: occupancy_cap); causal fp32 262144 in 16 × 4 takes 246–250 either way (one CTA an
#   SM), in 16 × 8 125. Prediction: causal bf16 151936 8 × 8 evict_last capped at 80 ≥ 92 (plain 90.8, evict_last
#   uncapped 76.1); causal fp32 262144 and biased bf16 262144 no configuration ≥ 92 (the twenty-second and
#   twenty-eighth sessions searched them with plain loads).
# The thirtieth session's `next.sh static-user` (issue 29) is still to run.
# parts PART ...: the GPU parts of the suite named after it.
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s31
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
sweep() {  # sweep RUN_ID TIMEOUT ARGS...: one run into $OUT/runs, its table into $OUT/RUN_ID.txt
  local id=$1 limit=$2; shift 2
  timeout $limit python3 -m softmax_bench sweep --out $OUT/runs --run-id $id "$@" > $OUT/$id.txt 2>&1
  echo "sweep $id rc=$? at $SECONDS s"
}
case $step in
  sweeps)
    sweep softmax-auto-h200-i 120 --preset default --variant auto
    sweep scaled-h200-d 200 --preset default --op scaled --variant auto --variant torch_compile
    sweep scaled-masked-h200-h 200 --preset default --op scaled-masked --variant auto --variant torch_compile
    sweep causal-h200-n 200 --preset default --op causal --variant auto --variant torch_compile
    sweep biased-h200-c 200 --preset default --op biased --variant auto --variant torch_compile
    tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs ;;  # the device returns at most 8 files
  forms-log)
    sweep causal-log-h200-e 200 --preset default --op causal --log --variant auto --variant torch_compile
    sweep scaled-masked-log-h200-d 200 --preset default --op scaled-masked --log --variant auto --variant torch_compile
    sweep biased-log-h200-d 200 --preset default --op biased --log --variant auto --variant torch_compile
    tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  configs-evict)  # next.sh configs-evict DTYPE OP N: one cell a call (each takes 2–4 min: every configuration twice)
    name=configs-$2-$1-$3
    EVICT=both timeout 400 python3 scripts/cluster-configs.py $OUT/$name.csv $1 $2 $3 > $OUT/$name.txt 2>&1
    echo "$name rc=$? at $SECONDS s"; grep BEST $OUT/$name.txt ;;
  causal-floor)
    timeout 200 python3 evidence/experiments/2026-12-04-session31/causal-floor.py > $OUT/causal-floor.txt 2>&1
    echo "causal-floor rc=$? at $SECONDS s"; cat $OUT/causal-floor.txt ;;
  parts)
    for part in "$@"; do
      GPU_TEST_WORKERS=16 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
        > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
