#!/usr/bin/env bash
# The fifty-fourth session's device steps: bash evidence/experiments/2026-12-06-session54/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-third session's next.sh and on down.
# half-tiles (issue 26): ab-half-tiles.py, fused's causal rows kept within their tile's first half computed in a
#   half- or quarter-width tile (fused.TILE_HALVINGS: 1, 2) against the whole tile, bit for bit, % of the op's own roofline; CELLS="4096x4000
#   …" for fewer cells. Prediction in docs/perf-notes.md (fifty-fourth session).
set -u
if [[ $1 == half-tiles ]]; then
  echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 330 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session54/ab-half-tiles.py \
    $OUT/ab-half-tiles.csv ${CELLS:-} > $OUT/ab-half-tiles.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-half-tiles.txt | tail -80
  exit 0
fi
exec bash evidence/experiments/2026-12-06-session53/next.sh "$@"
