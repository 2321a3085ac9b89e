#!/usr/bin/env bash
# The sixty-fourth session's device steps: bash evidence/experiments/2026-12-06-session64/next.sh [STEP]
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# last and short run nothing on any card but an H200: what they measure has H100 figures already (sixty-second to
# sixty-fourth sessions).
# last (default, ~6 min): the sixty-third session's `last` (fp32 causal 512x262144 and its log beside torch_compile,
#   then evict, bias-evict, bw-configs and the biased floor, each only if LEFT_S leaves time), keeping 150 s of LEFT_S
#   for smem after it.
# short (~2 min, for a budget's last minutes): the biased floor at bf16 512x262144 alone (session 56's question),
#   then fp32 causal 512x262144 and its log beside torch_compile (session 63's `last` with no time for the rest).
# smem (any card, ~2 min): smem-row-probe.py time: a biased bf16 slice of 16384 a CTA held in shared memory and read
#   in rolled loops, against the same slice held in registers; then whole rows of 262144 so held across 16-CTA
#   clusters (shared_cluster), biased bf16 and causal fp32, against the library's; beside a copy and torch.add.
#   WARPS (default "4 8 16"): the CTAs' warps tried.
set -u
s63=evidence/experiments/2026-12-06-session63
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
smem() {
  . .ab/device-setup.sh > /dev/null
  timeout ${1:-240} python3 evidence/experiments/2026-12-06-session64/smem-row-probe.py time 512x262144 ${WARPS:-} \
    > $OUT/smem-row-time.txt 2>&1
  echo "smem-row-probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/smem-row-time.txt | tail -12
}
[[ ${1:-last} == smem ]] && { smem; exit 0; }
grep -qi h200 <<< "$card" || { echo "not an H200, nothing run"; exit 0; }
case ${1:-last} in
  last)
    LEFT_S=$(( ${LEFT_S:-600} - 150 )) bash $s63/next.sh last
    (( SECONDS + 120 < ${LEFT_S:-600} )) && smem $(( ${LEFT_S:-600} - SECONDS - 5 )) ;;
  short)
    export PACKED=1  # this step packs $OUT, not session 63's
    pack() { (cd $OUT && tar czf all.tgz --exclude=all.tgz . && find . -mindepth 1 -not -name all.tgz -delete); }
    trap pack EXIT
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 80 python3 evidence/experiments/2026-12-06-session56/biased-floor.py 512x262144:bf16 \
      > $OUT/biased-floor-h200.txt 2>&1
    echo "biased-floor rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/biased-floor-h200.txt | tail -8
    LEFT_S=0 bash $s63/next.sh last ;;  # its fp32 causal sweeps alone: LEFT_S=0 leaves no time for the rest
esac
