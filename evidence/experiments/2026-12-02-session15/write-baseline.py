"""Is a causal row's roofline reachable where it writes far more than it reads (issue 26)? The narrow causal cells of
the default grid (M ≫ N, bottom-right aligned: most rows keep no column, so y is mostly zeros written and little
is read) are at 43–52 % of a roofline that prices writes at a copy's bandwidth, and at 86–103 % of a copy; so is
torch.compile (82–87 % of a copy). Prediction: a write-only stream runs at about half a copy's GB/s (the bytes of
the writes alone over the time), so those cells are at their write bandwidth already, and the roofline should price
what they write at a write-only stream's speed. Timed with the project's timer, in alternating rounds, at the
default grid's bytes (2^27 elements): a copy (read and write), zero_ and fill_ (writes only), a sum (reads only),
and the causal op's auto at 4194304×32, 1048576×128 and 131072×1024. GB/s of the bytes each moves.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session15/write-baseline.py OUT.csv
Written in the fifteenth session, when no device time was left to run it."""
import statistics
import sys

import torch

import softmax_bench
from config_timing import SETTINGS, csv_rows
from softmax_bench import ops
from softmax_bench.kernels import one_pass_traffic
from softmax_bench.timing import measure

ELEMS = 2**27
write = csv_rows(sys.argv[1], ["dtype", "what", "round", "ms", "bytes", "gbps"])
for dtype in (torch.bfloat16, torch.float32):
    x = torch.randn(ELEMS, device="cuda").to(dtype)
    y = torch.empty_like(x)
    nbytes = ELEMS * dtype.itemsize
    calls = {"copy (read + write)": (lambda: y.copy_(x), 2 * nbytes), "zero_ (write)": (lambda: y.zero_(), nbytes),
             "fill_ (write)": (lambda: y.fill_(1.0), nbytes), "sum (read)": (lambda: x.sum(), nbytes)}
    for M, N in ((4194304, 32), (1048576, 128), (131072, 1024)):
        rows = x.view(M, N)
        fusion = ops.get_op("causal").fusion_for(rows)
        traffic = one_pass_traffic(M, N, dtype, fusion)
        calls[f"causal auto {M}x{N}"] = (lambda rows=rows: softmax_bench.softmax(rows, scale=0.125, causal=True),
                                         traffic.total_bytes)
    figures = {what: [] for what in calls}
    for round_ in range(5):
        for what, (call, moved) in calls.items():
            ms = measure(call, SETTINGS, interpret=False).ms
            figures[what].append(moved / ms / 1e6)
            write([str(dtype).split(".")[1], what, round_, ms, moved, round(moved / ms / 1e6, 1)])
    copy = statistics.median(figures["copy (read + write)"])
    for what, gbps in figures.items():
        g = statistics.median(gbps)
        print(f"{str(dtype):15} {what:28} {g:8.0f} GB/s  {100 * g / copy:6.1f} % of the copy's", flush=True)
    del x, y
