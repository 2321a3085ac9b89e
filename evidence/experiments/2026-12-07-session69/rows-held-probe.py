"""Does a fused program of R rows that share a bias row, read once (BIAS_ONCE), run the one-row widths faster? (issue
26; the sixty-seventh session's bias-once.patch must be applied.)

`python3 rows-held-probe.py`, on a GPU: biased with a rows/64 bias at the fused one-row widths of the default grid,
fused.launch with its own configuration (ROWS = 1: each program its row and its bias row) against ROWS = 2 and 4
(the bias row read once for the program's rows and broadcast in registers, or a row at a time, the second read from
L1), in R times R = 1's warps, capped at 32; and key-padded (a rows/64 keep-mask, read a row at a
time) likewise. auto beside them. Median of 3 timings (the project's timer) in µs and that time against a copy of x (x read, y written, the
roofline but the bias's 1/64); each result against float64; registers and spills of each compiled kernel."""
import importlib.util
import os

import torch

from softmax_bench.kernels import fused
from softmax_bench.dispatch import clear_caches
from softmax_bench.ops import get_op, reference, user_call
from softmax_bench.timing import TimingSettings

DEVICE = os.environ.get("PROBE_DEVICE", "cuda")  # cpu: a check of the probe itself in the interpreter
_spec = importlib.util.spec_from_file_location("bias_rows_probe", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "2026-12-06-session67", "bias-rows-probe.py"))
rows_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rows_probe)
if DEVICE != "cuda":  # the interpreter: each call once, its time 1 ms
    rows_probe.median_ms = lambda fn, settings: (fn(), 1.0)[1]

CELLS = [(dtype, M, N) for dtype in ("bf16", "fp32") for M, N in ((8192, 16384), (16384, 8192), (32768, 4096),
                                                                     (4096, 4000))]


FORMS = (("biased", False), ("biased", True), ("key-padded", False))
# (label, rows a program, the bias row read once): R > 1 row by row is the same program with the bias row loaded a
# row at a time, its second load served by the SM's L1: L2's share halved without the broadcast.
TILES = (("R1", 1, False), ("R2 once", 2, True), ("R2 rows", 2, False), ("R4 once", 4, True), ("R4 rows", 4, False))


def main(cells):
    settings = TimingSettings(warmup_ms=5, rep_ms=25)
    print("Triton", __import__("triton").__version__, torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE,
          flush=True)
    for op_name, log in FORMS:
        op = get_op(op_name)
        for dtype, M, N in cells:
            x = torch.randn(M, N, dtype=rows_probe.DTYPES[dtype], device=DEVICE)
            y = torch.empty_like(x)
            copy_ms = rows_probe.median_ms(lambda: y.copy_(x), settings)
            fusion = op.fusion_for(x, "rows/64", log=log) if op.shaped else op.fusion_for(x, log=log)
            want = reference(x, fusion, torch.float64)
            base = fused.launch_config(M, N, x.dtype, fusion)
            line = f"{op_name}{' log' if log else ''} {dtype} {M}x{N}: copy {copy_ms * 1e3:.1f} us |"
            fused.BIAS_ONCE_ROWS = True
            clear_caches()
            call = user_call(x, fusion, "auto")
            err = (call().double() - want).abs().max().item()
            ms = rows_probe.median_ms(call, settings)
            line += f" auto {ms * 1e3:.1f} ({copy_ms / ms * 100:.1f} %, err {err:.0e}) |"
            for label, rows, once in TILES:
                if fusion.bias is None and once:  # a keep-mask is read a row at a time
                    continue
                fused.BIAS_ONCE_ROWS = once
                # R rows in R times R = 1's warps (capped at 32): as near R = 1's registers a thread as fits. (The
                # H100 run of the sixty-ninth session took fused's warps for R · N elements, 16 where R = 1 had 32.)
                warps = min(32, rows * base["num_warps"])
                config = {**base, "ROWS": rows, "num_warps": warps}
                try:
                    out, launched = fused.launch(x, fusion, config)
                    err = (out.double() - want).abs().max().item()
                    ms = rows_probe.median_ms(lambda: fused.launch(x, fusion, config), settings)
                    k = launched.compiled[0]
                    line += (f" {label} w{warps} {ms * 1e3:.1f} ({copy_ms / ms * 100:.1f} %, err {err:.0e}, "
                             f"{getattr(k, 'n_regs', '?')}r {getattr(k, 'n_spills', '?')}s) |")
                except Exception as error:  # a tile that does not build: said, and the next one
                    line += f" {label} w{warps} failed: {type(error).__name__} {str(error)[:80]} |"
            print(line, flush=True)


if __name__ == "__main__":
    main(CELLS if DEVICE == "cuda" else [("fp32", 128, 40)])
