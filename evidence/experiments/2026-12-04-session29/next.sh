#!/usr/bin/env bash
# The twenty-ninth session's device steps:
#   bash evidence/experiments/2026-12-04-session29/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# in-graph (issue 29): the compiled path with fused's kernels in inductor's graph (SOFTMAX_BENCH_IN_GRAPH=1) and
#   the kernels' writes declared (library.KERNEL_WRITES: no copy of x before each launch), against the opaque op:
#   host-cost's compiled rows, a compiled training step's host cost (step-host.py), then tests/test_compile.py
#   with it on. Prediction: compiled_op's host µs from ~78 (in-graph, every input copied) and ~100 (opaque) to
#   within 10 % of torch_compile's (~35); the step at ≤ torch's compiled step.
# int-pointers (next session): host-cost and test_replay with replay.INT_POINTERS off and on.
# opaque-ops (next session): compiled calls at cluster widths, whose op is opaque (library.opaque_op).
# narrow (next session): fused's fp32 rows of 32–16384 in other tiles (one warp among them) beside torch.compile.
# parts: the GPU parts of the suite named after it.
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
here=evidence/experiments/2026-12-04-session29
case $step in
  in-graph)  # each setting in an inductor cache of its own: the AOTAutograd cache's key holds neither IN_GRAPH
    # nor our kernels (library.triton_op lists none), so a graph cached with one setting served the other (the
    # first try's IN_GRAPH=1 rows ran the opaque op: in-graph-first-try/)
    for g in 0 1; do
      export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-in-graph-$g SOFTMAX_BENCH_IN_GRAPH=$g
      timeout 150 python3 scripts/host-cost.py $OUT/host-ingraph-$g.csv --rounds 5 \
        --op softmax --op scaled-masked --op log-softmax --row compiled_op --row torch_compile \
        --row "softmax_bench auto" > $OUT/host-ingraph-$g.txt 2>&1
      echo "host-cost IN_GRAPH=$g rc=$? at $SECONDS s"
      timeout 100 python3 $here/step-host.py > $OUT/step-host-$g.txt 2>&1
      echo "step-host IN_GRAPH=$g rc=$? at $SECONDS s"; tail -3 $OUT/step-host-$g.txt
      timeout 150 python3 $here/compiled-profile.py > $OUT/profile-$g.txt 2>&1
      echo "profile IN_GRAPH=$g rc=$? at $SECONDS s"
    done
    unset SOFTMAX_BENCH_IN_GRAPH
    grep -h "compiled_op\|torch_compile\|assuming every" $OUT/host-ingraph-*.txt | cut -c1-150
    grep -h "opaque\|fused_rows" $OUT/profile-1.txt | head -5
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-tests
    SOFTMAX_BENCH_IN_GRAPH=1 timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_compile.py -rfExX \
      > $OUT/tests-compile-in-graph.txt 2>&1
    echo "test_compile IN_GRAPH=1 rc=$? at $SECONDS s: $(tail -1 $OUT/tests-compile-in-graph.txt)"
    grep -E "^(FAILED|ERROR|XPASS)" $OUT/tests-compile-in-graph.txt ;;
  final)  # IN_GRAPH on by default, compiled_op's views traced: host-cost's compiled rows, then the GPU parts
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-final
    timeout 100 python3 scripts/host-cost.py $OUT/host-final.csv --rounds 5 --op softmax --op scaled-masked \
      --op log-softmax --row compiled_op --row torch_compile --row "softmax_bench auto" > $OUT/host-final.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; grep "compiled_op\|torch_compile\|torch\." $OUT/host-final.txt | cut -c1-80
    for part in backward sweeps; do
      GPU_TEST_WORKERS=16 timeout 240 bash scripts/gpu-tests.sh $part --durations=5 -rfE > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  last)  # inductor's own launcher for our kernel in the graph (an inductor setting, off by default), then the sweep
    # tests with compiled_op as a peer (the sweeps part ran out of its time in `final`)
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-static TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS=1
    timeout 80 python3 scripts/host-cost.py $OUT/host-static.csv --rounds 5 --op softmax --op scaled-masked \
      --row compiled_op --row torch_compile > $OUT/host-static.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; grep "compiled_op\|torch_compile\|torch\." $OUT/host-static.txt | cut -c1-80
    unset TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_sweep_passes.py -rfE > $OUT/tests-sweep-passes.txt 2>&1
    echo "test_sweep_passes rc=$? at $SECONDS s: $(tail -1 $OUT/tests-sweep-passes.txt)"
    grep -E "^(FAILED|ERROR)" $OUT/tests-sweep-passes.txt ;;
  narrow)  # for the next session (issue 26): fp32 rows fused holds in other tiles, beside torch.compile
    timeout 500 python3 $here/narrow-configs.py $OUT/narrow-configs.csv > $OUT/narrow-configs.txt 2>&1
    echo "narrow-configs rc=$? at $SECONDS s"; grep "median" $OUT/narrow-configs.txt | head -80 ;;
  int-pointers)  # for the next session (issue 29): a replayed launch given addresses (replay.INT_POINTERS)
    for g in 0 1; do
      SOFTMAX_BENCH_INT_POINTERS=$g timeout 100 python3 scripts/host-cost.py $OUT/host-int-pointers-$g.csv --rounds 5 \
        --op softmax --op scaled-masked --op log-softmax --row "softmax_bench auto" --row "softmax_bench fused" \
        --row "replayed launch" --row "bare fused" > $OUT/host-int-pointers-$g.txt 2>&1
      echo "host-cost INT_POINTERS=$g rc=$? at $SECONDS s"; grep "softmax_bench\|replayed\|torch\." $OUT/host-int-pointers-$g.txt | cut -c1-80
    done
    SOFTMAX_BENCH_INT_POINTERS=1 timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_replay.py -rfE \
      > $OUT/tests-replay-int-pointers.txt 2>&1
    echo "test_replay INT_POINTERS=1 rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay-int-pointers.txt)" ;;
  opaque-ops)  # for the next session (issue 29): compiled calls at a cluster width (the opaque op, now a Library op)
    for shape in 2048x65536 512x262144; do
      TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-opaque timeout 100 python3 scripts/host-cost.py $OUT/host-opaque-$shape.csv \
        --rounds 5 --shape $shape --op softmax --op log-softmax --row compiled_op --row torch_compile \
        --row "softmax_bench auto" > $OUT/host-opaque-$shape.txt 2>&1
      echo "host-cost $shape rc=$? at $SECONDS s"; grep "compiled_op\|torch_compile\|torch\." $OUT/host-opaque-$shape.txt | cut -c1-80
    done ;;
  parts)
    for part in "$@"; do
      GPU_TEST_WORKERS=16 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
        > $OUT/tests-$part.txt 2>&1
      echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
