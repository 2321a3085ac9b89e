"""Issue 29: why host-cost.py's compiled_op row is 10-12 µs over torch_compile's (H100, this session) while
compiled-parts.py, timing the same two peers with the same timer, has it 12-18 µs under. The rows are made as
host-cost.py makes them, in steps, and timed (interleaved, 7 rounds of 400 calls) beside torch.softmax:

  peers     PEERS[...].make(PLAIN) for torch_compile and compiled_op, nothing else (as compiled-parts.py)
  launches  host-cost's calls_with_launches(x, ["softmax"]): every row of it made (the eager replayed launch, the
            grad rows, each variant's call, each peer), the two peers' rows taken
  all       as host-cost's main: launches, then new_kind_rows and calls_without_launches made too

`nogc` turns Python's cyclic collector off for the timing. Each line also gives the collections of each
generation during the timing (gc.get_stats).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session49/host-bisect.py MODE [nogc]
"""

import gc
import importlib.util
import sys
from pathlib import Path

import torch

from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input

spec = importlib.util.spec_from_file_location("host_cost", Path(__file__).parents[3] / "scripts" / "host-cost.py")
host_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_cost)


def main() -> None:
    mode = sys.argv[1]
    x = cell_input(64, 4000, torch.bfloat16, "cuda")
    if mode == "peers":
        fns = {name: (lambda f: lambda: f(x))(PEERS[name].make(PLAIN)) for name in ("torch_compile", "compiled_op")}
    else:
        rows = list(host_cost.calls_with_launches(x, ["softmax"]))
        if mode == "all":
            rows += list(host_cost.new_kind_rows(x, host_cost.LAUNCH_CALLS, 20, 5))
            rows += list(host_cost.calls_without_launches(x, ["softmax"], None))
        fns = {row.what.removeprefix("peer "): row.fn for row in rows if row.what in ("peer torch_compile",
                                                                                      "peer compiled_op")}
    fns = {"torch.softmax": lambda: torch.softmax(x, -1), **fns}
    for fn in fns.values():
        fn()
    if "nogc" in sys.argv:
        gc.disable()
    before = [s["collections"] for s in gc.get_stats()]
    times = host_cost.interleaved(list(fns.values()), host_cost.LAUNCH_CALLS, 50, 7)
    collections = [s["collections"] - b for s, b in zip(gc.get_stats(), before)]
    print(f"{mode} {' '.join(sys.argv[2:])}: " + ", ".join(f"{name} {host:.2f}" for name, (host, _) in
                                                          zip(fns, times)) + f" µs host; gc collections {collections}")


if __name__ == "__main__":
    main()
