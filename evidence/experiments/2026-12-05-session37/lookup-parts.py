"""Parts of a replayed call's look-up, timed on this CPU: the first version's C look-up (launcher.replayed, not
kept; this script needs that version's launcher.c), replay's Python look-up, plan_key, softmax_bench.softmax served
by a plan that does nothing, is_compiling. Best of 7 rounds of 200000 calls."""
import timeit, torch
from softmax_bench import launcher, replay
import softmax_bench
m = launcher.built()
x = torch.randn(64, 4000).to(torch.bfloat16)
class P:
    def __call__(self, x, mask, bias=None): return x
replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto")] = P()
n=200000
def t(stmt, g):
    best=min(timeit.repeat(stmt, globals=g, number=n, repeat=7))/n*1e6
    print(f"{best:.3f} µs  {stmt}")
g=dict(x=x, torch=torch, m=m, replay=replay, sb=softmax_bench, P=P())
t("m.replayed(x, -1, None, None, None, False, 'auto', False, None)", g)
t("replay.replayed(x, -1, None, None, None, False, 'auto', False, None)", g)
t("replay.plan_key(x, -1, None, None, False, 'auto')", g)
t("sb.softmax(x)", g)
t("torch.compiler.is_compiling()", g)
t("P(x, None, None)", g)
