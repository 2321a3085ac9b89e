"""A shared keep-mask's phase copies in bits (cluster.MASK_BITS, BACKWARD_MASK_BITS) against its byte copies, in one
process: auto's call at key-padded bf16 8192x50257 ([128, 64, 50257] x, a [128, 1, 50257] mask: 64 rows of x a row
of it) and 2048x50257, softmax, log_softmax and the log's backward, the switch off and on alternating, ROUNDS times,
timed with the project's timer (L2 clean before each call), beside a copy of x (x read, y written: the forward's
floor less the mask's bytes); then the copies alone (masking.phased_rows against phased_bits). Each cell's outputs on
and off compared bit for bit first.

    python3 bits-ab.py
"""

import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.kernels import cluster, masking
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=25, rep_ms=200, l2="clean")
ROUNDS = 3


def ab(name: str, switch: str, call) -> None:
    """call() with cluster's `switch` off and on: its outputs compared bit for bit, then timed alternating."""
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
    print(f"  {name}: same bits {same}; byte copies {' '.join(f'{t:.1f}' for t in times[False])} µs; "
          f"bits {' '.join(f'{t:.1f}' for t in times[True])} µs")


torch.manual_seed(0)
for batch in (128, 32):
    x = torch.randn(batch, 64, 50257, device="cuda").to(torch.bfloat16)
    keep = torch.rand(batch, 1, 50257, device="cuda") > 0.1
    y = torch.empty_like(x)
    copy_us = 1000 * measure(lambda: y.copy_(x), SETTINGS, False).ms
    print(f"{batch * 64}x50257: copy of x {copy_us:.1f} µs")
    for fn in (softmax_bench.softmax, softmax_bench.log_softmax):
        ab(fn.__name__, "MASK_BITS", lambda: fn(x, scale=0.125, mask=keep, variant="auto"))
    # the log's backward (BACKWARD_MASK_BITS), auto's, from the log_softmax's y and a random dy
    y = softmax_bench.log_softmax(x, scale=0.125, mask=keep, variant="auto")
    dy = torch.randn_like(y)
    ab("log_softmax backward", "BACKWARD_MASK_BITS",
       lambda: dispatch.softmax_backward(y, dy, -1, 0.125, keep, False, "auto", log=True))
    rows = keep.reshape(batch, 50257).to(torch.uint8)
    for name, copies in (("byte copies", lambda: masking.phased_rows(rows, 8)),
                         ("copies in bits", lambda: masking.phased_bits(rows, 8))):
        print(f"  {name} alone: {' '.join(f'{1000 * measure(copies, SETTINGS, False).ms:.1f}' for _ in range(3))} µs")
