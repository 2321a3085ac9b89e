#!/usr/bin/env bash
# The twenty-seventh session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]):
#   bash evidence/experiments/2026-12-04-session27/next.sh STEP
# configs: the GPU tests of the cluster kernels (test_cluster.py), then sweeps of the cells whose configuration this
#   session changed, with their peers: --op scaled bf16 4096×32768, 8192×50257, 2048×151936 (MEASURED's scaled
#   form); --op causal bf16 8192×50257 and its --log (CAUSAL_REGISTERS); --op biased fp32 8192×50257 and its --log
#   (BIASED, LOG_REGISTERS). Predictions (cluster-configs.py and ab-caps.py, this session): scaled 97.0 / 97.4 /
#   94.7 % of a copy, causal 96.1 (log 97.3), biased 95.8 (log 95.6), each ± 1. (Its runs.csv did not come back: a
#   run returns a few files only; run as `next.sh configs; cd $OUT && tar czf runs.tgz runs && rm -rf runs`.)
# scaled-log: --op scaled --log at the same three widths, its runs tarred.
# ab-pdl: ce-split.py (the twenty-sixth session's) with cross_entropy.FINISH_PDL off, then on (the finishing kernel
#   launched as the cluster's programmatic dependent: it reads the targets and their logits while the cluster's
#   last programs run, then waits), then the GPU test that both give the same bits, then the vocab sweep with it on
#   and the peers but Quack (run id cross-entropy-pdl-h200). Prediction: bf16 2048×151936's forward, no gradient,
#   0.1602 → ≤ 0.1585 ms (91.6 → ≥ 92.5 % of a read in ce-split); each step 1–3 µs shorter; the loss kernels
#   unchanged. If so, FINISH_PDL on, with the sweep as its evidence.
# ab-occupancy: ab-occupancy.py, config_for's configuration against a register cap that gives an SM one more CTA
#   without spilling (compiled for sm_90: occupancy/compiled-sm90.jsonl, made by occupancy-scan.py); prediction in
#   the script. If a cap wins: a cap table for the plain rows (issue 28's bf16 262144 and 196608) and
#   CAUSAL_REGISTERS' entries, with the wide-rows and causal sweeps as their evidence.
# ab-fused-caps: ab-fused-caps.py, fused's causal bf16 16384×8192 and 4096×4000 (and --log) uncapped and at 48
#   registers (a program more an SM; prediction in the script).
# fused-fp32: scripts/fused-configs.py's warps and rows a program for fp32 --op scaled at 16384×8192 and 8192×16384,
#   where torch.compile's own kernel ran at 101.8 and 101.3 % of a copy against auto's (fused) 97.6 and 98.5
#   (scaled-h200-b; its plain softmax, an aten call, 87.3 and 83.8). Prediction: a configuration of fused's at ≥ 100.
# An order for the next 30 minutes: ab-occupancy (≈ 4 min), ab-fused-caps (≈ 2), ab-pdl (≈ 6: two ce-splits, a test,
# the vocab sweep), fused-fp32 (≈ 2),
# then whichever wins made the default with its sweep (wide rows for the plain caps: `sweep` with --config
# configs/wide-rows.toml --variant auto --variant quack, Quack's three runs as the twenty-sixth next.sh says; causal
# --preset default), then the GPU parts of the suite (scripts/gpu-tests.sh) before anything is called resolved.
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
peers=(--variant auto --variant eager --variant torch_compile)
sweep() {  # ID ARG ...
  local id=$1; shift
  timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id "${peers[@]}" "$@" > $OUT/$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s"; grep -E "^ *[0-9,]+ |^ *×[0-9]+ " $OUT/$id.txt
}
case $step in
  configs)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cluster.py -rfE > $OUT/tests.txt 2>&1
    echo "tests rc=$? at $SECONDS s"; tail -3 $OUT/tests.txt
    sweep scaled-cluster-h200 --op scaled --dtype bf16 --shape 4096x32768 --shape 8192x50257 --shape 2048x151936
    sweep causal-50257-h200 --op causal --dtype bf16 --shape 8192x50257
    sweep causal-log-50257-h200 --op causal --log --dtype bf16 --shape 8192x50257
    sweep biased-50257-h200 --op biased --dtype fp32 --shape 8192x50257
    sweep biased-log-50257-h200 --op biased --log --dtype fp32 --shape 8192x50257 ;;
  scaled-log)  # the scaled form's log at the widths MEASURED names (prediction: within 1 of the softmax's 97 / 98 / 95)
    sweep scaled-log-cluster-h200 --op scaled --log --dtype bf16 --shape 4096x32768 --shape 8192x50257 \
      --shape 2048x151936
    cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  ab-pdl)
    split=evidence/experiments/2026-12-04-session26/ce-split.py
    timeout 200 python3 $split $OUT/ce-split-off.csv 2>&1 | grep -v "Warn\|: +" | tee $OUT/ce-split-off.txt
    SOFTMAX_BENCH_FINISH_PDL=1 timeout 200 python3 $split $OUT/ce-split-pdl.csv 2>&1 | grep -v "Warn\|: +" \
      | tee $OUT/ce-split-pdl.txt
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cross_entropy.py -k "dependent_finish" -rfE \
      > $OUT/tests-pdl.txt 2>&1; echo "tests rc=$? at $SECONDS s"; tail -2 $OUT/tests-pdl.txt
    SOFTMAX_BENCH_FINISH_PDL=1 timeout 300 python3 -m softmax_bench sweep --out $OUT/runs --preset vocab \
      --op cross-entropy --pass both --variant fused --variant eager --variant torch_compile --variant liger \
      --run-id cross-entropy-pdl-h200 > $OUT/cross-entropy-pdl-h200.txt 2>&1
    echo "sweep rc=$? at $SECONDS s"; cd $OUT && tar czf runs.tgz runs && rm -rf runs ;;
  ab-occupancy)
    timeout 400 python3 evidence/experiments/2026-12-04-session27/ab-occupancy.py $OUT/ab-occupancy.csv 2>&1 \
      | grep -v Warn | tee $OUT/ab-occupancy.txt ;;
  ab-fused-caps)
    timeout 300 python3 evidence/experiments/2026-12-04-session27/ab-fused-caps.py $OUT/ab-fused-caps.csv 2>&1 \
      | grep -v Warn | tee $OUT/ab-fused-caps.txt ;;
  fused-fp32)
    timeout 300 python3 scripts/fused-configs.py $OUT/fused-fp32-scaled.csv fp32 scaled 8192 16384 2>&1 \
      | grep -v Warn | tee $OUT/fused-fp32-scaled.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
