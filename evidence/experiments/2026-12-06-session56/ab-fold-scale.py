"""fused's causal rows with their positive scale folded into the exponent (fused.FOLD_SCALES: the max of x unscaled,
then one multiply-add an element) against the unfolded form, on the default grid's causal cells fused runs one row
a program (M = 2^27 / N rows as queries, bottom-right aligned; and the grid's 4096×4000), softmax and log_softmax,
in alternating rounds after a copy of the same bytes (config_timing.in_rounds). Each y is checked against float64
(its largest error printed; not bit for bit the unfolded form: the exponent rounds once where it rounded twice). At
bf16 4000's log a third form: folded and capped at 48 registers (fused.CAUSAL_REGISTERS; unfolded it spilled
there). % of a copy of the op's own bytes (one_pass_traffic), in-process: compare forms within a cell.
    PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session56/ab-fold-scale.py OUT.csv [N|MxN ...]
Written in the fifty-sixth session; it ran there (at ff5d26b) with FOLD_SCALES a bool, every form folded or none,
and its float64 check NaN at the rows that keep no column (max err nan; fixed after)."""
import sys

import torch

from config_timing import cell_input, checked_forms, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(), flush=True)
CELLS = sys.argv[2:] or ["4096x4000", "8192", "16384"]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
caps = dict(fused.CAUSAL_REGISTERS)
for dtype in (torch.bfloat16, torch.float32):
    for cell in CELLS:
        for log in (False, True):
            M, N, x = cell_input(cell, dtype)
            fusion = ops.get_op("causal").fusion_for(x, log=log)
            key = (x.element_size(), N, log)
            forms = ["unfolded", "folded"] + (["folded, capped 48"] if key not in caps and dtype == torch.bfloat16
                                              and N == 4000 else [])

            def launched(form: str, x=x, fusion=fusion, key=key):
                fused.FOLD_SCALES = {log: form != "unfolded"}  # read at each launch
                fused.CAUSAL_REGISTERS = {**caps, key: 48} if "capped" in form else caps
                return fused.launch(x, fusion)

            z = (x.double() * fusion.scale).masked_fill(
                torch.arange(N, device="cuda")[None, :] > torch.arange(M, device="cuda")[:, None] + (N - M),
                float("-inf"))
            expected = torch.log_softmax(z, -1) if log else torch.softmax(z, -1)
            # rows that keep no column: zeros (-inf), where float64's softmax of all -inf is NaN
            expected = expected.nan_to_num(nan=-1e30 if log else 0.0, neginf=-1e30)
            prefix = [str(dtype).split(".")[1], M, N, int(log)]

            def checked(form, launched=launched):
                y, launch = launched(form)
                return (y.masked_fill(y == float("-inf"), -1e30) if log else y), launch

            checked_forms(checked, forms, expected, prefix)
            nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            in_rounds({form: (lambda form=form: launched(form)) for form in forms}, 5, dtype, nbytes, write, prefix,
                      marked="folded")
            del x, z, expected
fused.FOLD_SCALES, fused.CAUSAL_REGISTERS = {False: True, True: True}, caps  # as it ran (all folded)
