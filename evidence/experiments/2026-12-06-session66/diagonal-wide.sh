. .ab/device-setup.sh > /dev/null; export PYTHONUNBUFFERED=1
p=evidence/experiments/2026-12-06-session62/diagonal-store.patch
shapes="--shape 8192x16384 --shape 4096x32768 --shape 2048x65536 --shape 1024x131072 --shape 512x262144 --shape 8192x50257 --shape 4096x128256 --shape 2048x151936"
for log in "" --log; do for patched in "" 1; do
  id=dw${log:+-log}-${patched:+patch}${patched:-head}
  [[ $patched ]] && patch -s -p1 < $p
  SOFTMAX_BENCH_COMMIT=$COMMIT timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id --op causal $log --dtype bf16 --dtype fp32 $shapes --variant auto > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s"
  [[ $patched ]] && patch -s -R -p1 < $p
done; done
python3 - <<'PY'
import pandas as pd, os
out=os.environ['OUT']
for log in ['', '-log']:
    h=pd.read_csv(f'{out}/runs/dw{log}-head/rows.csv'); q=pd.read_csv(f'{out}/runs/dw{log}-patch1/rows.csv')
    for a,b in zip(h.itertuples(), q.itertuples()):
        print(f'causal{log} {a.dtype} {a.M}x{a.N}: head {a.pct_of_roofline:.1f} r{a.n_regs}  patch {b.pct_of_roofline:.1f} r{b.n_regs} sp{b.n_spills} {b.config}')
PY
cd $OUT && tar czf all.tgz runs sweep-* && rm -rf runs sweep-*
