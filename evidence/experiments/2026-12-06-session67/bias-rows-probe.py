"""Is a broadcast bias (mask) slow because the programs that run at once read the same row of it, and does the
library's spread order (masking.SPREAD_SHARED_ROWS) help? (issue 26; the sixty-seventh session's probe).

`python3 bias-rows-probe.py [CELLS]`, on a GPU: at each cell, auto of biased (and key-padded's scaled-masked) with
the bias laid out full, rows/64 (64 consecutive rows share a row: the programs running at once read one row) and
period/K with K = M/64 (the same rows of bias, the same bytes, but consecutive rows read different ones), all three
with SPREAD_SHARED_ROWS off (the library before it); then rows/64 with it on (its programs in spread_program's
order). Median of 3 timings (the project's timer) in µs, and that time against a copy of x (x read, y written);
each result checked against float64. CELLS: how many of the list below (default all)."""
import sys

import torch

from softmax_bench.dispatch import clear_caches
from softmax_bench.kernels import masking
from softmax_bench.ops import get_op, reference, user_call
from softmax_bench.timing import TimingSettings, measure

CELLS = [("biased", "bf16", 512, 262144), ("biased", "bf16", 4096, 32768), ("biased", "fp32", 8192, 16384),
         ("biased", "bf16", 262144, 512), ("scaled-masked", "bf16", 512, 262144), ("biased", "bf16", 1024, 131072),
         ("biased", "fp32", 512, 262144), ("scaled-masked", "bf16", 262144, 512)]
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def median_ms(fn, settings):
    return sorted(measure(fn, settings, interpret=False).ms for _ in range(3))[1]


def main(cells):
    settings = TimingSettings(warmup_ms=5, rep_ms=25)
    print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(), flush=True)
    for op_name, dtype, M, N in cells:
        op = get_op(op_name)
        x = torch.randn(M, N, dtype=DTYPES[dtype], device="cuda")
        y = torch.empty_like(x)
        copy_ms = median_ms(lambda: y.copy_(x), settings)
        line = f"{op_name} {dtype} {M}x{N}: copy {copy_ms * 1e3:.1f} us |"
        for spec, spread in (("full", False), ("rows/64", False), (f"period/{M // 64}", False), ("rows/64", True)):
            masking.SPREAD_SHARED_ROWS = spread
            clear_caches()  # a call like an earlier one replays its launch
            fusion = op.fusion_for(x, spec)
            call = user_call(x, fusion, "auto")
            err = (call().double() - reference(x, fusion, torch.float64)).abs().max().item()
            ms = median_ms(call, settings)
            line += f" {spec}{' spread' if spread else ''} {ms * 1e3:.1f} us ({copy_ms / ms * 100:.1f} %, err {err:.0e}) |"
        print(line, flush=True)
        del x, y


if __name__ == "__main__":
    main(CELLS[: int(sys.argv[1])] if sys.argv[1:] else CELLS)
