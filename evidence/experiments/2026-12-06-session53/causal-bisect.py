"""Where do fused's 3–6 points under the best floor go at causal bf16 4096×4000? (floor2 on the H100: the floor with
rows last first 91–95.5 % of the roofline, fused 87–88.) The floor grown one piece at a time toward the softmax, in
fused's tile (a row a program, rows last first, kept columns read by 16-byte vectors), each timed in the same
process, in ROUNDS rounds in turn:
- step 0: the floor's bytes, x scaled and selected to -inf past the diagonal in fp32 (no reduction);
- step 1: + the row's max (one reduction across the program's warps), y = x·scale − max;
- step 2: + a second reduction, y = (x·scale − max) · 1 / Σ (x·scale − max);
- step 3: the softmax, exponentials by tl.exp2; step 4: by ex2.approx.ftz (fused's EXP_FTZ; compiled for sm_90
  the two are the same 520 SASS instructions, so step 3 checks the run's spread);
- step 4 in 1 and 2 warps (reductions within a warp's shuffles, more elements a thread), and fused as auto launches
  it.
Steps 3 and 4 are checked against torch's softmax of the causal op first.

    python3 causal-bisect.py [MxN:dtype ...] [ROUNDS=3]     (default: 4096x4000:bf16)
"""
import sys

import torch
import triton
import triton.language as tl

from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic
from softmax_bench.kernels.masking import exp2_ftz
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=50)
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


@triton.jit
def steps_kernel(x_ptr, y_ptr, M, N, causal_m, scale, BLOCK_N: tl.constexpr, STEP: tl.constexpr):
    row = tl.num_programs(0) - 1 - tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    inside = (row < M) & (cols < N)
    last = (row % causal_m) + (N - causal_m)
    vec = 128 // x_ptr.dtype.element_ty.primitive_bitwidth
    x = tl.load(x_ptr + row * N + cols, mask=inside & ((cols // vec) * vec <= last), other=-float("inf"))
    x = tl.where(cols <= last, x.to(tl.float32) * scale, -float("inf"))
    if STEP == 0:
        y = x
    else:
        row_max = tl.max(x, axis=0)
        shifted = x - tl.where(row_max == -float("inf"), 0.0, row_max)
        if STEP == 1:
            y = shifted
        elif STEP == 2:
            y = shifted * (1.0 / tl.sum(tl.where(cols <= last, shifted, 0.0), axis=0))  # one divide a row
        else:
            if STEP == 3:
                num = tl.exp2(shifted * 1.4426950408889634)
            else:
                num = exp2_ftz(shifted * 1.4426950408889634)
            total = tl.sum(num, axis=0)
            y = num * tl.where(total > 0, 1.0 / total, 0.0)  # a row that keeps nothing: zeros, as fused's
    tl.store(y_ptr + row * N + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


def main(cells: list[str], rounds: int) -> None:
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, Triton {triton.__version__}", flush=True)
    for cell in cells:
        shape, dtype_name = cell.split(":")
        M, N = map(int, shape.split("x"))
        x = torch.randn(M, N, dtype=DTYPES[dtype_name], device="cuda")
        y = torch.empty_like(x)
        fusion = ops.get_op("causal").fusion_for(x)
        scale = fusion.scale
        model_bytes = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
        block = triton.next_power_of_2(N)
        kept = torch.ones(M, N, dtype=torch.bool, device="cuda").tril(N - M)
        expected = torch.softmax((x.float() * scale).masked_fill(~kept, float("-inf")), -1).nan_to_num(0.0)
        runs = {}
        for step, what in enumerate(("the floor's bytes, scaled and selected", "+ the max", "+ a second reduction",
                                     "softmax, tl.exp2", "softmax, ex2.approx.ftz")):
            runs[f"step {step}: {what} (4 warps)"] = (
                lambda s=step: steps_kernel[(M,)](x, y, M, N, M, scale, BLOCK_N=block, STEP=s, num_warps=4), step >= 3)
        for warps in (1, 2):
            runs[f"step 4 in {warps} warp(s)"] = (
                lambda w=warps: steps_kernel[(M,)](x, y, M, N, M, scale, BLOCK_N=block, STEP=4, num_warps=w), True)
        runs["fused (auto's launch)"] = (lambda: fused.launch(x, fusion), False)
        for name, (run, checked) in runs.items():
            if checked:
                run()
                torch.testing.assert_close(y.float(), expected, atol=2e-3, rtol=2e-2, msg=lambda m: f"{name}: {m}")
        copy_ms = measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms
        expected_ms = copy_ms * model_bytes / (2 * x.nbytes)
        print(f"{cell}: copy {copy_ms * 1e3:.2f} µs, roofline {expected_ms * 1e3:.2f} µs; % of the roofline, "
              f"{rounds} rounds in turn", flush=True)
        pct = {name: [] for name in runs}
        for _ in range(rounds):
            for name, (run, _) in runs.items():
                pct[name].append(100 * expected_ms / measure(run, SETTINGS, interpret=False).ms)
        for name, values in pct.items():
            print(f"  {name:50} " + "  ".join(f"{v:5.1f}" for v in values), flush=True)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("ROUNDS=")]
    rounds = next((int(a.split("=")[1]) for a in sys.argv[1:] if a.startswith("ROUNDS=")), 3)
    main(args or ["4096x4000:bf16"], rounds)
