#!/usr/bin/env bash
# The fifty-fourth session's device steps: bash evidence/experiments/2026-12-06-session54/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-third session's next.sh and on down.
# Ran on an H200 this session (docs/perf-notes.md, fifty-fourth session): bar-cells (its runs renamed -s54),
#   half-tiles with CELLS="4096x4000 8192 16384", a causal sweep with the halvings, host-bar, floor2, bisect, and
#   tests/test_fusion.py -k causal (before the test's fix: run fusion-tests below).
# fusion-tests: tests/test_fusion.py's causal tests on the GPU, 8 workers.
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
if [[ $1 == fusion-tests ]]; then
  . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl
  timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py -k causal -n 8 -rfE > $OUT/tests-fusion.txt 2>&1
  echo "fusion tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-fusion.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-fusion.txt
  exit 0
fi
exec bash evidence/experiments/2026-12-06-session53/next.sh "$@"
