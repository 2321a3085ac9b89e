#!/usr/bin/env bash
# The fifty-eighth session's device steps: bash evidence/experiments/2026-12-06-session58/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the bundle now keeps cuobjdump: 180 KB); COMMIT=SHA literal.
# Every other step passes to the fifty-seventh session's next.sh and on down.
# first: on an H200 the bar cells (session 57's roofline); on another card the suite's second half of files with
#   names, then again the first half's failures of this session's first call (cuobjdump and two OOMs).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
here=evidence/experiments/2026-12-06-session58
case $1 in
  first)
    if grep -qi h200 <<< "$card"; then exec bash evidence/experiments/2026-12-06-session57/next.sh roofline; fi
    HALF=2 SUITE_S=${SUITE_S:-420} bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite
    . .ab/device-setup.sh > /dev/null
    timeout 120 python3 -m pytest -v -p no:cacheprovider -n 8 -rfE $(grep -v '^#' $here/half1-failed.txt) \
      > $OUT/half1-again.txt 2>&1
    echo "half 1's failures again rc=$? at $SECONDS s: $(tail -1 $OUT/half1-again.txt)"
    grep -E " (FAILED|ERROR) " $OUT/half1-again.txt | sed 's/.*\(FAILED\|ERROR\) //' | sort -u | cut -c1-220 ;;
  *) exec bash evidence/experiments/2026-12-06-session57/next.sh "$@" ;;
esac
