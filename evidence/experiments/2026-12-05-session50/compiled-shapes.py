"""Issue 29: is compiled_op's host µs over torch_compile's its op, or the shape of its model? The call traces
(call-trace.py, this session) show the same Python in both calls but for two things: compiled_op's model is called
through a lambda with three arguments (x, mask=None, bias=None), and its kernel is launched through Triton's
launcher rather than Inductor's static one. Four rows, softmax 64x4000 bf16, host-cost.py's timer and interleaved
rounds:

  torch_compile      the peer: torch.compile(lambda x: torch.softmax(x, -1))
  torch_compile/3    torch.compile(lambda x, m, b: torch.softmax(x, -1)), called as lambda x: c(x, None, None)
  compiled_op        the peer: torch.compile(model(x, mask, bias)), called as lambda x: c(x, None, None)
  compiled_op/1      torch.compile(lambda x: softmax_bench.softmax(x, variant="auto"))

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session50/compiled-shapes.py
"""

import importlib.util
from pathlib import Path

import torch

import softmax_bench
from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input

spec = importlib.util.spec_from_file_location("host_cost", Path(__file__).parents[3] / "scripts" / "host-cost.py")
host_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_cost)


def main() -> None:
    device = "cuda" if host_cost.ON_GPU else "cpu"
    x = cell_input(64, 4000, torch.bfloat16 if host_cost.ON_GPU else torch.float32, device)
    rows = {"torch_compile": PEERS["torch_compile"].make(PLAIN), "compiled_op": PEERS["compiled_op"].make(PLAIN)}
    three = torch.compile(lambda x, m, b: torch.softmax(x, -1), dynamic=False)
    rows["torch_compile/3"] = lambda x: three(x, None, None)
    rows["compiled_op/1"] = torch.compile(lambda x: softmax_bench.softmax(x, variant="auto"), dynamic=False)
    if not host_cost.ON_GPU:  # a dry run: the interpreter cannot run our kernels inside a compiled graph
        rows = {k: v for k, v in rows.items() if k.startswith("torch")}
    want = torch.softmax(x.float(), -1).to(x.dtype)
    for fn in rows.values():
        torch.testing.assert_close(fn(x), want, atol=1e-2, rtol=0)
    names = list(rows)
    times = host_cost.interleaved([lambda fn=rows[n]: fn(x) for n in names], calls=host_cost.LAUNCH_CALLS,
                                  warmup=50, rounds=7)
    for name, (host, _) in zip(names, times):
        print(f"{name:16s} {host:8.2f} µs host a call")


if __name__ == "__main__":
    main()
