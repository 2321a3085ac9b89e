"""A shared mask's and a shared bias's rows read in place (cluster.MASK_IN_PLACE, BIAS_IN_PLACE) against their phase
copies, in one process: auto's call at key-padded and biased rows/64 bf16 8192x50257 ([128, 64, 50257] x, a
[128, 1, 50257] mask or bias: 64 rows of x a row of it), softmax and log_softmax, the switch off and on alternating,
ROUNDS times, timed with the project's timer (L2 clean before each call), beside a copy of x (x read, y written: the
floor less the mask's or bias's bytes). Each cell's outputs on and off compared bit for bit first.

    python3 inplace-ab.py
"""

import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.kernels import cluster
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=25, rep_ms=200, l2="clean")
ROUNDS = 3
torch.manual_seed(0)
x = torch.randn(128, 64, 50257, device="cuda").to(torch.bfloat16)
keep = torch.rand(128, 1, 50257, device="cuda") > 0.1
bias = torch.randn(128, 1, 50257, device="cuda").to(torch.bfloat16)
y = torch.empty_like(x)
copy_us = 1000 * measure(lambda: y.copy_(x), SETTINGS, False).ms
print(f"copy of x: {copy_us:.1f} µs")
for switch, fused in (("MASK_IN_PLACE", {"mask": keep}), ("BIAS_IN_PLACE", {"bias": bias})):
    for fn in (softmax_bench.softmax, softmax_bench.log_softmax):
        call = lambda: fn(x, scale=0.125, variant="auto", **fused)  # noqa: E731
        outputs, times = {}, {False: [], True: []}
        for on in (False, True):
            setattr(cluster, switch, on)
            dispatch.clear_caches()
            outputs[on] = call()
        same = torch.equal(outputs[False].view(torch.int16), outputs[True].view(torch.int16))
        for _ in range(ROUNDS):
            for on in (False, True):
                setattr(cluster, switch, on)
                dispatch.clear_caches()
                call()
                times[on].append(1000 * measure(call, SETTINGS, False).ms)
        setattr(cluster, switch, False)
        print(f"{switch} {fn.__name__}: same bits {same}; copies {' '.join(f'{t:.1f}' for t in times[False])} µs; "
              f"in place {' '.join(f'{t:.1f}' for t in times[True])} µs")
