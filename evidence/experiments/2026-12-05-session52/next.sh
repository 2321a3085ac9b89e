#!/usr/bin/env bash
# The fifty-second session's device steps: bash evidence/experiments/2026-12-05-session52/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. Every other step passes to the fifty-first session's next.sh
# (static-tests, static-bar, static-step, causal-backward-grids) and through it to the earlier ones' (parts, biased,
# host-bar, configs, grids, hard-cells, …).
# Ran on an H100 this session (docs/perf-notes.md, fifty-second session): `parts backward`, `heaviest-first` with
# CELLS="4096x4000 4000 8192", `step-parts` (three processes), `causal-backward-grids` (the log's stopped at 56 of 64).
# Pass COMMIT as a literal SHA: the device copy's .git is stale.
# step-parts (issue 29, item 3): step-parts.py, the compiled training step beside the same with its `* 4.0` given to
#   our log_softmax as its scale, and each layer alone, ours and torch's. Prediction (docs/perf-notes.md,
#   fifty-second session).
# heaviest-first (issue 26): ab-heaviest-first-backward.py, fused's causal backward run last row first against row
#   order (bit for bit), % of its own roofline; CELLS="4096x4000 8192 …" for fewer cells. Prediction (docs/perf-notes.md, fifty-second session).
set -u
if [[ $1 == heaviest-first ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 400 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session52/ab-heaviest-first-backward.py \
    $OUT/ab-heaviest-first-backward.csv ${CELLS:-} > $OUT/ab-heaviest-first-backward.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-heaviest-first-backward.txt | tail -60
  exit 0
fi
case $1 in step-parts) ;; *) exec bash evidence/experiments/2026-12-05-session51/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
for round in $(seq ${ROUNDS:-1}); do  # ROUNDS: processes, one by default
  timeout 150 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session52/step-parts.py \
    > $OUT/step-parts-$round.txt 2>&1; echo "step-parts rc=$? at $SECONDS s"; grep -E "host_us|H100|H200|Error" \
    $OUT/step-parts-$round.txt
done
