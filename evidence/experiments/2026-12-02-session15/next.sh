#!/usr/bin/env bash
# The fifteenth session's device steps (the fourteenth's next.sh runs its experiments: ce, ce-cluster, packed).
#   bash evidence/experiments/2026-12-02-session15/next.sh STEP, STEP one of ce-sweep, fused-sweeps, fused-backward,
#     causal-vectors, ce-host, write-baseline, real-model, configs, noise, noise-slowed, quack-1, quack-ce
#   (device; carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], not all of .bundles: with Quack's two parts built
#   there it is over a run's 64 MiB; .ab as the fourteenth session's next.sh prep makes it)
# Quack beside the loss (issue 27's "ahead of Quack"), three runs in one batch, the machine warm between them:
#   quack-1 (carry [".bundles/quack-1", ".ab"]), any run that carries the Triton bundle (Triton 3.8 unpacked), then
#   quack-ce (carry [".bundles/quack-2", ".ab"]): `sweep --preset vocab --op cross-entropy --pass both` with
#   fused, quack and liger (run id cross-entropy-quack-h200). ../shared/tools/device-bundles.sh quack builds them.
# ce-sweep: `sweep --preset vocab --op cross-entropy --pass both` with the peers that install from .ab/whl (Liger).
# fused-sweeps: the default grid of scaled-masked and causal, auto beside torch.compile (run ids OP-h200-$SUFFIX);
# fused-backward: their backward beside eager and torch.compile (never measured on the default grid; ~5 min).
# causal-vectors: cluster.CAUSAL_VECTORS's GPU test, then its A/B (~4 min). ce-host: where a loss call's host time
# goes (ce-host.py, ~1 min). write-baseline: a write-only stream's GB/s against a copy's, and the narrow causal
# cells (write-baseline.py, ~1 min). real-model: scripts/real-model-step.py, a Llama's training step with each loss
# at a 128256 vocabulary (issue 27). configs: cluster-configs.py for scaled-masked (bf16, fp32) and causal (bf16, with
# CAUSAL_VECTORS=all): MEASURED's shapes were chosen under the element selects. noise (NOISE_TARGETS="off 1 0.5", one
# command a target or two: each target's two default sweeps), then noise-slowed (TARGET=…: the 5 %-slowed sweep and the report): issue 30's default and gate
# (noise-rule.py); the runs stay in /root/noise while the machine is warm, and come back under $OUT/noise.
set -u
step=$1
wheels() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
  export PYTHONPATH=$PYTHONPATH:/tmp/site
}
sweep() { timeout "$1" python3 -m softmax_bench sweep --out $OUT/runs "${@:2}" > $OUT/${RUN_ID}.txt 2>&1;
          echo "$RUN_ID rc=$?"; tail -40 $OUT/${RUN_ID}.txt; }
case $step in
  ce-sweep)
    . .ab/device-setup.sh && wheels && export PYTHONUNBUFFERED=1
    RUN_ID=${RUN_ID:-cross-entropy-h200} sweep 400 --preset vocab --op cross-entropy --pass both --variant fused \
      --variant eager --variant torch_compile --variant liger --run-id ${RUN_ID:-cross-entropy-h200} ;;
  quack-1)  # part 1 of Quack, kept in /root/sb-bundles while the machine is warm
    . .ab/device-setup.sh ;;
  quack-ce)
    . .ab/device-setup.sh && wheels && export PYTHONUNBUFFERED=1
    RUN_ID=cross-entropy-quack-h200 sweep 400 --preset vocab --op cross-entropy --pass both --variant fused \
      --variant quack --variant liger --run-id cross-entropy-quack-h200 ;;
  fused-sweeps)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    for op in scaled-masked causal; do
      RUN_ID=$op-h200-${SUFFIX:-d} sweep 250 --preset default --op $op --variant auto --variant torch_compile \
        --run-id $op-h200-${SUFFIX:-d}
    done ;;
  fused-backward)  # issue 26's backward of each fused form over the default grid, with torch's and torch.compile's
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    for op in scaled-masked causal; do
      RUN_ID=$op-backward-h200 sweep 280 --preset default --op $op --pass backward --variant auto --variant eager \
        --variant torch_compile --run-id $op-backward-h200
    done ;;
  causal-vectors)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cluster.py -k "by_vectors" -rfE 2>&1 | tail -4
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 300 python3 $(dirname $0)/ab-causal-vectors.py $OUT/ab-causal-vectors.csv ;;
  ce-host)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 120 python3 $(dirname $0)/ce-host.py $OUT/ce-host.csv ;;
  write-baseline)  # ~1 min
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 200 python3 $(dirname $0)/write-baseline.py $OUT/write-baseline.csv ;;
  real-model)  # issue 27's real model at a 128256 vocabulary: transformers' loss, ours, Liger's (~2 min)
    . .ab/device-setup.sh && wheels && export PYTHONUNBUFFERED=1
    timeout 300 python3 scripts/real-model-step.py $OUT/real-model-step.csv ;;
  configs)  # the fused forms' cluster configurations again, with the packed select and causal vectors on (~8 min)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1 && export PYTHONPATH=$PYTHONPATH:$PWD/scripts
    C=scripts/cluster-configs.py
    for w in 50257 128256 151936 262144; do
      COMPILE_ONLY=1 timeout 150 python3 $C /dev/null bf16 scaled-masked $w > /dev/null 2>&1 &
      CAUSAL_VECTORS=all COMPILE_ONLY=1 timeout 150 python3 $C /dev/null bf16 causal $w > /dev/null 2>&1 &
    done
    COMPILE_ONLY=1 timeout 150 python3 $C /dev/null fp32 scaled-masked 50257 128256 151936 > /dev/null 2>&1 &
    wait
    timeout 200 python3 $C $OUT/configs-masked-bf16.csv bf16 scaled-masked 50257 128256 151936 262144 | grep BEST
    timeout 120 python3 $C $OUT/configs-masked-fp32.csv fp32 scaled-masked 50257 128256 151936 | grep BEST
    CAUSAL_VECTORS=all timeout 200 python3 $C $OUT/configs-causal-bf16.csv bf16 causal 50257 128256 151936 262144 \
      | grep BEST ;;
  noise)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 560 python3 $(dirname $0)/noise-rule.py sweeps /root/noise ${NOISE_TARGETS:-off 1}
    mkdir -p $OUT/noise && cp -r /root/noise/. $OUT/noise/ ;;
  noise-slowed)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 400 python3 $(dirname $0)/noise-rule.py slowed /root/noise ${TARGET:-off} 5 > $OUT/slowed.txt 2>&1
    tail -3 $OUT/slowed.txt; python3 $(dirname $0)/noise-rule.py report /root/noise | tee $OUT/noise-report.txt
    mkdir -p $OUT/noise && cp -r /root/noise/. $OUT/noise/ ;;
  *) echo "usage: next.sh ce-sweep|fused-sweeps|fused-backward|causal-vectors|ce-host|write-baseline|real-model|configs|noise|noise-slowed|quack-1|quack-ce" >&2; exit 2 ;;
esac
