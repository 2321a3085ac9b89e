"""Issue 29 item 3 and issue 26 in a compiled model: softmax_bench.prologue_folding (scale_folding when it ran,
c820de2–724e15d), on and off, in the same process.

1. The compiled training step of step-host.py's model (softmax with a scale and a keep-mask, then log_softmax of it
   times 4; 64x4000 bf16; fullgraph; forward then backward of dy), host µs a step as scripts/host-cost.py times a
   call, every row's rounds in turn (ROUNDS, default 9): torch's ops; ours as written (the fold on); ours with the
   fold off (inductor's pre-grad pass slot empty while it compiles); ours with the `* 4.0` given by hand as the
   scale (the fifty-second session's row).
2. The GPU's time of a compiled `softmax(x * 0.125)` at bf16 16384x8192 and fp32 8192x8192 (softmax_bench.timing,
   L2 clean): ours folded, ours not folded, torch.compile of torch.softmax(x * 0.125).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session60/fold-scales.py [ROUNDS]
"""

import contextlib
import importlib
import sys

import torch
from torch._inductor import config

import softmax_bench
from softmax_bench import prologue_folding
from softmax_bench.timing import TimingSettings, measure

host_cost = importlib.import_module("host-cost")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
M, N = 64, 4000


def ours(x, keep):
    return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1)


MODELS = {  # name → (model, the fold off while it compiles)
    "torch: both layers": (lambda x, keep: torch.log_softmax(
        torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1), False),
    "ours: folded (as written)": (ours, False),
    "ours: fold off": (lambda x, keep: ours(x, keep), True),  # a code object of its own: dynamo's cache is by code
    "ours, written as torch's": (lambda x, keep: softmax_bench.log_softmax(softmax_bench.softmax(
        (x * 0.125).masked_fill(~keep, float("-inf"))) * 4.0, dim=-1), False),
    "ours: *4 as log's scale by hand": (lambda x, keep: softmax_bench.log_softmax(
        softmax_bench.softmax(x, scale=0.125, mask=keep), dim=-1, scale=4.0), False),
}


folds = []
fold_prologues = prologue_folding.fold_prologues
prologue_folding.fold_prologues = lambda graph: folds.append(fold_prologues(graph)) or folds[-1]


def compiled(fn, fold_off: bool, *args):
    """torch.compile(fn, fullgraph=True), compiled by a first call on args with the fold off or not; prints how
    many multiplies the pass folded."""
    model = torch.compile(fn, fullgraph=True)  # no dynamo reset: it would recompile the models before, the pass on
    folds.clear()
    with config.patch(pre_grad_custom_pass=None) if fold_off else contextlib.nullcontext():
        model(*args)
    print(f"    compiled: {sum(folds)} folded" + (" (the fold off)" if fold_off else ""))
    return model


x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
keep = torch.rand(N, device="cuda") > 0.2
dy = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
softmax_bench.softmax(x.detach(), scale=0.5)  # a trace installs the pass: compile once so that it is there
torch.compile(lambda t: softmax_bench.softmax(t, scale=0.5), fullgraph=True)(x.detach())
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, pass: {type(config.pre_grad_custom_pass).__name__}")
steps, grads = [], {}
for name, (fn, fold_off) in MODELS.items():
    model = compiled(fn, fold_off, x, keep)

    def step(model=model):
        x.grad = None
        model(x, keep).backward(dy)

    step()
    grads[name] = x.grad.clone()
    steps.append(step)
for name in list(MODELS)[1:]:
    torch.testing.assert_close(grads[name].float(), grads["torch: both layers"].float(), atol=2e-2, rtol=2e-2)
timed = host_cost.interleaved(steps, 200, 20, rounds)
base = timed[0][0]
print(f"compiled training step, bf16 {M}x{N}, host µs a step (median of {rounds} rounds taken in turn):")
for name, (host, call, each) in zip(MODELS, timed):
    ratios = sorted(h / t for h, t in zip(each, timed[0][2]))
    print(f"  {name:34} host_us {host:8.2f} call_us {call:8.2f}  × torch {host / base:5.3f} "
          f"(rounds' ratios p20–p80 {ratios[len(ratios) // 5]:.3f}–{ratios[4 * len(ratios) // 5]:.3f})")

settings = TimingSettings()
print("compiled softmax(x * 0.125), GPU ms (median, p20–p80), L2 clean:")
for dtype, (m, n) in ((torch.bfloat16, (16384, 8192)), (torch.float32, (8192, 8192))):
    big = torch.randn(m, n, device="cuda", dtype=dtype)
    expected = torch.softmax(big.double() * 0.125, -1)
    rows = {"ours, folded": compiled(lambda t: softmax_bench.softmax(t * 0.125), False, big),
            "ours, fold off": compiled(lambda t: softmax_bench.softmax(t * 0.125), True, big),
            "torch.compile": compiled(lambda t: torch.softmax(t * 0.125, -1), False, big)}
    for name, model in rows.items():
        torch.testing.assert_close(model(big).double(), expected, atol=2e-3 if dtype == torch.bfloat16 else 1e-6,
                                   rtol=1.6e-2 if dtype == torch.bfloat16 else 1e-5)
        t = measure(lambda: model(big), settings, False)
        gbs = 2 * big.numel() * big.element_size() / (t.ms * 1e-3) / 1e9
        print(f"  {str(dtype)[6:]:8} {m}x{n} {name:16} {t.ms:8.4f} ms ({t.ms_p20:.4f}–{t.ms_p80:.4f})  "
              f"{gbs:7.1f} GB/s of x read once and y written once")
