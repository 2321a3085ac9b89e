#!/usr/bin/env bash
# The sixty-sixth session's device steps: bash evidence/experiments/2026-12-06-session66/next.sh [STEP]
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# default: on an H200, the sixty-fifth session's h200 step (its figures are what the proxy is checked against and
#   what issue 26 waits for); on any other card, proxy.
# proxy (an H100; ~6 min): is an H100 held to a share of its SMs (green.py, a CUDA green context) a proxy for the H200?
#   `green.py SMS sms` checks the share holds; then auto at the H200's known cells (CELLS below) on SHARES SMs (default
#   "96 88"), each share's runs in its own folder (its own copy), each cell only if LEFT_S leaves time; then landing on
#   the first share if time is left.
# verify (any card; ~5 min): on an H200, the bar runs of the two cells this session's change lifted (auto beside
#   torch_compile: causal bf16 2048x151936 and its log, DIAGONAL_STORE_AT; the masked log's backward fp32 512x262144,
#   LATE_Y_SHAPES), as bar-*-h200-s66; then, on any card, the GPU tests of the two changes for what LEFT_S leaves.
# landing (any card; ~1.5 min; an H100's figures tell nothing unless SMS, the proxy's share, is set): landing-row-probe.py
#   time (biased bf16 and causal fp32 512x262144: auto, shared_cluster 16 x 8, landing_cluster with and without ONLINE).
# broadcast (an H200; ~90 s a form): the broadcast forms the bar covers and no run measured since the early sessions'
#   key-padded (bar-status names them): the default grid, auto beside torch_compile, of key-padded and biased
#   --mask-shape rows/64, each softmax and log, forward and backward (FORMS: a subset, e.g. "key-padded:forward"),
#   as broadcast-<op>[-log]-<pass>-h200-s66; each form only if LEFT_S leaves 100 s.
# Every step packs $OUT into one all.tgz (the device returns few files).
set -u
here=evidence/experiments/2026-12-06-session66
. evidence/experiments/device-step.sh  # card, tag, pack, left
# id and sweep arguments of each cell; its H200 figure (Triton 3.8, % of the roofline) in perf-notes' table
CELLS=(
  "biased-bf16 --op biased --dtype bf16 --shape 512x262144"
  "causal-bf16-151936 --op causal --dtype bf16 --shape 2048x151936"
  "sm-log-bw-fp32 --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144"
  "causal-fp32 --op causal --dtype fp32 --shape 512x262144"
  "biased-bw-bf16 --op biased --pass backward --dtype bf16 --shape 512x262144"
  "softmax-bf16 --op softmax --dtype bf16 --shape 512x262144"
  "scaled-masked-bf16 --op scaled-masked --dtype bf16 --shape 512x262144"
  "biased-fp32 --op biased --dtype fp32 --shape 512x262144"
)
cell() {  # cell SMS ID ARGS...: auto at one cell on SMS SMs (0: all)
  local sms=$1 id=$2-$tag-sm$1; shift 2
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 120 python3 $here/green.py $sms sweep \
    --out $OUT/runs-sm$sms --run-id $id --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs-sm$sms/$id/rows.csv'); \
print(' '.join(f'{r.pct_of_roofline:.1f} {r.ms*1e3:.1f} us ({r.ms_p20*1e3:.1f}-{r.ms_p80*1e3:.1f}) copy {r.roofline_copy_ms*1e3:.1f} us regs {r.n_regs} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
case ${1:-default} in
  default)
    if [[ $tag == h200 ]]; then bash evidence/experiments/2026-12-06-session65/next.sh h200; else bash $0 proxy; fi ;;
  verify)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    if [[ $tag == h200 ]]; then
      for spec in "bar-causal-bf16-h200-s66 --op causal --dtype bf16 --shape 2048x151936" \
                  "bar-causal-log-bf16-h200-s66 --op causal --log --dtype bf16 --shape 2048x151936" \
                  "bar-sm-log-backward-fp32-h200-s66 --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144"; do
        set -- $spec; id=$1; shift
        SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 120 python3 -m softmax_bench sweep --out $OUT/runs \
          --run-id $id "$@" --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
        echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.variant}:{r.pct_of_roofline:.1f} {r.ms*1e3:.1f} us regs {r.n_regs} {r.config}' for r in d.itertuples()))" 2>&1 | tail -1)"
      done
    fi
    left 60 && timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
      tests/test_cluster.py::test_causal_rows_by_vectors_match_float64 \
      tests/test_cluster_backward.py -k "not sm90" > $OUT/tests-verify.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-verify.txt)" ;;
  broadcast)
    [[ $tag == h200 ]] || { echo "not an H200, nothing run"; exit 0; }
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    for form in ${FORMS:-key-padded:forward biased:forward key-padded-log:forward biased-log:forward \
                 key-padded:backward biased:backward key-padded-log:backward biased-log:backward}; do
      op=${form%%:*}; pass=${form##*:}; log=; [[ $op == *-log ]] && { log=--log; op=${op%-log}; }
      shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
      id=broadcast-$op${log:+-log}-$pass-h200-s66
      left 100 || break
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 200 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --preset default --op $op $log $shape --pass $pass --variant auto --variant torch_compile \
        > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
a = d[d.variant == 'auto']; print(f'auto {a.pct_of_roofline.min():.1f}-{a.pct_of_roofline.max():.1f}, under 92/90:', \
' '.join(f'{r.dtype}:{r.M}x{r.N}:{r.pct_of_roofline:.1f}' for r in a.itertuples() \
if r.pct_of_roofline < (92 if '$pass' == 'forward' else 90)))" 2>&1 | tail -1)"
    done ;;
  landing)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 200 python3 $here/green.py ${SMS:-0} $here/landing-row-probe.py time > $OUT/landing-time.txt 2>&1
    echo "landing-row-probe rc=$? at $SECONDS s (SMS ${SMS:-all})"; grep -vE "Warning|^W" $OUT/landing-time.txt | tail -16 ;;
  proxy)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    SHARES=${SHARES:-96 88}
    for sms in 0 $SHARES; do timeout 60 python3 $here/green.py $sms sms 2>&1 | tail -2; done
    for sms in $SHARES; do
      for spec in "${CELLS[@]}"; do
        left 40 && cell $sms $spec
      done
    done
    left 150 && SMS=${SHARES%% *} bash $0 landing ;;
esac
