#!/usr/bin/env bash
# The thirty-fourth session's device steps: bash evidence/experiments/2026-12-04-session34/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (as the thirty-third's next.sh, whose steps this one adds to).
# late-y CELL... (issue 26): the session-33 A/B (ab-lean-keep.py: as it was, LEAN_KEEP, LATE_Y, both) at the cells of
#   the scaled-masked log backward's grid under 92 % after LEAN_KEEP (scaled-masked-log-backward-h200-b). Prediction:
#   lean+late_y ≥ 5 points above lean at the fp32 cells (as at 128256 and 262144), no gain at bf16 1024×131072
#   (lean ran at 98–99 at 4096×128256, which compiles alike: a gap there is not the kernel's).
# mask-early (issue 26; the thirty-fifth session, first): the GPU tests of cluster_backward.MASK_EARLY (built off in
#   the thirty-fourth: the keep-mask read with y and dy and applied to dy before the exchange), then ab-lean-keep.py
#   with FORMS=early (LEAN_KEEP with and without MASK_EARLY, each with and without LATE_Y) at the masked log
#   backward's cluster cells. Prediction: lean+early ≥ 90 % of a copy and ≥ 5 points above lean where lean is under
#   90 (fp32 8192×50257 80.7, 2048×151936 86.3, 512×262144 74.1, bf16 1024×131072 84.5: the causal log, which reads
#   nothing after the exchange, ran 92–103 at those cells at the same registers), within ±1 where lean is ≥ 98;
#   every dx bit for bit against lean. If it holds: MASK_EARLY on where it gained (LATE_Y_CELLS' masked cells
#   measured again beside it), then `grid scaled-masked-log-backward-h200-d --op scaled-masked --log --pass
#   backward` (session 33's next.sh, COMMIT=SHA) and `parts cluster`.
# backward-tiles DTYPE OP MxN... (issue 26; if time is left): scripts/backward-tiles.py with op=OP log, fused's
#   backward tiles (rows a program × 4–32 warps, evict_last) beside torch.compile at the rows of 512 and 1024 where
#   torch.compile led the log forms' backward in the -c grids (bf16 causal 131072×1024 101.7 / 102.2, 262144×512
#   100.1 / 101.7; scaled-masked bf16 102.2 / 103.0 both, fp32 100.0 / 102.0 and 100.0 / 100.4). Prediction: a tile
#   of fewer rows or warps than the default (4 × 16 at 1024 bf16, 8 × 16 at 512) ≥ 1 point above it, level with
#   torch.compile.
# kept-causal (issue 26): ab-kept-causal.py at fp32 512×262144 — the scaled log's backward, and the same rows as
#   causal ones whose diagonal keeps every column, with LEAN_KEEP and without (prediction in its docstring).
# (and session 33's `grid causal-log-h200-f --op causal --log`, COMMIT=SHA: the causal log's forward grid has not
#   run since fused.EXP_FTZ went on in causal rows, which takes the log's exponentials too. Prediction: bf16
#   4096×4000 76.1 → ≥ 83 (the causal softmax's went 75.1 → 83.8), 16384×8192 91.9 → ≥ 93.)
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s34
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  late-y)
    timeout 300 python3 evidence/experiments/2026-12-04-session33/ab-lean-keep.py $OUT/late-y.csv "$@" \
      > $OUT/late-y.txt 2>&1
    echo "late-y rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/late-y.txt; grep -c "bit for bit" $OUT/late-y.txt ;;
  mask-early)
    GPU_TEST_WORKERS=8 timeout 200 bash scripts/gpu-tests.sh cluster -k "early" -rfE > $OUT/tests-mask-early.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-mask-early.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-mask-early.txt
    FORMS=early timeout 300 python3 evidence/experiments/2026-12-04-session33/ab-lean-keep.py $OUT/mask-early.csv \
      scaled-masked:bf16:8192x16384 scaled-masked:bf16:2048x65536 scaled-masked:bf16:4096x128256 \
      scaled-masked:bf16:1024x131072 scaled-masked:bf16:512x262144 scaled-masked:fp32:8192x50257 \
      scaled-masked:fp32:4096x128256 scaled-masked:fp32:1024x131072 scaled-masked:fp32:2048x151936 \
      scaled-masked:fp32:512x262144 > $OUT/mask-early.txt 2>&1
    echo "mask-early rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/mask-early.txt; grep -c "bit for bit" $OUT/mask-early.txt ;;
  backward-tiles)
    dtype=$1; op=$2; shift 2
    timeout 280 python3 scripts/backward-tiles.py $OUT/backward-tiles-$op-$dtype.csv $dtype op=$op log modes=last \
      "$@" > $OUT/backward-tiles-$op-$dtype.txt 2>&1
    echo "backward-tiles rc=$? at $SECONDS s"; tail -30 $OUT/backward-tiles-$op-$dtype.txt ;;
  kept-causal)
    timeout 200 python3 evidence/experiments/2026-12-04-session34/ab-kept-causal.py $OUT/kept-causal.csv "$@" \
      > $OUT/kept-causal.txt 2>&1
    echo "kept-causal rc=$? at $SECONDS s"; cat $OUT/kept-causal.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
