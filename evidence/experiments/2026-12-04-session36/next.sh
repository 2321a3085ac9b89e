#!/usr/bin/env bash
# The thirty-sixth session's device steps: bash evidence/experiments/2026-12-04-session36/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (as the thirty-fifth session's next.sh, whose steps this one
# keeps: staged, x-staged, and through it the thirty-fourth's; their predictions are in their headers).
# own-launcher (issue 29): tests/test_launcher.py on the GPU (a plan launched by softmax_bench.launcher against
#   Triton's launch, bit for bit, fused, two_pass, cluster, auto), tests/test_replay.py with the launcher on, then
#   scripts/host-cost.py with SOFTMAX_BENCH_OWN_LAUNCHER off and on (each in its own process, 64×4000 bf16,
#   softmax, scaled-masked and log-softmax, 7 rounds). Prediction (launch-glue.csv: the code around fused's launch
#   1.10 µs with Triton's C launch, 0.25 with ours, on this session's CPU against a driver that does nothing):
#   "replayed launch alone" 0.8–1.1 µs lower (4.9 → ~4.0), auto's softmax, scaled-masked and log-softmax host µs
#   0.8–1.1 lower; every output bit for bit. If it holds: OWN_LAUNCHER on by default (README, replay.py), and
#   `scripts/gpu-tests.sh backward` with it on. host-cost's "grad" rows (x needing a gradient; the eager autograd
#   formula without the op, both processes): softmax_bench auto ≤ 1.5× torch.softmax's with a gradient.
# eager-grad (issue 29): the GPU tests of an eager call with a gradient (library.EagerAutograd: the ops' autograd
#   formula without the ops) and of a replayed backward (dispatch.replayed_or_backward: test_replay's
#   test_a_replayed_backward_gives_what_the_long_way_gives, bit for bit), the backward part of the suite, then
#   eager-step-host.py --through-op (an eager training step's host µs, ours beside torch's and the op's).
#   Prediction (grad-call-cost.txt: on this session's CPU a step's Python around its kernels 41 µs against 106
#   through the op, torch's whole step 27): softmax_bench's step ≤ 1.3× torch's host µs at 64×4000 bf16 in each
#   form, the rows through the op ≥ 2× ours; the backward part passes.
# fast-launches (issue 29): the kernels and backward parts of the suite with SOFTMAX_BENCH_FAST_LAUNCHES=1, the
#   condition the README sets for turning replay.FAST_LAUNCHES on (a loss call's host time 4–43 % lower with it,
#   seventeenth session). Prediction: both parts pass as they do with it off. If so: FAST_LAUNCHES on by default.
set -u
case $1 in staged|x-staged|mask-early|backward-tiles|kept-causal|late-y)
  exec bash evidence/experiments/2026-12-04-session35/next.sh "$@" ;; esac
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s36
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  own-launcher)
    workers=(); python3 -c "import xdist" 2>/dev/null && workers=(-n 8)
    timeout 150 python3 -m pytest -q -p no:cacheprovider "${workers[@]}" tests/test_launcher.py -rfE \
      > $OUT/tests-launcher.txt 2>&1
    echo "launcher tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-launcher.txt)"
    SOFTMAX_BENCH_OWN_LAUNCHER=1 timeout 150 python3 -m pytest -q -p no:cacheprovider "${workers[@]}" \
      tests/test_replay.py -rfE > $OUT/tests-replay-own.txt 2>&1
    echo "replay tests (own launcher) rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay-own.txt)"
    grep -E "^(FAILED|ERROR)" $OUT/tests-launcher.txt $OUT/tests-replay-own.txt
    for own in 0 1; do
      SOFTMAX_BENCH_OWN_LAUNCHER=$own timeout 120 python3 scripts/host-cost.py $OUT/host-own$own.csv --op softmax \
        --op scaled-masked --op log-softmax --rounds 7 > $OUT/host-own$own.txt 2>&1
      echo "host-cost own=$own rc=$? at $SECONDS s"
      grep -E "torch.softmax|torch.log_softmax|replayed launch|softmax_bench auto" $OUT/host-own$own.txt
    done ;;
  eager-grad)
    GPU_TEST_WORKERS=8 timeout 300 bash scripts/gpu-tests.sh backward -rfE > $OUT/tests-backward.txt 2>&1
    echo "backward part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-backward.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-backward.txt
    timeout 150 python3 evidence/experiments/2026-12-04-session36/eager-step-host.py --through-op \
      > $OUT/eager-step-host.txt 2>&1
    echo "eager-step-host rc=$? at $SECONDS s"; cat $OUT/eager-step-host.txt ;;
  fast-launches)
    for part in backward kernels; do
      SOFTMAX_BENCH_FAST_LAUNCHES=1 GPU_TEST_WORKERS=16 timeout 280 bash scripts/gpu-tests.sh $part -rfE \
        > $OUT/tests-fast-$part.txt 2>&1
      echo "$part part (fast launches) rc=$? at $SECONDS s: $(tail -1 $OUT/tests-fast-$part.txt)"
      grep -E "^(FAILED|ERROR)" $OUT/tests-fast-$part.txt
    done ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
