# The prelude a session's next.sh sources (sixty-sixth session on): the card and its tag (h200, else h100), $OUT
# packed into one all.tgz when the outermost step exits (the device returns few files), and `left S`: whether a
# piece of S seconds still fits in LEFT_S (default 600), counted from the script's start.
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
pack() { tar czf /tmp/all-$$.tgz -C $OUT . && (cd $OUT && find . -mindepth 1 -delete) && mv /tmp/all-$$.tgz $OUT/all.tgz; }
[[ ${PACKED:-} ]] || { export PACKED=1; trap pack EXIT; }  # the outermost step packs
left() { (( SECONDS + $1 < ${LEFT_S:-600} )); }
# bar_sweep ID ARGS...: a sweep of auto beside torch_compile into $OUT/runs/ID (its commit $commit), then one line of
# auto's % of a copy of the floor's bytes a cell; SWEEP_SET (Python statements, optional) run first, to set a switch,
# and recorded in the run's settings (SOFTMAX_BENCH_SWITCH: scripts/bar-status.py leaves such a run out).
bar_sweep() {
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=$commit env ${SWEEP_SET:+"SOFTMAX_BENCH_SWITCH=$SWEEP_SET"} timeout 200 python3 -c "import sys; ${SWEEP_SET:-pass}; from softmax_bench.cli import app; \
app(sys.argv[1:], prog_name='softmax-bench')" sweep --out $OUT/runs --run-id $id "$@" --variant auto \
    --variant torch_compile > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
d = d[d.variant == 'auto']; print(' '.join(f'{r.dtype}:{r.M}x{r.N}:{100 * r.roofline_copy_ms / r.ms:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
