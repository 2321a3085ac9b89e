#!/usr/bin/env bash
# The forty-sixth session's device steps: bash evidence/experiments/2026-12-05-session46/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step as the forty-fourth
# session's next.sh has it (parts, ce, configs, occupancy, compiled-static, host, grids, hard-cells, scaled-tiles).
# biased (issue 26): cluster.BIASED's new bf16 262144 entry (16 CTAs of 16 warps capped at 64 registers, d5143b9)
#   through auto: test_bias and test_cluster on the GPU, then the cell bf16 512x262144 and its log beside cluster and
#   torch.compile. Prediction (perf-notes, forty-sixth session): on the H200 ≥ 85 % of its roofline (the rule's 79.6
#   and 80.0); on an H100 ~99 (configs-bf16-biased-262144: 99.3, its log 99.7).
# cxx-more (issue 29): host-cost's rows with SOFTMAX_BENCH_CXX_REPLAYED off and on, three processes a setting in turn,
#   and beside each a process of torch's rows alone under the same setting (two processes a setting gave
#   torch.softmax itself ~3 µs faster in both "on" processes: perf-notes, forty-sixth session). If torch's rows
#   alone differ by setting too, it is the host, not the extension; if only beside ours, our calls slow torch's.
# biased-log-fused (issue 26): fused-configs.py on the one biased cell where torch.compile leads, the log_softmax of
#   fp32 16384x8192 (H200 by 0.6, H100 101.2 against 102.8: ahead-biased-fp32-16384x8192-log-h100): fused's warps a
#   program, two rows a program, and each capped for one more program an SM, beside a copy. Prediction: a
#   configuration ≥ 1 point above the default, else the default is the best fused does and the lead is not its tile.
# parts PART...: as the forty-fourth session's, with 8 test workers on a GPU of under 100 GB (an H100's 80 GB ran
#   out with 16: test_a_dependent_finish_gives_the_same_bits, forty-sixth session).
set -u
# The device tool brings back at most 8 files from $OUT (its README): past that, every file is packed into
# outputs.tgz (the console keeps the lines each step prints), so that none is left out.
pack() {
  local files; files=$(find "$OUT" -maxdepth 1 -type f | wc -l)
  if (( files > 8 )); then
    tar czf /tmp/outputs.tgz -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv /tmp/outputs.tgz "$OUT/"
  fi
}
trap pack EXIT
if [[ $1 == parts ]] && (( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1) < 100000 ))
then  # the earlier scripts' parts step takes GPU_TEST_WORKERS=16 as written: run gpu-tests.sh here instead
  shift; . .ab/device-setup.sh > /dev/null
  python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
  for part in "$@"; do
    GPU_TEST_WORKERS=8 timeout ${PART_TIMEOUT:-280} bash scripts/gpu-tests.sh $part --durations=5 -rfE \
      > $OUT/tests-$part.txt 2>&1
    echo "$part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-$part.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-$part.txt
  done
  exit 0
fi
case $1 in biased|cxx-more|biased-log-fused) ;; *) bash evidence/experiments/2026-12-05-session44/next.sh "$@"; exit ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s46
case $1 in
  biased)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_bias.py tests/test_cluster.py -rfE \
      > $OUT/tests-biased.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-biased.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-biased.txt
    for log in "" --log; do
      id=biased-bf16-512x262144${log:+-log}
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 90 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op biased --dtype bf16 --shape 512x262144 $log --variant auto --variant cluster \
        --variant torch_compile > $OUT/$id.txt 2>&1
      echo "$id rc=$? at $SECONDS s"; grep -A4 "×N" $OUT/$id.txt
    done
    tar czf $OUT/runs-biased.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  biased-log-fused)
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 300 python3 scripts/fused-configs.py $OUT/fused-biased-log.csv fp32 \
      biased log 16384x8192 > $OUT/fused-biased-log.txt 2>&1
    echo "fused-configs rc=$? at $SECONDS s"; tail -30 $OUT/fused-biased-log.txt ;;
  cxx-more)
    rows=(--row "replayed launch" --row "softmax_bench auto")
    for take in a b c; do
      for cxx in 0 1; do
        SOFTMAX_BENCH_CXX_REPLAYED=$cxx timeout 60 python3 scripts/host-cost.py $OUT/host-cxx$cxx$take.csv \
          --op softmax --op scaled-masked --rounds 5 "${rows[@]}" > $OUT/host-cxx$cxx$take.txt 2>&1
        echo "cxx=$cxx ($take) rc=$?"; grep -E "^torch.softmax  |^softmax_bench auto  " $OUT/host-cxx$cxx$take.txt
        SOFTMAX_BENCH_CXX_REPLAYED=$cxx timeout 40 python3 scripts/host-cost.py $OUT/host-torch$cxx$take.csv \
          --op softmax --rounds 5 --row torch.softmax > $OUT/host-torch$cxx$take.txt 2>&1
        echo "torch alone, cxx=$cxx ($take) rc=$?"; grep -E "^torch.softmax  " $OUT/host-torch$cxx$take.txt
      done
    done ;;
esac
