#!/usr/bin/env bash
# The sixty-fifth session's device step: bash evidence/experiments/2026-12-06-session65/next.sh
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# On an H200 only (the H100 has these figures): first session 64's smem (~40 s; its torch.add of three tensors is the
# biased floor's question too); then session 63's `last` in what LEFT_S leaves less 130 s (fp32 causal 512x262144
# and its log beside torch_compile, evict, bias-evict, bw-configs, the biased floor, each only if it fits); then
# pipelined (below) in the rest.
# pipelined (any card, ~1.5 min): pipelined-row-probe.py time (FORMS, default all three).
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
# session 63's last packs $OUT when it exits: pipelined's output goes to $OUT/after, packed below
LEFT_S=$(( ${LEFT_S:-600} - SECONDS - 130 )) bash evidence/experiments/2026-12-06-session63/next.sh last
mkdir -p $OUT/after && OUT=$OUT/after pipelined $(( ${LEFT_S:-600} - SECONDS - 5 ))
