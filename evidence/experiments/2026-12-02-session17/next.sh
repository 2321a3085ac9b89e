#!/usr/bin/env bash
# The seventeenth session's second machine start (its first ran ../2026-12-02-session16/next.sh fast, skip,
# fp32-causal, masked and ../2026-12-02-session14/next.sh t38-a: folders a-… to e-…).
#   bash evidence/experiments/2026-12-02-session17/next.sh compiled|sweeps   (device; carry
#   [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as ../2026-12-02-session14/next.sh prep makes it, less .ab/old)
# compiled (issue 29): the compiled path's GPU tests (the code inductor generates holds fused's kernel; rows
#   dynamic), then scripts/host-cost.py --op softmax (compiled_op beside torch_compile). Prediction: compiled_op's
#   host µs a call from ~100 to within 10 % of torch_compile's (~36).
# sweeps (issue 26): the default grid of scaled-masked and causal, auto beside torch.compile, with the switches the
#   first start decided (run ids OP-h200-f).
set -u
case $1 in
  compiled)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_compile.py -rfE \
      -k "compiled_call or forward_and_backward or cuda_graph or any_dim" > $OUT/t38-compile.txt 2>&1
    echo "compile tests rc=$?"; tail -15 $OUT/t38-compile.txt
    timeout 150 python3 scripts/host-cost.py $OUT/host-cost.csv --op softmax > $OUT/host-cost.txt 2>&1
    echo "host-cost rc=$?"; cat $OUT/host-cost.txt ;;
  sweeps)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    for op in causal scaled-masked; do
      timeout 250 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op $op --variant auto \
        --variant torch_compile --run-id $op-h200-f > $OUT/$op-h200-f.txt 2>&1
      echo "$op rc=$?"; tail -40 $OUT/$op-h200-f.txt
    done ;;
  *) echo "usage: next.sh compiled|sweeps" >&2; exit 2 ;;
esac
