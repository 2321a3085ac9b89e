#!/usr/bin/env bash
# issue 28: cluster's 16-bit softmax rounded once (ftz patch, working tree) against HEAD (.ab/old), wide rows,
# bf16 and fp16, alternating processes, twice; the rounding test of cluster; auto over default and wide rows
export PYTHONUNBUFFERED=1
ROOT=$PWD
python3 -m pip list 2>/dev/null | grep -i -E "^(typer|click|rich|pytest|pytest-xdist|pandas|matplotlib) "
for i in 1 2; do for tree in old new; do
  dir=$ROOT/.ab/$tree; [ $tree = new ] && dir=$ROOT
  start=$SECONDS
  (cd $dir && timeout 120 python3 -m softmax_bench sweep --config $ROOT/configs/wide-rows.toml --dtype bf16 --dtype fp16 \
     --variant cluster --out /root/ab --run-id $tree-$i > /dev/null 2>/root/ab-err-$tree-$i.txt)
  echo "$tree-$i: rc=$? $((SECONDS - start)) s, $(cd $dir && python3 -c 'import softmax_bench, os; print(os.path.dirname(softmax_bench.__file__))')"
  tail -2 /root/ab-err-$tree-$i.txt
done; done
python3 - <<'PY'
import os, pandas as pd
frames = []
for run in sorted(os.listdir("/root/ab")):
    p = f"/root/ab/{run}/rows.csv"
    if os.path.exists(p):
        d = pd.read_csv(p); d["run"] = run; frames.append(d)
d = pd.concat(frames)
t = d.pivot_table(index=["dtype", "N"], columns="run", values="pct_of_copy")
print(t.round(2).to_string())
t.to_csv(os.environ["OUT"] + "/ab-cluster-ftz.csv")
r = d.pivot_table(index=["dtype", "N"], columns="run", values="n_regs")
print(r.to_string())
PY
start=$SECONDS
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_rounding.py tests/test_cluster.py 2>&1 | tail -5
echo "rounding+cluster tests: $((SECONDS - start)) s"
for spec in "--preset default:softmax-auto-h200-f" "--config configs/wide-rows.toml --dtype bf16 --dtype fp16 --dtype fp32:wide-rows-auto-h200-f"; do
  start=$SECONDS
  timeout 150 python3 -m softmax_bench sweep ${spec%%:*} --variant auto --out /root/runs --run-id ${spec##*:} > /root/sweep.txt 2>&1
  echo "sweep ${spec##*:}: rc=$? $((SECONDS - start)) s"; tail -3 /root/sweep.txt
done
tar -czf $OUT/runs.tgz -C /root runs ab
