#!/usr/bin/env bash
# issue 26: the cluster tests of fused forms on the GPU, then configurations for the fused ops at the wide widths
export PYTHONUNBUFFERED=1
start=$SECONDS
W="50257 65536 128256 131072 151936 262144"
for dt in bf16 fp32; do for op in scaled-masked causal; do for N in $W; do
  COMPILE_ONLY=1 timeout 200 python3 scripts/cluster-configs.py /dev/null $dt $op $N > $OUT/compile-$dt-$op-$N.txt 2>&1 &
done; done; done
timeout 200 python3 -m pytest -q -x -p no:randomly -n 8 tests/test_cluster.py -k "scale_mask or causal or mask" > $OUT/tests.txt 2>&1
echo "tests rc=$? $((SECONDS - start)) s"; tail -3 $OUT/tests.txt
wait
echo "compiled: $((SECONDS - start)) s"; cat $OUT/compile-*.txt | grep -i error | head -5
for dt in bf16 fp32; do for op in scaled-masked causal; do
  timeout ${CFG_TIMEOUT:-100} python3 scripts/cluster-configs.py $OUT/cfg-$dt-$op.csv $dt $op $W > $OUT/cfg-$dt-$op.txt 2>&1
  echo "cfg $dt $op rc=$? $((SECONDS - start)) s"; grep BEST $OUT/cfg-$dt-$op.txt
done; done
rm -f $OUT/compile-*.txt
