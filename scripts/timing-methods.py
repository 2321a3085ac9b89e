"""Experiment (issue 12): how the timer and the L2 clear change what a cell measures. For a copy and fused's
softmax at a small, a medium and a large cell, each method's median and p20–p80, and the softmax as % of a copy
of the same bytes timed the same way. One CSV line per measurement, flushed.

Methods: do_bench — triton.testing.do_bench (256 MB zeroed before each call; the host may be in the way);
kernel/<l2> — softmax_bench.timing's kernel time (events behind a GPU sleep) with L2 "dirty", "clean" or "warm";
cudagraph — triton.testing.do_bench_cudagraph (replays of a captured graph, L2 not cleared); call/clean — the
call time (an idle GPU, host work included).

    python3 scripts/timing-methods.py OUT.csv [--repeat 2]
"""

import argparse
import csv
import dataclasses

import torch
import triton.testing

import softmax_bench
from softmax_bench.providers import cell_input
from softmax_bench.timing import TimingSettings, measure

CELLS = [(4096, 4000), (32768, 4096), (131072, 4096)]  # 32 MB, 256 MB and 1 GB of bf16 input
SETTINGS = TimingSettings(warmup_ms=25, rep_ms=100)


def methods(fn):
    yield "do_bench", triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
    for l2 in ("dirty", "clean", "warm"):
        t = measure(fn, dataclasses.replace(SETTINGS, l2=l2), interpret=False)
        yield f"kernel/{l2}", (t.ms, t.ms_p20, t.ms_p80)
        if l2 == "clean":
            yield "call/clean", (t.call_ms, t.call_p20, t.call_p80)
    yield "cudagraph", triton.testing.do_bench_cudagraph(fn, rep=100, quantiles=[0.5, 0.2, 0.8])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    writer = csv.writer(open(args.csv, "w", newline=""))
    writer.writerow(["round", "M", "N", "what", "method", "ms", "ms_p20", "ms_p80", "pct_of_copy"])
    for round_ in range(args.repeat):
        for M, N in CELLS:
            x = cell_input(M, N, torch.bfloat16, "cuda")
            dst = torch.empty_like(x)
            copy = dict(methods(lambda: dst.copy_(x)))
            softmax_bench.softmax(x, variant="fused")
            soft = dict(methods(lambda: softmax_bench.softmax(x, variant="fused")))
            for what, results in (("copy", copy), ("fused", soft)):
                for method, (ms, p20, p80) in results.items():
                    pct = 100 * copy[method][0] / ms
                    writer.writerow([round_, M, N, what, method, f"{ms:.5f}", f"{p20:.5f}", f"{p80:.5f}", f"{pct:.1f}"])
                    print(f"{round_} {M}x{N} {what:5} {method:12} {ms * 1000:9.1f} us "
                          f"[{p20 * 1000:.1f}, {p80 * 1000:.1f}] {pct:6.1f} %", flush=True)
            del x, dst


if __name__ == "__main__":
    main()
