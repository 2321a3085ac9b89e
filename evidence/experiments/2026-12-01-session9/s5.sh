#!/usr/bin/env bash
# issue 26: one fused op over the default grid, auto beside torch.compile and eager (Triton 3.8)
export PYTHONUNBUFFERED=1
op=$1; id=$2; shift 2
start=$SECONDS
timeout ${SWEEP_TIMEOUT:-540} python3 -m softmax_bench sweep --preset default --op $op --variant auto \
  --variant torch_compile "$@" --out $OUT/runs --run-id $id > $OUT/$id.txt 2>&1
echo "sweep $id: rc=$? $((SECONDS - start)) s"
tail -5 $OUT/$id.txt
