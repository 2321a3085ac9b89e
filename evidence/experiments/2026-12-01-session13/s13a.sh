#!/usr/bin/env bash
# $1 = t38 or t36: the cluster and instrument parts, then the bias's own tests (kernels, replay, compile, CLI)
tag=$1
if [ "$tag" = t38 ]; then . .ab/device-setup.sh; else export PYTHONPATH=$PWD; fi
GPU_TEST_WORKERS=16 PART_TIMEOUT=280 EXTRA="--timeout=240" bash .ab/gpu2.sh $tag cluster instrument 2>&1 | tee $OUT/$tag-summary.txt
export PYTHONPATH=$PYTHONPATH:/tmp/site
start=$SECONDS
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 16 -rfE --timeout=180 tests/test_bias.py tests/test_replay.py tests/test_compile.py "tests/test_cli.py::test_op_sweeps_check_and_time_every_variant" > $OUT/$tag-bias-tests.txt 2>&1
echo "$tag bias tests: rc=$? $((SECONDS - start)) s: $(tail -1 $OUT/$tag-bias-tests.txt)" | tee -a $OUT/$tag-summary.txt
