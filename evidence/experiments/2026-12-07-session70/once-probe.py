"""Do fused's key-padded and biased rows/64 narrow bf16 rows run nearer their floor on the H200 with a shared row
found by a shift (fused.GROUP_SHIFTS), and read once a program (fused.MASK_ONCE_ROWS, BIAS_ONCE_ROWS)? (issue 26,
docs/perf-notes.md, seventieth session.)

Each cell's fused launch, four forms timed in turn for ROUNDS rounds after a copy of the floor's bytes (the op's
roofline: x, y and the shared rows once), as % of that copy:
  divide         launch_config's tile, each row's shared row by a division and a modulo, read a row at a time
                 (as before the change)
  shift          the same, the row found by a shift
  shift-once     the same tile, the row read once a program (where launch_config's rows lie in one group)
  shift-once-2x  twice the rows a program, read once
Each form is checked against float64 first, and against `divide` bit for bit.

    python3 once-probe.py [ROUNDS]      # on a GPU
"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "..", "..", ".."), os.path.join(here, "..", "..", "..", "scripts")]
from config_timing import checked_forms, copy_gbps, csv_rows, in_rounds  # noqa: E402

from softmax_bench import ops  # noqa: E402
from softmax_bench.kernels import fused, one_pass_traffic  # noqa: E402

CELLS = [(4194304, 32), (1048576, 128), (262144, 512), (131072, 1024), (65536, 2048), (4096, 4000)]
CASES = [("key-padded", "full", False), ("biased", "rows/64", False), ("key-padded", "full", True)]


def main(rounds: int) -> None:
    out = os.environ.get("OUT", ".")
    write_row = csv_rows(os.path.join(out, "once-probe.csv"), ["op", "log", "M", "N", "form", "round", "ms", "pct",
                                                               "copy_gbps"])
    for op, shape, log in CASES:
        for M, N in CELLS:
            x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda") * 3
            fusion = ops.get_op(op).fusion_for(x, shape, log)
            config = dict(fused.launch_config(M, N, x.dtype, fusion))
            evict = fused.forward_evict(N, fusion)
            config |= {"EVICT": evict} if evict else {}
            tiles = {"divide": config, "shift": config, "shift-once": config,
                     "shift-once-2x": {**config, "ROWS": 2 * config["ROWS"]}}

            def launched(form):
                fused.GROUP_SHIFTS = form != "divide"
                fused.MASK_ONCE_ROWS = fused.BIAS_ONCE_ROWS = "once" in form
                y, launch = fused.launch(x, fusion, config=tiles[form])
                return y, launch

            expected = ops.reference(x, fusion, torch.float64)
            prefix = [op, log, M, N]
            calls = checked_forms(launched, list(tiles), expected, prefix)
            nbytes = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
            print(*prefix, "once a program at launch_config's rows:",
                  fused.mask_once(fusion, config["ROWS"]) or fused.bias_once(fusion, config["ROWS"]), flush=True)
            in_rounds(calls, rounds, x.dtype, nbytes, write_row, prefix, marked="divide")


if __name__ == "__main__":
    print("copy check", round(copy_gbps(torch.bfloat16, 2**28)), "GB/s", flush=True)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
