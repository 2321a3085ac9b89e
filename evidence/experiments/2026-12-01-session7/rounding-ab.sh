#!/usr/bin/env bash
# cluster bf16 forward on the wide rows: old (5f3bfbb: exponentials held in bf16), recompute (d636a94: x held, exp
# again at the end), hold32 (working tree: exponentials held in fp32), each from its own folder (python -m takes
# the cwd's package first), twice; then the rounding test of cluster alone on the working tree
export PYTHONUNBUFFERED=1
ROOT=$PWD  # the repository root; old trees: git archive 5f3bfbb softmax_bench | tar -x -C .ab/old (d636a94: .ab/recompute)
for i in 1 2; do for tree in old recompute hold32; do
  dir=$ROOT/.ab/$tree; [ $tree = hold32 ] && dir=$ROOT
  start=$SECONDS
  (cd $dir && timeout 100 python3 -m softmax_bench sweep --config $ROOT/configs/wide-rows.toml --dtype bf16 \
     --variant cluster --out /root/ab --run-id $tree-$i > /dev/null 2>/root/ab-err-$tree-$i.txt)
  echo "$tree-$i: rc=$? $((SECONDS - start)) s, $(cd $dir && python3 -c 'import softmax_bench, os; print(os.path.dirname(softmax_bench.__file__))')"
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
t.to_csv(os.environ["OUT"] + "/ab-cluster-bf16-holding.csv")
r = d.pivot_table(index=["dtype", "N"], columns="run", values="n_regs")
print(r.to_string())
PY
timeout 150 python3 -m pytest -q -p no:cacheprovider -n 4 tests/test_rounding.py -k cluster 2>&1 | tail -4
