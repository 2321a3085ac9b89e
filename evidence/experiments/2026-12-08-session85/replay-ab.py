"""A call with phase copies replayed (its copies a scratch buffer of the plan's, kernels.scratch) against the same
call taking the long way each time (masking.scratch made a no-op: the copies then keep the call from being replayed),
in one process: auto's softmax with a mask or a bias 64 rows of x share, off x's 16-byte grid, bf16, at
[128, 64, 50257] (the bar's 8192x50257 cells: the kernel sets the pace) and [4, 64, 32769] (16.8 MB: the host may),
the two ways alternating, ROUNDS times, timed with the project's timer (ms, call_ms, host_us). Each cell's outputs
both ways compared bit for bit first.

    python3 replay-ab.py
"""

import torch

import softmax_bench
from softmax_bench import dispatch, replay
from softmax_bench.kernels import masking
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=25, rep_ms=200, l2="clean")
ROUNDS = 2
named = masking.scratch
torch.manual_seed(0)
for B, N in ((128, 50257), (4, 32769)):
    x = torch.randn(B, 64, N, device="cuda").to(torch.bfloat16)
    keep = torch.rand(B, 1, N, device="cuda") > 0.1
    bias = torch.randn(B, 1, N, device="cuda").to(torch.bfloat16)
    for form, fused in (("key-padded", {"mask": keep}), ("biased rows/64", {"bias": bias})):
        call = lambda: softmax_bench.softmax(x, scale=0.125, variant="auto", **fused)  # noqa: E731
        outputs, times = {}, {False: [], True: []}
        for replayed in (False, True):
            masking.scratch = named if replayed else (lambda tensor: tensor)
            dispatch.clear_caches()
            outputs[replayed] = [call() for _ in range(3)][-1]
            kinds = {type(plan).__name__ for plan in replay.PLANS.values()}
            print(f"{form} {B}x64x{N} replayed={replayed}: plans {len(replay.PLANS)} {sorted(kinds)}")
        same = torch.equal(outputs[False].view(torch.int16), outputs[True].view(torch.int16))
        for _ in range(ROUNDS):
            for replayed in (False, True):
                masking.scratch = named if replayed else (lambda tensor: tensor)
                dispatch.clear_caches()
                times[replayed].append(measure(call, SETTINGS, False))
        masking.scratch = named
        for replayed in (False, True):
            line = " | ".join(f"ms {1000 * t.ms:.1f} call {1000 * t.call_ms:.1f} host {t.host_us:.1f}"
                              for t in times[replayed])
            print(f"{form} {B}x64x{N} {'replayed' if replayed else 'long way'} (µs): {line}")
        print(f"{form} {B}x64x{N}: same bits both ways: {same}")
