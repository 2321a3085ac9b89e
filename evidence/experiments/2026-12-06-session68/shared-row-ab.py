"""A/B of the cluster's rows held in shared memory (kernels/shared_row.py) against the same rows held in registers
(shared_row.SHARED_ROWS off), in one process on one GPU: at 512x262144, biased bf16 (a bias of x's shape) and causal
fp32 (512 queries), softmax and log_softmax, scale 0.125, through softmax_bench's auto. Each form: the two checked against
each other, then timed alternately (the project's timer, three rounds each), median of the three, % of the
roofline: the bytes it moves (the causal rows' kept columns read, y written) at the bandwidth of a copy timed first.

    python3 shared-row-ab.py   (GPU)"""
import os
import sys

import torch

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
import softmax_bench  # noqa: E402
from softmax_bench.dispatch import clear_caches  # noqa: E402
from softmax_bench.kernels import shared_row  # noqa: E402
from softmax_bench.kernels.eager import causal_mask  # noqa: E402
from softmax_bench.timing import TimingSettings, measure  # noqa: E402

M, N = 512, 262144
settings = TimingSettings(warmup_ms=10, rep_ms=50)
x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
y = torch.empty_like(x)
copy_ms = min(measure(lambda: y.copy_(x), settings, interpret=False).ms for _ in range(3))
gbps = 2 * x.nbytes / copy_ms / 1e6
print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(),
      f"copy_ of bf16 {M}x{N} {copy_ms * 1e3:.1f} us, {gbps:.0f} GB/s", flush=True)


def held(in_shared_memory: bool) -> None:
    shared_row.SHARED_ROWS = in_shared_memory
    clear_caches()  # a call like an earlier one replays its launch


for form, dtype in (("biased", torch.bfloat16), ("causal", torch.float32)):
    x = torch.randn(M, N, dtype=dtype, device="cuda")
    if form == "biased":
        kwargs, moved = {"bias": torch.randn(M, N, dtype=dtype, device="cuda")}, 3 * x.nbytes
    else:
        kwargs = {"causal": True}
        moved = ((~causal_mask(M, N, M, "cuda")).sum().item() + M * N) * x.element_size()
    for log in (False, True):
        call = softmax_bench.log_softmax if log else softmax_bench.softmax
        results = {}
        for shared in (False, True):
            held(shared)
            results[shared] = call(x, scale=0.125, **kwargs).clone()
        err = (results[True].double() - results[False].double()).abs().nan_to_num().max().item()
        figures = {False: [], True: []}
        for _ in range(3):
            for shared in (False, True):
                held(shared)
                call(x, scale=0.125, **kwargs)
                figures[shared].append(measure(lambda: call(x, scale=0.125, **kwargs), settings, interpret=False).ms)
        label = f"{form} {'log ' if log else ''}{str(dtype)[6:]} {M}x{N}"
        for shared in (False, True):
            ms = sorted(figures[shared])
            print(f"{label:>28} {'shared memory' if shared else 'registers':>13}: {ms[1] * 1e3:8.1f} us "
                  f"(of 3: {ms[0] * 1e3:.1f}-{ms[2] * 1e3:.1f}), {100 * moved / gbps / 1e6 / ms[1]:5.1f} % of the "
                  f"roofline", flush=True)
        print(f"{label:>28} max |shared - registers| {err:.3g}", flush=True)
