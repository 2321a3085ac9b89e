"""Issue 26, the H200's wide cluster rows: does a persistent cluster (rows_each rows a cluster, one after another:
cluster.launch's rows_each, the kernel's ROWS_EACH) gain over one row a cluster? A cluster that stays resident pays
no launch of a 16-CTA cluster a row and no wait for a GPC's 16 free slots; it does not overlap one row's exchange
with the next row's loads (that would take twice the registers). Each spec is timed with rows_each 1, 4, 16 and 32
in turn over ROUNDS alternating rounds (the project's timer), every output checked bit for bit against rows_each 1,
as % of a copy of the op's bytes timed in the same round (one_pass_traffic, the floor waves.py prices).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session59/ab-persistent.py OUT.csv [ROUNDS]

Runs at bbd56b5 (`git checkout bbd56b5`), where cluster.launch takes rows_each; the loop was reverted after its H100
run (out-h100/persistent/: every rows_each > 1 slower).
"""

import statistics
import sys

import torch

from config_timing import SETTINGS, csv_rows
from softmax_bench import ops
from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import DTYPES, PLAIN, cluster, one_pass_traffic
from softmax_bench.timing import measure

SPECS = (("bf16", "biased", 512, 262144), ("bf16", "plain", 512, 262144), ("fp32", "causal", 512, 262144),
         ("bf16", "causal", 2048, 151936))
ROWS_EACH = (1, 4, 16, 32)


def main(out: str, rounds: int) -> None:
    write = csv_rows(out, ["dtype", "op", "M", "N", "rows_each", "round", "kernel_ms", "copy_ms", "pct_of_copy"])
    for name, op, M, N in SPECS:
        dtype = DTYPES[name]
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        fusion = PLAIN if op == "plain" else ops.get_op(op).fusion_for(x)
        nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
        expected, _ = cluster.launch(x, fusion)
        for rows_each in ROWS_EACH:
            y, _ = cluster.launch(x, fusion, rows_each=rows_each)
            assert torch.equal(y.view(torch.uint8), expected.view(torch.uint8)), (name, op, rows_each)
        del y, expected
        pcts: dict[int, list[float]] = {r: [] for r in ROWS_EACH}
        for k in range(rounds):
            copy_ms = measure_copy(dtype, nbytes // 2 // dtype.itemsize, SETTINGS, interpret=False)["ms"]
            for rows_each in ROWS_EACH:
                ms = measure(lambda: cluster.launch(x, fusion, rows_each=rows_each), SETTINGS, interpret=False).ms
                pcts[rows_each].append(100 * copy_ms / ms)
                write([name, op, M, N, rows_each, k, ms, copy_ms, round(pcts[rows_each][-1], 2)])
        line = ", ".join(f"{r}: {statistics.median(p):.1f} ({min(p):.1f}–{max(p):.1f})" for r, p in pcts.items())
        print(f"{name} {op} {M}x{N}, rows a cluster: % of a copy, median (min–max) of {rounds}: {line}", flush=True)
        del x, fusion


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
