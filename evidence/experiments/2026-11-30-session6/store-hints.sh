# store cache hints on the cluster kernels (experiment hack through env vars; scripts/line-steps.py)
. .bundles/device-setup.sh
mkdir -p /root/y
cd scripts
for env in "SB_NONE=1" "SB_STORE_CM=.cs" "SB_STORE_EV=evict_first"; do
for spec in "fp32 backward 151936 128256" "bf16 backward 151936" "fp32 forward 151936"; do
tag=$(echo "$env $spec" | tr ' =.' '___')
echo "== $env $spec" >> /root/y/hints.txt
env $env timeout 100 python3 line-steps.py /root/y/hints-$tag.csv $spec rounds=5 >> /root/y/hints.txt 2>&1; echo "rc=$?" >> /root/y/hints.txt
done; done
cd ..
grep "==\|median\|rc=\|WRONG\|rror" /root/y/hints.txt
tar czf $OUT/y.tgz -C /root y
