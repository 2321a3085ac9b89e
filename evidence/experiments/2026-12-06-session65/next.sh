#!/usr/bin/env bash
# The sixty-fifth session's device step: bash evidence/experiments/2026-12-06-session65/next.sh
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# On an H200 only (the H100 has these figures): first session 64's smem (~40 s; its torch.add of three tensors is the
# biased floor's question too); then session 63's `last` in what LEFT_S leaves (fp32 causal 512x262144 and its log
# beside torch_compile, evict, bias-evict, bw-configs, the biased floor, each only if it fits).
# pipelined (any card, ~1.5 min): pipelined-row-probe.py time (FORMS, default all three); not in the H200 step: on
# the H100 it lost 15-20 points to auto (perf-notes, sixty-fifth session).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
pipelined() {
  . .ab/device-setup.sh > /dev/null
  timeout ${1:-150} python3 evidence/experiments/2026-12-06-session65/pipelined-row-probe.py time ${FORMS:-} \
    > $OUT/pipelined-time.txt 2>&1
  echo "pipelined-row-probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/pipelined-time.txt | tail -24
}
[[ ${1:-} == pipelined ]] && { pipelined; exit 0; }
grep -qi h200 <<< "$card" || { echo "not an H200, nothing run"; exit 0; }
WARPS="4 8 16" bash evidence/experiments/2026-12-06-session64/next.sh smem
LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-06-session63/next.sh last
