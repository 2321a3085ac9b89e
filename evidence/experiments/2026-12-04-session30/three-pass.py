"""Issue 26: torch.compile's scaled softmax of fp32 rows of 8192 and 16384 runs at 101–102 % of a copy, fused at
97–99, two_pass at 67–79 (wide-variants/). Inductor's kernel (inductor-code/) walks each row three times in
chunks: the max, the sum of exponentials, then the output; its first two loads keep the row in L2
(eviction_policy='evict_last'), its last lets it go ('evict_first'). This is that kernel, written plainly, in
chunks of 1024–4096 with 4–16 warps, with and without the eviction hints, beside fused and torch.compile, in
alternating rounds after a copy of the same bytes (config_timing.in_rounds); each output checked first.
Prediction: with the hints, its best tile within 1 point of torch.compile and ahead of fused; without them,
below fused (the second and third reads go to HBM once other rows push the row out of L2).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session30/three-pass.py OUT.csv [WARPS ...]

With WARPS (the second run, after the first's 16 warps led): those warps, with the hints only.
Prediction for 32 warps: at 16384 (best 88.9 with 16) within 2 points of torch.compile.
"""
import itertools
import sys

import torch
import triton
import triton.language as tl

from config_timing import ELEMS, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import TOLERANCES, fused, one_pass_traffic
from softmax_bench.peers import PEERS


@triton.jit
def three_pass_kernel(x_ptr, y_ptr, N, stride, scale, BLOCK: tl.constexpr, KEEP: tl.constexpr, DROP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, y_row = x_ptr + row * stride, y_ptr + row * stride
    cols = tl.arange(0, BLOCK)
    running_max = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in tl.range(0, N, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < N, other=-float("inf"), eviction_policy=KEEP)
        running_max = tl.maximum(running_max, x.to(tl.float32) * scale)
    row_max = tl.max(running_max, 0)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for start in tl.range(0, N, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < N, other=-float("inf"), eviction_policy=KEEP)
        running_sum += tl.exp(x.to(tl.float32) * scale - row_max)
    inverse = 1.0 / tl.sum(running_sum, 0)
    for start in tl.range(0, N, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < N, other=-float("inf"), eviction_policy=DROP)
        y = tl.exp(x.to(tl.float32) * scale - row_max) * inverse
        tl.store(y_row + start + cols, y.to(y_ptr.dtype.element_ty), mask=start + cols < N)


def three_pass(x, scale, block, warps, hints):
    y = torch.empty_like(x)
    keep, drop = ("evict_last", "evict_first") if hints else ("", "")
    three_pass_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), scale, BLOCK=block, KEEP=keep, DROP=drop,
                                     num_warps=warps)
    return y


write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "label", "round", "ms", "pct_of_copy", "copy_gbps"])
for N in (8192, 16384):
    M, dtype = ELEMS // N, torch.float32
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op("scaled").fusion_for(x)
    reference = ops.reference(x, fusion, torch.float32)
    atol, rtol = TOLERANCES[dtype]
    calls = {"fused": lambda: fused.launch(x, fusion)[0]}
    warp_counts = [int(a) for a in sys.argv[2:]]
    for block, warps, hints in itertools.product([1024, 2048, 4096], warp_counts or [4, 8, 16],
                                                 [True] if warp_counts else [True, False]):
        label = f"3pass b{block} w{warps}" + (" hints" if hints else "")
        call = lambda b=block, w=warps, h=hints: three_pass(x, fusion.scale, b, w, h)  # noqa: E731
        err = (call().float() - reference).abs().max().item()
        ok = err <= atol + rtol * reference.abs().max().item()
        print("scaled", N, label, f"err {err:.2g}", "" if ok else "WRONG", flush=True)
        if ok:
            calls[label] = call
    compiled = PEERS["torch_compile"].make(fusion)
    calls["torch_compile"] = lambda: compiled(x)
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds(calls, 3, dtype, nbytes, write, ["scaled", "fp32", M, N], marked="fused")
    del x, reference, calls, compiled
