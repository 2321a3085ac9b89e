#!/usr/bin/env bash
# issue 32 at HEAD: $1 = t38 or t36
tag=$1
if [ "$tag" = t38 ]; then . .ab/device-setup.sh; else export PYTHONPATH=$PWD; fi
git log -1 --format=%h 2>/dev/null > $OUT/commit.txt
GPU_TEST_WORKERS=16 PART_TIMEOUT=280 EXTRA="--timeout=240" bash .ab/gpu2.sh $tag kernels backward sweeps 2>&1 | tee $OUT/$tag-summary.txt
