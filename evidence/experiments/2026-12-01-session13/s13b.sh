#!/usr/bin/env bash
# the biased op over the default grid, with eager and torch.compile in the same run (Triton 3.8)
. .ab/device-setup.sh
export PYTHONPATH=$PYTHONPATH:/tmp/site
start=$SECONDS
timeout 540 python3 -m softmax_bench sweep --preset default --op biased --variant auto --variant eager --variant torch_compile --out /tmp/runs > $OUT/biased-sweep.txt 2>&1
echo "rc=$? $((SECONDS - start)) s" | tee -a $OUT/biased-sweep.txt
for d in /tmp/runs/*/; do mkdir -p $OUT/runs/$(basename $d); cp $d/rows.csv $d/meta.json $OUT/runs/$(basename $d)/ 2>/dev/null; done
ls -R $OUT | head
