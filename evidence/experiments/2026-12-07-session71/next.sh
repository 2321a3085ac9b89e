#!/usr/bin/env bash
# The seventy-first session's device step: COMMIT=SHA KEEP_COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session71/next.sh all
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. In one call (an H200; LEFT_S, ~9 min):
# 1. the GPU tests of this session's and the last's changes (the shift, once, the shared rows, KEEP_SHARED_ROWS);
# 2. keep-probe.py (its docstring): cluster's shared rows read plainly or evict_last, 2 rounds;
# 3. if `keep` wins (its median ahead of `plain` by 1 point at 3 of the 5 bf16 key-padded cells), KEEP_SHARED_ROWS
#    switched on in the tree (then the tree is KEEP_COMMIT's, that one line apart) and the runs named -keep;
# 4. the bar's sweeps, auto beside torch_compile over the default grid: key-padded forward, biased rows/64 forward,
#    then their logs while time is left;
# 5. once-probe.py (the seventieth session's), one round, while time is left.
set -u
here=evidence/experiments/2026-12-07-session71
. evidence/experiments/device-step.sh  # card, tag, pack, left
sweep() {  # sweep ID ARGS...: auto beside torch_compile into $OUT/runs/ID, one line of % of the floor
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=$commit timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
    "$@" --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
d = d[d.variant == 'auto']; print(' '.join(f'{r.dtype}:{r.M}x{r.N}:{100 * r.roofline_copy_ms / r.ms:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
if [[ ${1:-} == all ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_fusion.py tests/test_bias.py \
    tests/test_cluster.py -k "shift or once or broadcast or shared or keep" > $OUT/tests.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests.txt)"
  timeout 150 python3 $here/keep-probe.py 2 > $OUT/keep-probe.txt 2>&1
  echo "keep-probe rc=$? at $SECONDS s"; grep -E "median|DIFFERS|rror" $OUT/keep-probe.txt | grep -v "^W" | tail -60
  wins=$(python3 - $OUT/keep-probe.csv <<'PY'
import sys
import pandas as pd
d = pd.read_csv(sys.argv[1])
d = d[(d.op == "key-padded") & (d.dtype == "bfloat16")]
m = d.groupby(["M", "N", "form"]).pct.median().unstack()
print(int((m["keep"] > m["plain"] + 1).sum()))
PY
)
  echo "keep ahead at ${wins:-?} of 5 bf16 key-padded cells"
  suffix=
  if [[ ${wins:-0} -ge 3 ]]; then
    sed -i 's/^KEEP_SHARED_ROWS = False$/KEEP_SHARED_ROWS = True/' softmax_bench/kernels/cluster.py
    commit=${KEEP_COMMIT:?set KEEP_COMMIT=SHA}; suffix=-keep
    grep -n "^KEEP_SHARED_ROWS" softmax_bench/kernels/cluster.py
  fi
  for form in key-padded biased key-padded-log biased-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 110 && sweep bar-${form/biased/biased-rows64}-$tag-s71$suffix --preset default --op $op $log $shape
  done
  left 60 && { timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 evidence/experiments/2026-12-07-session70/once-probe.py 1 \
    > $OUT/once-probe.txt 2>&1; echo "once-probe rc=$? at $SECONDS s"; grep -E "median|DIFFERS" $OUT/once-probe.txt | tail -60; }
fi
