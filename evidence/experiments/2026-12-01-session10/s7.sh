#!/usr/bin/env bash
# issue 26: cluster configurations for the fused ops at the wide widths (Triton 3.8): Triton's cache filled by
# COMPILE_ONLY processes side by side, then one timing process per (dtype, op), and the cluster tests of masks
export PYTHONUNBUFFERED=1
start=$SECONDS
W="50257 65536 128256 131072 151936 262144"
i=0
for dt in bf16 fp32; do for op in scaled-masked causal; do for N in $W; do
  COMPILE_ONLY=1 timeout 240 python3 scripts/cluster-configs.py /dev/null $dt $op $N > $OUT/compile-$dt-$op-$N.txt 2>&1 &
done; done; done
wait
echo "compiled: $((SECONDS - start)) s"; grep -l -i error $OUT/compile-*.txt | head
timeout 200 python3 -m pytest -q -x -p no:randomly tests/test_cluster.py -k "scale_mask or causal" > $OUT/tests.txt 2>&1
echo "tests rc=$? $((SECONDS - start)) s"; tail -3 $OUT/tests.txt
for dt in bf16 fp32; do for op in scaled-masked causal; do
  timeout ${CFG_TIMEOUT:-100} python3 scripts/cluster-configs.py $OUT/cfg-$dt-$op.csv $dt $op $W > $OUT/cfg-$dt-$op.txt 2>&1
  echo "cfg $dt $op rc=$? $((SECONDS - start)) s"; grep BEST $OUT/cfg-$dt-$op.txt
done; done
