#!/usr/bin/env bash
# final: auto over the wide rows (bf16, fp16, fp32) and the default grid; rounding + cluster tests; GPU parts
export PYTHONUNBUFFERED=1
for spec in "--config configs/wide-rows.toml --dtype bf16 --dtype fp16 --dtype fp32:wide-rows-auto-h200-g" "--preset default:softmax-auto-h200-g"; do
  start=$SECONDS
  timeout 90 python3 -m softmax_bench sweep ${spec%%:*} --variant auto --out /root/runs --run-id ${spec##*:} > /root/sweep.txt 2>&1
  echo "sweep ${spec##*:}: rc=$? $((SECONDS - start)) s"; tail -1 /root/sweep.txt
done
tar -czf $OUT/runs.tgz -C /root runs
start=$SECONDS
timeout 100 python3 -m pytest -q -p no:cacheprovider -n 12 tests/test_rounding.py tests/test_cluster.py > $OUT/rounding-cluster.txt 2>&1
echo "rounding+cluster: rc=$? $((SECONDS - start)) s: $(tail -1 $OUT/rounding-cluster.txt)"
GPU_TEST_WORKERS=16 DURATIONS=12 PART_TIMEOUT=125 EXTRA="--timeout=110" bash .ab/gpu2.sh t38 instrument
GPU_TEST_WORKERS=16 DURATIONS=12 PART_TIMEOUT=215 EXTRA="--timeout=200" bash .ab/gpu2.sh t38 sweeps
