#!/usr/bin/env bash
# The thirtieth session's device steps:
#   bash evidence/experiments/2026-12-04-session30/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# narrow-sweep (issue 26): fused's fp32 rows of 32–1024 in programs of 4 KB (fused.MIN_BYTES_PER_PROGRAM; were
#   8 KB), swept for each fused form with auto beside torch.compile. Prediction, from the 4 KB tiles of
#   narrow-configs.py (session29's script, run this session: narrow/): auto ≥ torch_compile at each of these cells.
#   Outcome: narrow/ and narrow-sweep/ (docs/perf-notes.md, thirtieth session).
# wide (issue 26): fused's fp32 rows of 8192 and 16384 in 1–2 rows and 4–32 warps beside torch.compile
#   (wide-fp32-configs.py: its prediction in its docstring).
# inductor-code: torch.compile's kernels for fp32 rows of 8192, scaled and plain (inductor-code.py).
# wide-variants: sweeps of fp32 rows of 8192 and 16384 with fused, two_pass, online and torch_compile, scaled
#   and plain. Prediction: two_pass (two reads, the second from L2) within 1 point of torch.compile's looped
#   three-read kernel (inductor-code/) on the scaled rows, ahead of fused.
#   Outcome: two_pass 67–79, far behind (docs/perf-notes.md).
# three-pass [WARPS ...]: three-pass.py (its predictions in its docstring); first run without WARPS, then 16 32.
# narrow-bf16: session29's narrow-configs.py on bf16 rows of 128, 512 and 1024: are programs of 2 KB faster than
#   launch_config's 4 KB there too? No prediction.
# evict-ab DTYPE OP (next session, first): scripts/eviction.py's A/B of the forward kernels' loads, plain and
#   evict_last, with torch.compile in the same rounds (fp32 scaled first: the cells torch.compile leads).
#   Prediction: evict_last 2–4 points above plain at widths ≥ 4096 in fused and the cluster; fp32 scaled 8192 and
#   16384 at or above torch.compile with it. bf16 262144 (plain, scaled) spills 62 bytes with evict_last under its cap
#   of 96 (evict-registers/): the A/B prints each configuration's spills.
# evict OP [evict_last] (next session, if evict-ab says evict_last): OP's default grid with the forward loads plain, then evict_last
#   (SOFTMAX_BENCH_FORWARD_EVICT), beside torch.compile, whose forward loads evict_last (inductor-code/).
#   Prediction: evict_last +2–4 points of roofline at widths ≥ 4096 (the fifth session's fused 3.7–4.5 at 4096 and
#   8192); scaled fp32 8192 and 16384 ≥ torch.compile; narrow widths unchanged.
# static-user (next session, issue 29): host-cost's compiled rows with inductor's static launcher for user kernels
#   off, then on and strict (a refusal raises), compiled in this process (one compile thread: the setting reaches
#   the decision) with inductor's log. The twenty-ninth session's try moved nothing and did not show whether it
#   took our kernel. Prediction: it takes it; compiled_op's host µs 5–10 lower (its profile: Triton's launcher
#   ~2× the static launcher's time a call).
# parts: the GPU parts of the suite named after it.
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s30
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  narrow-sweep)
    shapes=(--shape 4194304x32 --shape 1048576x128 --shape 262144x512 --shape 131072x1024)
    for op in "$@"; do
      timeout 200 python3 -m softmax_bench sweep "${shapes[@]}" --dtype fp32 --op $op --variant auto --variant torch_compile \
        --out $OUT/runs --run-id narrow-fp32-$op > $OUT/sweep-$op.txt 2>&1
      echo "sweep $op rc=$? at $SECONDS s"
    done
    tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs ;;  # the device returns at most 8 files
  wide)  # fused's fp32 rows of 8192 and 16384 in other tiles, beside torch.compile
    timeout 200 python3 evidence/experiments/2026-12-04-session30/wide-fp32-configs.py $OUT/wide-fp32-configs.csv \
      > $OUT/wide-fp32-configs.txt 2>&1
    echo "wide-fp32-configs rc=$? at $SECONDS s"; grep "median\|spilled" $OUT/wide-fp32-configs.txt ;;
  inductor-code)  # the kernels torch.compile writes for fp32 rows of 8192, scaled and plain
    TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-fresh TORCH_LOGS=output_code timeout 120 python3 \
      evidence/experiments/2026-12-04-session30/inductor-code.py > $OUT/inductor-code.txt 2>&1
    echo "inductor-code rc=$? at $SECONDS s"; grep -n "def triton\|R0_BLOCK\|XBLOCK\|num_warps\|for r0" $OUT/inductor-code.txt | head -40 ;;
  wide-variants)  # fp32 rows of 8192 and 16384: our looped variants beside fused and torch.compile's looped kernel
    for op in scaled softmax; do
      timeout 150 python3 -m softmax_bench sweep --shape 16384x8192 --shape 8192x16384 --dtype fp32 --op $op \
        --variant fused --variant two_pass --variant online --variant torch_compile --out $OUT/runs \
        --run-id wide-fp32-$op > $OUT/sweep-wide-$op.txt 2>&1
      echo "sweep $op rc=$? at $SECONDS s"; grep -B2 -A12 "^wide-fp32" $OUT/sweep-wide-$op.txt
    done
    tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  three-pass)  # inductor's three-read kernel for fp32 rows of 8192 and 16384, written plainly, in several tiles
    timeout 280 python3 evidence/experiments/2026-12-04-session30/three-pass.py $OUT/three-pass.csv "$@" \
      > $OUT/three-pass.txt 2>&1
    echo "three-pass rc=$? at $SECONDS s"; grep "median\|WRONG" $OUT/three-pass.txt ;;
  narrow-bf16)  # 16-bit rows of 128–1024 in other tiles beside torch.compile (session29's narrow-configs.py)
    NARROW_DTYPE=bfloat16 timeout 200 python3 evidence/experiments/2026-12-04-session29/narrow-configs.py \
      $OUT/narrow-bf16.csv 512 128 1024 > $OUT/narrow-bf16.txt 2>&1
    echo "narrow-bf16 rc=$? at $SECONDS s"; grep "median" $OUT/narrow-bf16.txt | grep -v "w16\|w32" ;;
  evict-ab)  # next session (issue 26): next.sh evict-ab DTYPE OP: the forward kernels plain and evict_last beside
    # torch.compile, in rounds, each call on the next of three copies of x (scripts/eviction.py)
    timeout 500 python3 scripts/eviction.py $OUT/evict-ab-$1-$2.csv $1 rounds=3 op=$2 compile \
      1024 4096 8192 16384 32768 65536 151936 262144 > $OUT/evict-ab-$1-$2.txt 2>&1
    echo "evict-ab $1 $2 rc=$? at $SECONDS s"; grep "median" $OUT/evict-ab-$1-$2.txt ;;
  evict)  # next session (issue 26): next.sh evict OP [evict_last]: OP's default grid, auto beside torch.compile, with
    # the forward kernels' loads plain or evict_last (kernels.FORWARD_EVICT); then what evict_last leaves the next
    # kernel (scripts/l2-after.py)
    op=$1 setting=${2:-}
    SOFTMAX_BENCH_FORWARD_EVICT=$setting timeout 420 python3 -m softmax_bench sweep --preset default --op $op \
      --variant auto --variant torch_compile --out $OUT/runs --run-id evict-${setting:-plain}-$op \
      > $OUT/sweep-evict-${setting:-plain}-$op.txt 2>&1
    echo "sweep $op ${setting:-plain} rc=$? at $SECONDS s"; grep -A40 "^evict-" $OUT/sweep-evict-${setting:-plain}-$op.txt | head -60
    tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
    if [[ -n $setting ]]; then timeout 120 python3 scripts/l2-after.py > $OUT/l2-after.txt 2>&1; echo "l2-after rc=$?"; fi ;;
  static-user)  # next session (issue 29): inductor's static launcher for our in-graph kernel, made sure of
    for strict in 0 1; do
      TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-static-$strict TORCHINDUCTOR_COMPILE_THREADS=1 \
      TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS=$strict TORCHINDUCTOR_STRICT_STATIC_CUDA_LAUNCHER=$strict \
      TORCH_LOGS=inductor timeout 150 python3 scripts/host-cost.py $OUT/host-static-$strict.csv --rounds 5 \
        --op softmax --op scaled-masked --row compiled_op --row torch_compile > $OUT/host-static-$strict.txt 2>&1
      echo "host-cost static=$strict rc=$? at $SECONDS s"; grep "compiled_op \|torch_compile \|torch\.\|StaticallyLaunched\|static" $OUT/host-static-$strict.txt | cut -c1-160 | head -12
    done ;;
  parts)
    for part in "$@"; do
      GPU_TEST_WORKERS=16 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
        > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
