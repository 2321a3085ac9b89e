#!/usr/bin/env bash
# The seventieth session's device steps: bash evidence/experiments/2026-12-07-session70/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# kp-configs (an H200; ~6 min): fused's configurations (scripts/fused-configs.py: warps 4-32, the default rows a
#   program and twice them, each also capped at a program more an SM) for the key-padded bf16 rows fused runs, where
#   auto reads 86.6-91.1 % of the floor on the H200 (broadcast-key-padded-forward-h200-s66), then biased rows/64's.
# once (an H200; ~5 min): the GPU tests of the shift and the once switches, then once-probe.py (its docstring): fused's key-padded and biased rows/64 bf16 narrow rows, the
#   shared row found by a division or a shift (fused.GROUP_SHIFTS), read a row at a time or once a program
#   (fused.MASK_ONCE_ROWS, BIAS_ONCE_ROWS), in rounds after a copy of the floor's bytes.
# sweeps (an H200; ~8 min): the bar's runs of the forms GROUP_SHIFTS touches, as committed, auto beside
#   torch_compile over the default grid: key-padded forward and its log, biased rows/64 forward and its log.
# once-sweeps (an H200; one call of LEFT_S): once in its first 240 s, then sweeps in what is left.
set -u
here=evidence/experiments/2026-12-07-session70
. evidence/experiments/device-step.sh  # card, tag, pack, left
NARROW="4194304x32 1048576x128 262144x512 131072x1024 65536x2048 4096x4000"
if [[ ${1:-} == kp-configs ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout $(( ${LEFT_S:-600} * 3 / 5 )) python3 scripts/fused-configs.py $OUT/kp-configs-bf16.csv bf16 key-padded \
    $NARROW > $OUT/kp-configs-bf16.txt 2>&1
  echo "key-padded rc=$? at $SECONDS s"; grep "(default)" $OUT/kp-configs-bf16.txt
  left 40 && timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 scripts/fused-configs.py $OUT/biased-configs-bf16.csv \
    bf16 biased rows/64 $NARROW > $OUT/biased-configs-bf16.txt 2>&1
  echo "biased rows/64 rc=$? at $SECONDS s"; grep "(default)" $OUT/biased-configs-bf16.txt
  python3 - $OUT <<'PY'
import glob, sys
import pandas as pd
for path in sorted(glob.glob(f"{sys.argv[1]}/*-configs-bf16.csv")):
    d = pd.read_csv(path)
    for (M, N), cell in d.groupby(["M", "N"]):
        best, default = cell.loc[cell.pct_of_copy.idxmax()], cell[cell.default]
        print(path.split("/")[-1], f"{M}x{N}", "default", *default.pct_of_copy.tolist(), "best", best.pct_of_copy,
              f"rows {best.rows} warps {best.num_warps} cap {best.max_registers}")
PY
fi
if [[ ${1:-} == once ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  # first the GPU tests of the shift and the once switches (landed checked in the interpreter only)
  timeout 90 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_fusion.py tests/test_bias.py \
    -k "shift or once or broadcast or shared" > $OUT/tests-shift-once.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-shift-once.txt)"
  timeout $(( ${LEFT_S:-600} - 10 )) python3 $here/once-probe.py 3 > $OUT/once-probe.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -E "median|DIFFERS|error|Error" $OUT/once-probe.txt | grep -v "^W" | tail -80
fi
sweep() {  # sweep ID ARGS...: auto beside torch_compile into $OUT/runs/ID, one line of % of the floor
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
    "$@" --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
d = d[d.variant == 'auto']; print(' '.join(f'{r.dtype}:{r.N}:{100 * r.roofline_copy_ms / r.ms:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
if [[ ${1:-} == once-sweeps ]]; then  # once in LEFT_S's first 240 s, then sweeps in what is left
  LEFT_S=240 bash $0 once
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 sweeps
fi
if [[ ${1:-} == sweeps ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  for form in key-padded key-padded-log biased biased-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 130 && sweep bar-${form/biased/biased-rows64}-$tag-s70 --preset default --op $op $log $shape
  done
fi
