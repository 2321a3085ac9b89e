#!/usr/bin/env bash
# The next device session's commands, one device command a step, experiments first (this session's device time went
# to the test parts, and the experiments below found none left):
#   bash evidence/experiments/2026-12-02-session14/next.sh prep        (here, not on the device: builds .bundles, .ab)
#   bash evidence/experiments/2026-12-02-session14/next.sh ce|ce-cluster|packed|t38-a|t38-b|t38-c|t36|t36-b (device)
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (".bundles" whole while it held Triton's bundle alone; with
# Quack's parts there too it is over a run's 64 MiB): .ab/device-setup.sh (../shared/tools/device-setup.sh),
# .ab/gpu2.sh (session 11's gpu-parts.sh), .ab/whl (expecttest, nvidia-ml-py, liger-kernel) and, for `ce`, .ab/old
# (`git archive acd1426 softmax_bench | tar -x -C .ab/old`: the loss before its backward stopped asking the host).
# Outputs under $OUT.
set -u
D=evidence/experiments/2026-12-02-session14
step=$1
parts() { GPU_TEST_WORKERS=16 PART_TIMEOUT=280 EXTRA="--timeout=240 -rs" bash .ab/gpu2.sh "$@"; }  # -rs: why skipped
case $step in
  prep)  # the carried folders, git-ignored: the Triton 3.8 bundle (~4 min), the scripts, the wheels, acd1426's package
    [ -f .bundles/triton-3.8.0-slim.tar.xz ] || ../shared/tools/device-bundles.sh triton
    mkdir -p .ab/whl .ab/old .git/info && grep -qx '/.ab/' .git/info/exclude 2>/dev/null || echo '/.ab/' >> .git/info/exclude
    cp ../shared/tools/device-setup.sh .ab/ && cp evidence/experiments/2026-12-01-session11/gpu-parts.sh .ab/gpu2.sh
    (cd .ab/whl && python3 -m pip download -q --no-deps expecttest nvidia-ml-py liger-kernel)
    git archive acd1426 softmax_bench | tar -x -C .ab/old
    du -sh .bundles .ab ;;
  ce)  # the step without a synchronization against acd1426, alternating, twice (~2 min); then the loss's GPU tests
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1 && B=$PYTHONPATH
    for i in 1 2; do for tree in old new; do
      if [ $tree = old ]; then P=/root/sb-site:$PWD/.ab/old:$PWD/scripts; else P=$B:$PWD/scripts; fi
      PYTHONPATH=$P timeout 60 python3 $D/ce-sync.py $tree-$i $OUT/ce-sync-$tree-$i.csv > $OUT/ce-sync-$tree-$i.txt 2>&1
      echo "$tree-$i rc=$?"; cat $OUT/ce-sync-$tree-$i.txt
    done; done
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py tests/test_real_model.py \
      -rfE > $OUT/t38-ce-tests.txt 2>&1; tail -3 $OUT/t38-ce-tests.txt ;;
  ce-cluster)  # kernels/cross_entropy.CLUSTER_ROWS: its sm_90 compile and GPU tests, then the A/B (~4 min)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py tests/test_cluster.py \
      -k "rows_on_a_cluster or cross_entropy_rows_compile" -rfE 2>&1 | tail -4
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 300 python3 $D/ab-ce-cluster.py $OUT/ab-ce-cluster.csv ;;
  packed)  # cluster.MASK_PACKED: its bit-for-bit test, then the A/B (~3 min)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 120 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cluster.py -k "packed" -rfE 2>&1 | tail -3
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 300 python3 $D/ab-mask-packed.py $OUT/ab-mask-packed.csv ;;
  t38-a) . .ab/device-setup.sh && parts t38 kernels backward ;;            # ~3.5 min
  t38-b) . .ab/device-setup.sh && parts t38 cluster instrument ;;          # ~5 min
  t38-c) . .ab/device-setup.sh && parts t38 sweeps ;;                      # ~4 min
  t36) export PYTHONPATH=$PWD && parts t36 kernels backward cluster instrument ;;  # ~6 min
  t36-b) export PYTHONPATH=$PWD && parts t36 sweeps ;;                     # ~4 min
  *) echo "usage: next.sh prep|ce|ce-cluster|packed|t38-a|t38-b|t38-c|t36|t36-b" >&2; exit 2 ;;
esac
