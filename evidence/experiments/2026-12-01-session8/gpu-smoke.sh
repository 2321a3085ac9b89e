#!/usr/bin/env bash
# a GPU sweep through the changed paths: auto and eager at a narrow and a vocabulary row, bf16 and fp16; show md
export PYTHONUNBUFFERED=1
start=$SECONDS
timeout 80 python3 -m softmax_bench sweep --shape 4096x4000 --shape 2048x151936 --shape 8192x24576 --dtype bf16 --dtype fp16 \
  --variant auto --variant eager --variant cluster --out /root/r --run-id gpu-smoke > /root/s.txt 2>&1
echo "sweep rc=$? $((SECONDS - start)) s"; tail -3 /root/s.txt
python3 -m softmax_bench show gpu-smoke --out /root/r --format md
python3 -m softmax_bench explain --shape 2048x151936 --dtype fp16 --run /root/r/gpu-smoke | tail -1
timeout 60 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_explain.py tests/test_auto_table.py tests/test_dispatch.py 2>&1 | tail -3
