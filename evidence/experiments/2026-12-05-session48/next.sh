#!/usr/bin/env bash
# The forty-eighth session's device steps: bash evidence/experiments/2026-12-05-session48/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step as the forty-seventh
# session's next.sh has it (biased, parts, biased-warps, cxx-more, configs, host, grids, hard-cells, …).
# biased-rule (issue 26): fused's biased warps (min(32, a program's bytes / 512) for programs of 8 to 32 KB) beside
#   the other warps at fp32 2048 (not scanned before) and bf16 16384 (32 KB, not scanned), then auto and torch.compile
#   at the biased forms' fp32 and bf16 16384x8192 and 32768x4096, forward and log. Prediction: +0.4 to +1.4 points
#   of the roofline through auto where the warps changed; fp32 2048 ≥ 0.5 above 4 warps.
# host-bar (issue 29): host-cost.py's bar rows (auto and fused, compiled_op and torch_compile; softmax, scaled-masked,
#   log-softmax) with nothing set (replayed.cpp on by default since 4532252), in three processes, each read by
#   host-bar.py. Prediction (the forty-seventh session's one process, auto alone): the eager rows at 0.8–1.05× torch's;
#   compiled_op still 1.15–1.4× torch_compile (nothing in the compiled path changed).
set -u
if [[ $1 == host-bar ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  for p in a b c; do
    timeout 150 python3 scripts/host-cost.py $OUT/host-bar-$p.csv --op softmax --op scaled-masked --op log-softmax \
      --rounds 5 --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op --row torch_compile \
      > $OUT/host-bar-$p.txt 2>&1
    echo "host-cost $p rc=$? at $SECONDS s"; python3 scripts/host-bar.py $OUT/host-bar-$p.csv
  done
  # compiled_op's 8-10 µs over torch_compile are in C that cProfile does not see: which native profilers are here
  for tool in perf py-spy nsys; do echo "$tool: $(command -v $tool || echo absent)"; done
  exit 0
fi
# biased-evict (issue 26): scripts/eviction.py at the biased forms' fp32 8192 (32 warps now), x's loads plain and
#   evict_last, beside torch.compile in the same rounds, each call on the next of three copies. Question: is the
#   0.3 % torch.compile keeps at the biased log's fp32 16384x8192 (H100) the loads' policy?
if [[ $1 == biased-evict ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:-}:$PWD/scripts
  for log in "" log; do
    timeout 120 python3 scripts/eviction.py $OUT/evict-biased${log:+-log}.csv fp32 rounds=7 op=biased $log compile \
      8192 > $OUT/evict-biased${log:+-log}.txt 2>&1
    echo "biased $log rc=$? at $SECONDS s"; tail -12 $OUT/evict-biased${log:+-log}.txt
  done
  exit 0
fi
case $1 in biased-rule) ;; *) exec bash evidence/experiments/2026-12-05-session47/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:-}:$PWD/scripts
timeout 100 python3 scripts/fused-configs.py $OUT/fused-fp32-biased-2048.csv fp32 biased 65536x2048 \
  > $OUT/fused-fp32-biased-2048.txt 2>&1; echo "fp32 2048 rc=$? at $SECONDS s"; tail -14 $OUT/fused-fp32-biased-2048.txt
timeout 100 python3 scripts/fused-configs.py $OUT/fused-bf16-biased-16384.csv bf16 biased 8192x16384 \
  > $OUT/fused-bf16-biased-16384.txt 2>&1; echo "bf16 16384 rc=$? at $SECONDS s"; tail -14 $OUT/fused-bf16-biased-16384.txt
for log in "" --log; do
  id=biased-rule${log:+-log}
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 200 python3 -m softmax_bench sweep --out $OUT/runs \
    --run-id $id --op biased --dtype fp32 --dtype bf16 --shape 16384x8192 --shape 32768x4096 --shape 65536x2048 \
    $log --variant auto --variant torch_compile > $OUT/$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s"; grep -B2 -A12 "×N" $OUT/$id.txt | head -60
done
tar czf $OUT/runs-biased-rule.tgz -C $OUT runs && rm -rf $OUT/runs
