#!/usr/bin/env bash
# The twenty-sixth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; .ab is session 14's
# `next.sh prep` without .ab/old):
#   bash evidence/experiments/2026-12-04-session26/next.sh STEP [ARG ...], STEP one of
# tests: the GPU tests of the loss and the cluster kernels (test_cross_entropy.py, test_cluster.py, test_real_model.py).
# ce-split: ce-split.py, each piece of the loss's step and forward timed alone, then their kernels on the timeline.
# ce-sweep ID [VARIANT ...]: sweep --preset vocab --op cross-entropy --pass both, fused and the VARIANTs (default:
#   eager, torch_compile, liger). With Quack ("eager torch_compile liger quack"): three runs in one batch of tool
#   calls, each carrying .ab too (its setup script): carry [".bundles/quack-1", ".ab"] command `. .ab/device-setup.sh`;
#   [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] the same; then [".bundles/quack-2", ".ab"] and this step.
# ab-late: ce-split.py on the tree as it is, then with late-factor.patch applied (the factor's inputs loaded with the
#   row, compared after the exchange; bf16 50257's step capped at 96), then the patched tree's GPU tests of the loss
#   (test_cross_entropy.py, test_cluster.py -k cross_entropy). Prediction: bf16 50257's loss kernel with the
#   gradient 0.4072 → ~0.395 ms (its row's 14 loads in one wave, as with the twenty-fifth session's loaded factor at
#   0.3949), the other cells within 1 %.
# biased-configs: scripts/cluster-configs.py's every configuration for the biased cells under 92 % whose
#   configuration's loads wait halfway (compiled for sm_90, tests/compile_sm90.load_waves): fp32 50257 (the rule's
#   8 × 8, [8, 2, 2, 2, 2]; 16 × 16 issues [6], 54 registers) and bf16 262144 (BIASED's 16 × 8, [12, 4]; 16 × 16
#   [8] at 64 registers, where the twenty-second session measured it at 74 registers, 56 %), softmax and log.
#   Prediction: 16 × 16 ≥ 95 % of a copy of the op's bytes at fp32 50257 (91.0 and 89.8 in the sweeps), ≥ 90 at
#   bf16 262144 (79.2 and 81.1).
# scaled-configs: every configuration of --op scaled's bf16 cluster cells under 92 or near it (scaled-h200-b: 50257
#   89.9 in the rule's 8 × 4, 32768 91.1 in 4 × 8, 151936 93.6 in one padded piece). A scale alone is held and loaded
#   as a plain row (compiled for sm_90, bf16 50257 in the plain row's measured 4 × 4: 95 registers against 96, the
#   same one wave of 14 loads), but form_of calls it "other", so it takes the rule's configuration, not MEASURED's
#   softmax entries (50257 4 × 4: 97.6 against the rule's 95.9; 151936 in two pieces). Prediction: 50257 ≥ 96 in
#   4 × 4, 151936 ≥ 95 in two pieces; if so, a scale alone takes the softmax's form.
# ab-caps: ab-caps.py, causal bf16 8192×50257 (and --log) in config_for's configuration and capped at 102 and 96
#   registers (prediction in ab-caps.py).
# sweep ID ARG ...: sweep --preset default and ARG (for the fused forms' runs issue 26 has none of, with their peers:
#   --op scaled --log; --op scaled|biased --pass backward; --op scaled|scaled-masked|causal|biased --log --pass
#   backward; each with --variant auto --variant eager --variant torch_compile, and compiled_op forward).
# An order for 30 minutes of device time (estimates from this session's runs): ab-late (≈ 4 min with its tests),
# ab-caps and scaled-configs (≈ 2 each), biased-configs (≈ 5), ce-sweep with Quack (three runs, ≈ 4), then the
# sweeps issue 26 lacks (≈ 2 each).
set -u
step=$1; shift
D=evidence/experiments/2026-12-04-session26
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  tests)
    timeout 330 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py tests/test_cluster.py \
      tests/test_real_model.py -rfE > $OUT/tests.txt 2>&1; echo "tests rc=$? at $SECONDS s"; tail -5 $OUT/tests.txt ;;
  ce-split) timeout 240 python3 $D/ce-split.py $OUT/ce-split.csv 2>&1 | grep -v Warn | tee $OUT/ce-split.txt ;;
  ce-sweep)
    id=$1; shift
    variants=(--variant fused)
    for v in "${@:-eager torch_compile liger}"; do for w in $v; do variants+=(--variant $w); done; done
    timeout 400 python3 -m softmax_bench sweep --out $OUT/runs --preset vocab --op cross-entropy --pass both \
      "${variants[@]}" --run-id $id > $OUT/$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s"; grep -E "│" $OUT/$id.txt | tail -40 ;;
  ab-late)
    timeout 200 python3 $D/ce-split.py $OUT/ce-split-before.csv 2>&1 | grep -v "Warn\|: +" | tee $OUT/ce-split-before.txt
    patch -p1 < $D/late-factor.patch || exit 1
    timeout 200 python3 $D/ce-split.py $OUT/ce-split-late.csv 2>&1 | grep -v "Warn\|: +" | tee $OUT/ce-split-late.txt
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py tests/test_cluster.py \
      -k "cross_entropy or cluster_rows or finish or outside" -rfE > $OUT/tests-late.txt 2>&1
    echo "tests rc=$? at $SECONDS s"; tail -3 $OUT/tests-late.txt
    patch -R -p1 < $D/late-factor.patch ;;
  biased-configs)
    for cell in "fp32 biased 50257" "fp32 biased log 50257" "bf16 biased 262144" "bf16 biased log 262144"; do
      name=$(echo $cell | tr ' ' '-')
      timeout 250 python3 scripts/cluster-configs.py $OUT/configs-$name.csv $cell 2>&1 | grep -v Warn \
        | grep -E "BEST|default|error|WRONG"
    done ;;
  scaled-configs)
    timeout 300 python3 scripts/cluster-configs.py $OUT/configs-scaled-bf16.csv bf16 scaled 50257 151936 32768 2>&1 \
      | grep -v Warn | grep -E "BEST|default|error|WRONG" ;;
  ab-caps) timeout 300 python3 $D/ab-caps.py $OUT/ab-caps.csv 2>&1 | grep -v Warn | tee $OUT/ab-caps.txt ;;
  sweep)
    id=$1; shift
    timeout 500 python3 -m softmax_bench sweep --out $OUT/runs --preset default --run-id $id "$@" > $OUT/$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s"; tail -14 $OUT/$id.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
