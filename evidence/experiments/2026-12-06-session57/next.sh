#!/usr/bin/env bash
# The fifty-seventh session's device steps: bash evidence/experiments/2026-12-06-session57/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-sixth session's next.sh and on down.
# roofline (issue 26): the sweep's own-bytes roofline (sweep.roofline_bytes, roofline_copy_ms) on the GPU: its
#   tests, then the bar cells of causal (and its log), scaled-masked and biased at 4096x4000 and 16384x8192, auto
#   beside torch.compile (runs <op>[-log]-roofline-<card>-s57${TAG}), each row's % of the new roofline printed
#   beside the prorated one its columns give. Prediction in docs/perf-notes.md (fifty-seventh session).
# h200-roofline: roofline on an H200; on another card nothing.
# shiftless (issue 26): fused.SHIFTLESS's GPU tests, then ab-shiftless.py (the shifted form, the unshifted pass
#   with its fallback, and without) at CELLS (default 4096x4000 8192 16384). Prediction in docs/perf-notes.md.
# gpu-suite: the test suite on the GPU, HALF=1 or 2 its files' first or second half (SUITE_S seconds at most, default
#   480; the whole did not finish in 480 s on the H100); -v, so that a run cut short still names its failures.
# shiftless-sweep: the causal GPU tests (fusion, kernels, dispatch), then roofline's causal sweeps (TAG -shiftless).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
case $1 in
  roofline)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl && export PYTHONUNBUFFERED=1
    if [[ -z ${SKIP_TESTS:-} ]]; then
      timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cli.py -k "priced_at_a_copy or op_sweeps_check" \
        -n 8 -rfE > $OUT/tests-roofline.txt 2>&1
      echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-roofline.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-roofline.txt
    fi
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s57
    specs=("causal" "causal --log" "scaled-masked" "biased"); [[ ${CAUSAL_ONLY:-} ]] && specs=("causal" "causal --log")
    for spec in "${specs[@]}"; do
      id=$(sed 's/ --/-/' <<< "$spec")-roofline-$tag-s57${TAG:-}
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 110 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op $spec --dtype bf16 --dtype fp32 --shape 4096x4000 --shape 16384x8192 \
        --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$? at $SECONDS s"; grep -E "Error" $OUT/sweep-$id.txt | head -3
      python3 - $OUT/runs/$id/rows.csv <<'PY'
import sys
import pandas as pd
r = pd.read_csv(sys.argv[1])
r = r[r.status == "ok"]
moved = r.gbps * r.ms * 1e6
prorated = 100 * r.model_bytes * r.copy_ms / moved / r.ms
for (_, row), old in zip(r.iterrows(), prorated):
    print(f"  {row.variant:14} {row['dtype']} {row.M}x{row.N}: roofline {row.pct_of_roofline:6.1f}  prorated {old:6.1f}"
          f"  ms {row.ms:.5f} p20-p80 {row.ms_p20:.5f}-{row.ms_p80:.5f}  copies x+y {row.copy_ms:.5f} floor "
          f"{row.roofline_copy_ms:.5f}")
PY
    done
    tar czf $OUT/runs-roofline.tgz -C $OUT runs && rm -rf $OUT/runs ;;  # one file: the tool returns few
  shiftless-sweep)  # the causal GPU tests, then roofline's causal sweeps, with SHIFTLESS_TILES (TAG=-shiftless)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl && export PYTHONUNBUFFERED=1
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py tests/test_kernels.py \
      tests/test_dispatch.py -k "causal or unshifted" -n 8 -rfE > $OUT/tests-causal.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-causal.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-causal.txt
    SKIP_TESTS=1 CAUSAL_ONLY=1 TAG=${TAG:--shiftless} bash $0 roofline 2>&1 | grep -v "^card" ;;
  gpu-suite)  # the whole suite on the GPU (the slim bundle has no cuobjdump: the sm_90 SASS tests fail to start)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl && export PYTHONUNBUFFERED=1
    files=(tests/test_*.py); n=${#files[@]}  # HALF=1 or 2: that half of the files (the whole takes over 8 minutes)
    case ${HALF:-} in 1) files=("${files[@]:0:n/2}") ;; 2) files=("${files[@]:n/2}") ;; esac
    timeout ${SUITE_S:-480} python3 -m pytest -v -p no:cacheprovider -n 12 -rfE "${files[@]}" \
      > $OUT/gpu-suite${HALF:-}.txt 2>&1  # -v: each result named as it comes, so a run cut short still names them
    echo "suite rc=$? at $SECONDS s: $(tail -1 $OUT/gpu-suite${HALF:-}.txt)"
    grep -E " (FAILED|ERROR) " $OUT/gpu-suite${HALF:-}.txt | sed 's/.*\(FAILED\|ERROR\) //' | sort -u | cut -c1-220 ;;
  shiftless)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py -k "unshifted" -n 8 -rfE \
      > $OUT/tests-shiftless.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-shiftless.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-shiftless.txt
    timeout 300 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session57/ab-shiftless.py \
      $OUT/ab-shiftless.csv ${CELLS:-} > $OUT/ab-shiftless.txt 2>&1
    echo "ab rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-shiftless.txt | tail -40 ;;
  h200-roofline)  # roofline on an H200 only; on another card nothing (the machine's start is all it costs)
    grep -qi h200 <<< "$card" || { echo "$card: not an H200, nothing run"; exit 0; }
    exec bash $0 roofline ;;
  *) exec bash evidence/experiments/2026-12-06-session56/next.sh "$@" ;;
esac
