"""Does a fused program whose rows share a bias row run faster reading it once for all of them? (issue 26; the
sixty-seventh session's bias-once.patch, which must be applied.)

`python3 bias-once-probe.py [CELLS]`, on a GPU: at the fused widths of the default grid, auto of biased with a
rows/64 bias, fused.BIAS_ONCE_ROWS off (each row reads its bias row, as before the patch) then on (a program reads
it once and broadcasts it). Median of 3 timings (the project's timer) in µs, and that time against a copy of x
(x read, y written); each result checked against float64. CELLS: how many of the list below (default all)."""
import importlib.util
import os
import sys

import torch

from softmax_bench.dispatch import clear_caches
from softmax_bench.kernels import fused
from softmax_bench.ops import get_op, reference, user_call
from softmax_bench.timing import TimingSettings

_spec = importlib.util.spec_from_file_location(
    "bias_rows_probe", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bias-rows-probe.py"))
rows_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rows_probe)

CELLS = [(dtype, M, N) for dtype in ("bf16", "fp32") for M, N in ((4194304, 32), (1048576, 128), (262144, 512),
                                                                     (131072, 1024))]


def main(cells):
    settings = TimingSettings(warmup_ms=5, rep_ms=25)
    print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(), flush=True)
    op = get_op("biased")
    for dtype, M, N in cells:
        x = torch.randn(M, N, dtype=rows_probe.DTYPES[dtype], device="cuda")
        y = torch.empty_like(x)
        copy_ms = rows_probe.median_ms(lambda: y.copy_(x), settings)
        fusion = op.fusion_for(x, "rows/64")
        line = f"biased rows/64 {dtype} {M}x{N}: copy {copy_ms * 1e3:.1f} us |"
        for once in (False, True):
            fused.BIAS_ONCE_ROWS = once
            clear_caches()  # a call like an earlier one replays its launch
            call = user_call(x, fusion, "auto")
            err = (call().double() - reference(x, fusion, torch.float64)).abs().max().item()
            ms = rows_probe.median_ms(call, settings)
            line += f" {'once' if once else 'row by row'} {ms * 1e3:.1f} us ({copy_ms / ms * 100:.1f} %, err {err:.0e}) |"
        print(line, flush=True)
        del x, y


if __name__ == "__main__":
    main(CELLS[: int(sys.argv[1])] if sys.argv[1:] else CELLS)
