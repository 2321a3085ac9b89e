# GPU tests of the cluster kernels, then old (ce322ca: vector shares, a reduction a piece) against new, A B A B
. .bundles/device-setup.sh
ROOT=$PWD
mkdir -p /root/z
timeout 260 python3 -m pytest -q -x tests/test_cluster.py tests/test_cluster_backward.py tests/test_log_softmax.py > /root/z/gpu-tests.txt 2>&1; echo "tests rc=$?" >> /root/z/gpu-tests.txt
tail -n 3 /root/z/gpu-tests.txt
cd scripts
for i in 1 2; do for code in old new; do
if [ $code = old ]; then PP=/root/sb-site:$ROOT/devrun/old; else PP=/root/sb-site:$ROOT; fi
for spec in "fp32 backward 151936 50257" "fp32 forward 151936 50257" "bf16 backward 151936" "bf16 forward 151936"; do
tag=$(echo "$code $i $spec" | tr ' ' '_')
echo "== $code $i $spec" >> /root/z/ab.txt
PYTHONPATH=$PP timeout 60 python3 line-steps.py /root/z/ab-$tag.csv $spec rounds=3 >> /root/z/ab.txt 2>&1; echo "rc=$?" >> /root/z/ab.txt
done; done; done
grep "==\|median\|rc=[^0]\|WRONG\|rror" /root/z/ab.txt | grep -v whole-pieces
tar czf $OUT/z.tgz -C /root z
