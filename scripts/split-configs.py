"""Experiment: split's block, num_warps, programs per SM, segment size and L2 budget on the wide, vocabulary and
mid shapes, as % of a copy measured in the same process. One CSV line per measurement, flushed, so an
interrupted run keeps what it measured.

    PYTHONPATH=. python3 scripts/split-configs.py OUT.csv
"""

import csv
import itertools
import sys

import torch

from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import split
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=40)
ELEMS = 2**27
SHAPES = [(ELEMS // n, n) for n in (262144, 131072, 65536, 32768, 16384)] + [(8192, 50257), (2048, 151936),
                                                                              (4096, 32768), (4096, 4000)]
BLOCKS = {torch.float32: [(2048, 4), (4096, 8)], torch.bfloat16: [(4096, 8), (8192, 8), (8192, 16)]}


def main(path: str) -> None:
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(["dtype", "M", "N", "block", "num_warps", "per_sm", "segment_bytes", "l2_budget", "K", "SEG",
                     "groups", "n_regs", "n_spills", "ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "max_err"])
    for dtype in (torch.bfloat16, torch.float32):
        copy = measure_copy(dtype, ELEMS, SETTINGS, interpret=False)["gbps"]
        print(dtype, "copy", copy, flush=True)
        for M, N in SHAPES:
            if (M, N) == (4096, 32768) and dtype == torch.float32:
                continue
            x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            ref = torch.softmax(x.double(), -1)
            seen = set()
            for (block, warps), per_sm, seg, budget in itertools.product(
                    BLOCKS[dtype], (4, 8), (32768, 65536, 131072), (32 << 20,)):
                config = split.SplitConfig(block, warps, per_sm, seg, budget)
                y, launch = split.launch(x, config=config)
                key = (block, warps, launch.config["K"], launch.config["groups"])
                if key in seen:
                    continue  # the same grid as a config already measured
                seen.add(key)
                err = (y.double() - ref).abs().max().item()
                t = measure(lambda: split.launch(x, config=config), SETTINGS, interpret=False)
                gbps = 2 * x.numel() * x.element_size() / t.ms / 1e6
                c = launch.config
                writer.writerow([str(dtype).split(".")[-1], M, N, block, warps, per_sm, seg, budget, c["K"], c["SEG"],
                                 c["groups"], launch.n_regs, launch.n_spills, t.ms, t.ms_p20, t.ms_p80, round(gbps),
                                 round(100 * gbps / copy, 1), err])
                out.flush()
                print(dtype, M, N, config, c, launch.n_regs, f"{100 * gbps / copy:.1f}%", f"err {err:.2g}", flush=True)
            del x, ref, y


if __name__ == "__main__":
    main(sys.argv[1])
