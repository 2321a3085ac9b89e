"""Does cluster read key-padded's and biased rows/64's shared rows from HBM again for every row, pushed out of L2 by
x's evict_last lines? (issue 26, docs/perf-notes.md, seventy-first session.) Key-padded bf16 512×262144 ran at
176 µs on the H200, slower than the full mask's 164 µs, which reads a mask row from HBM for each row.

Each cell's cluster launch (config_for's configuration, the cluster kernel itself), two forms timed in turn for
ROUNDS rounds after a copy of the floor's bytes (the op's roofline: x, y and the shared rows once), as % of that copy:
  plain   the shared row's loads plain (cluster.KEEP_SHARED_ROWS = False, as committed)
  keep    read evict_last, as x is (KEEP_SHARED_ROWS = True)
Each form is checked against float64 first, and against `plain` bit for bit.

    python3 keep-probe.py [ROUNDS]      # on a GPU
"""
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "..", "..", ".."), os.path.join(here, "..", "..", "..", "scripts")]
from config_timing import checked_forms, copy_gbps, csv_rows, in_rounds  # noqa: E402

from softmax_bench import ops  # noqa: E402
from softmax_bench.kernels import cluster, one_pass_traffic  # noqa: E402

CELLS = [(512, 262144), (4096, 32768), (4096, 128256), (2048, 151936), (2048, 65536)]
CASES = [("key-padded", "full", torch.bfloat16), ("biased", "rows/64", torch.bfloat16),
         ("key-padded", "full", torch.float32), ("biased", "rows/64", torch.float32)]


def main(rounds: int) -> None:
    out = os.environ.get("OUT", ".")
    write_row = csv_rows(os.path.join(out, "keep-probe.csv"), ["op", "dtype", "M", "N", "form", "round", "ms", "pct",
                                                               "copy_gbps"])
    for op, shape, dtype in CASES:
        for M, N in CELLS:
            x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            fusion = ops.get_op(op).fusion_for(x, shape, False)
            config = cluster.config_for(N, x.dtype, fusion)

            def launched(form):
                cluster.KEEP_SHARED_ROWS = form == "keep"
                return cluster.launch(x, fusion, config=config)

            expected = ops.reference(x, fusion, torch.float64)
            prefix = [op, str(dtype).split(".")[-1], M, N]
            calls = checked_forms(launched, ["plain", "keep"], expected, prefix)
            nbytes = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
            print(*prefix, config, flush=True)
            in_rounds(calls, rounds, x.dtype, nbytes, write_row, prefix, marked="plain")


if __name__ == "__main__":
    print("copy check", round(copy_gbps(torch.bfloat16, 2**28)), "GB/s", flush=True)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
