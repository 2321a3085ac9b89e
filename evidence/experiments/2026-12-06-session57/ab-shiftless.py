"""fused's causal rows with their exponentials taken of x unshifted (fused.SHIFTLESS: the sum the one row
reduction, the max's gone; a row whose sum leaves [2^-40, 2^120] loaded again and shifted) against the shifted form,
and an upper bound: the unshifted pass with no fallback (a copy of fused.py with the fallback's branch storing the
unshifted result; right only for rows inside the range, as randn's are). Causal softmax (and at bf16 4000 its log),
bottom-right aligned, at the grid's 4096×4000 and M = 2^27 / N rows of N; in alternating rounds after a copy of the
same bytes (config_timing.in_rounds), % of a copy of the op's own bytes (one_pass_traffic), in-process: compare
forms within a cell. Each y checked against float64.
    PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session57/ab-shiftless.py OUT.csv [N|MxN ...]
Written in the fifty-seventh session; it ran there at 91897f4, where fused.SHIFTLESS was a dict by log (on or off
for every causal row), set here at each launch; fused.SHIFTLESS is now True, False or None (SHIFTLESS_TILES)."""
import importlib.util
import pathlib
import sys
import tempfile

import torch

import softmax_bench.kernels.fused as fused
from config_timing import cell_input, checked_forms, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import one_pass_traffic

FALLBACK = """                y = _softmax_tile(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                                  HAS_SCALE, HAS_MASK, CAUSAL, LOG, EVICT, mask_group, mask_period, MASK_SHARED,
                                  bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN, bias_group, bias_period, BIAS_SHARED,
                                  CAUSAL_BITS, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE)"""


def without_fallback():
    """fused.py as a module of its own whose SHIFTLESS rows never fall back (what the fallback's code costs)."""
    source = pathlib.Path(fused.__file__).read_text()
    assert source.count(FALLBACK) == 1, "fused.py's fallback is not where this script expects it"
    path = pathlib.Path(tempfile.mkdtemp()) / "fused_no_fallback.py"
    path.write_text(source.replace(FALLBACK, "                y = num * (1.0 / s)[:, None]"))
    spec = importlib.util.spec_from_file_location("softmax_bench.kernels.fused_no_fallback", path)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "softmax_bench.kernels"
    spec.loader.exec_module(module)
    return module


print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(), flush=True)
CELLS = sys.argv[2:] or ["4096x4000", "8192", "16384"]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
bare = without_fallback()
for dtype in (torch.bfloat16, torch.float32):
    for cell in CELLS:
        for log in (False, True) if cell == "4096x4000" and dtype == torch.bfloat16 else (False,):
            M, N, x = cell_input(cell, dtype)
            fusion = ops.get_op("causal").fusion_for(x, log=log)
            forms = ["shifted", "shiftless", "shiftless, no fallback"]

            def launched(form: str, x=x, fusion=fusion):
                module = bare if "no fallback" in form else fused
                module.SHIFTLESS = form != "shifted"  # read at each launch
                return module.launch(x, fusion)

            z = (x.double() * fusion.scale).masked_fill(
                torch.arange(N, device="cuda")[None, :] > torch.arange(M, device="cuda")[:, None] + (N - M),
                float("-inf"))
            expected = torch.log_softmax(z, -1) if log else torch.softmax(z, -1)
            expected = expected.nan_to_num(nan=-1e30 if log else 0.0, neginf=-1e30)  # rows keeping nothing
            prefix = [str(dtype).split(".")[1], M, N, int(log)]

            def checked(form, launched=launched):
                y, launch = launched(form)
                return (y.masked_fill(y == float("-inf"), -1e30) if log else y), launch

            checked_forms(checked, forms, expected, prefix)
            nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            in_rounds({form: (lambda form=form: launched(form)) for form in forms}, 5, dtype, nbytes, write, prefix,
                      marked="shifted")
            del x, z, expected
fused.SHIFTLESS = None
