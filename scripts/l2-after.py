"""Experiment: what a kernel's evict_last loads leave in L2 for the kernel after it. Loads marked evict_last keep
their lines in L2 ahead of others; the rows a softmax reads are dead once it is done, so lines kept for them take L2
from whatever runs next. After each kernel (without, then with evict_last; Inductor's backward, whose loads are
evict_last), a buffer W of 24–40 MB (the H200's L2: 60 MB) is read twice, and the second read timed: it hits in L2
where W could stay there. The same after the L2 was merely cleared is the reference. Medians of R trials, each
kernel on the next of three copies of its input.

    python3 scripts/l2-after.py [R]
"""

import dataclasses
import statistics
import sys

import torch

from softmax_bench.kernels import cluster, fused, fused_backward
from softmax_bench.timing import _l2_clear

MB = 2**20


def second_read_us(before, w: torch.Tensor, clear, trials: int) -> float:
    times = []
    for t in range(trials):
        clear()
        before(t)
        w.sum()  # first read: W into L2, where it fits
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        w.sum()
        end.record()
        end.synchronize()
        times.append(1000 * start.elapsed_time(end))
    return statistics.median(times)


def compiled_backward(xs, dys):
    """Inductor's backward of softmax (its loads: evict_last, then evict_first on a second read)."""
    fn = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
    graphs = []
    for x, dy in zip(xs, dys):
        xg = x.detach().requires_grad_()
        graphs.append((fn(xg), xg, dy))
    return lambda t: torch.autograd.grad(graphs[t % 3][0], graphs[t % 3][1], graphs[t % 3][2], retain_graph=True)


def main(trials: int) -> None:
    clear = _l2_clear("clean")
    print("L2 bytes", torch.cuda.get_device_properties(0).L2_cache_size)
    xs = [torch.randn(32768, 4096, dtype=torch.bfloat16, device="cuda") for _ in range(3)]
    wide = [torch.randn(2048, 65536, dtype=torch.bfloat16, device="cuda") for _ in range(3)]
    dys = [torch.randn_like(x) for x in xs]
    f = fused.launch_config(32768, 4096, torch.bfloat16)
    c = dataclasses.replace(cluster.config_for(65536, torch.bfloat16), evict="")  # plain loads (the default: evict_last)
    b = {"BLOCK_N": 4096, "ROWS": 1, "num_warps": 16}
    kernels = {
        "nothing": lambda t: None,
        "fused forward": lambda t: fused.launch(xs[t % 3], config=f),
        "fused forward evict_last": lambda t: fused.launch(xs[t % 3], config={**f, "EVICT": "evict_last"}),
        "cluster forward": lambda t: cluster.launch(wide[t % 3], config=c),
        "cluster forward evict_last": lambda t: cluster.launch(wide[t % 3],
                                                               config=dataclasses.replace(c, evict="evict_last")),
        "fused backward": lambda t: fused_backward.launch(xs[t % 3], dys[t % 3], config={**b, "EVICT": ""}),
        "fused backward evict_last": lambda t: fused_backward.launch(xs[t % 3], dys[t % 3],
                                                                     config={**b, "EVICT": "evict_last"}),
        "torch_compile backward": compiled_backward(xs, dys),
    }
    for mb in (24, 32, 40):
        w = torch.randn(mb * MB // 4, device="cuda")
        for name, before in kernels.items():
            before(0)
            torch.cuda.synchronize()
            us = second_read_us(before, w, clear, trials)
            print(f"W {mb:3d} MB after {name:28s} second read {us:8.2f} us  {mb * MB / us / 1e3:7.0f} GB/s", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
