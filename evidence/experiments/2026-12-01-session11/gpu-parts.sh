#!/usr/bin/env bash
# issue 32: the suite's GPU parts under the Triton given by PYTHONPATH (3.8 bundle or the image's 3.6)
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/expecttest-*.whl .ab/whl/nvidia_ml_py-*.whl .ab/whl/liger_kernel-*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site
tag=$1; shift
python3 -c "import triton, torch, xdist, pynvml; print('$tag: triton', triton.__version__, 'torch', torch.__version__, 'xdist', xdist.__version__, 'nvml', pynvml.__file__)"
for part in "$@"; do
  start=$SECONDS
  timeout ${PART_TIMEOUT:-140} bash scripts/gpu-tests.sh $part --durations=${DURATIONS:-8} -rfE ${EXTRA:-} > $OUT/$tag-$part.txt 2>&1
  rc=$?
  echo "$tag $part: rc=$rc $((SECONDS - start)) s: $(tail -1 $OUT/$tag-$part.txt)"
done
