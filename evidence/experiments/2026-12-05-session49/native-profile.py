"""Issue 29: a compiled call's host time by native stack, for py-spy (`--native` sees C frames: the guards' C++, the
launchers, the CUDA driver). One peer a process, softmax 64x4000 bf16: compiled and warmed, then host-cost.py's
rounds (the GPU asleep behind each round of 400 calls) for SECONDS. As `next.sh native` records it:

    py-spy record --native --rate 100 --format raw -o OUT.txt -- \\
        env PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session49/native-profile.py PEER 15

and read OUT.txt with `native-profile.py --read OUT.txt`: the share of the samples under the timed call that each
part of it holds (a stack is counted under the innermost part it passes through).
"""

import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

# parts of a call, by a text in a frame's name or file, from the innermost out
PARTS = [
    ("launch", ("triton_heuristics.py", "static_triton_launcher", "__triton_launcher", "launcher", "driver.py",
                "cuLaunch", "libcuda")),
    ("graph's call", ("torchinductor_", "output_code.py")),  # Inductor's module (and the code that runs it)
    ("AOTAutograd wrappers", ("runtime_wrappers.py", "aot_autograd", "_functorch")),
    ("dynamo frame and guards", ("eval_frame", "guards", "_dynamo", "GuardManager", "RootGuardManager")),
]


def read(path: str) -> None:
    samples, parts, leaves = 0, Counter(), Counter()
    for line in open(path):
        stack, _, count = line.rstrip().rpartition(" ")
        if "one_call" not in stack:
            continue
        count = int(count)
        samples += count
        frames = stack.split(";")
        inner = frames[next(i for i, f in enumerate(frames) if "one_call" in f) + 1:]
        part = next((name for frame in reversed(inner) for name, texts in PARTS if any(t in frame for t in texts)),
                    "other")
        parts[part] += count
        leaves[(part, inner[-1] if inner else "one_call")] += count
    print(f"{path}: {samples} samples under the timed call")
    for part, count in parts.most_common():
        print(f"  {count / samples:6.1%}  {part}")
    print("  leaf frames with the most samples:")
    for (part, leaf), count in leaves.most_common(25):
        print(f"  {count / samples:6.1%}  [{part}] {leaf[:150]}")


def main() -> None:
    import torch

    spec = importlib.util.spec_from_file_location("host_cost", Path(__file__).parents[3] / "scripts" / "host-cost.py")
    host_cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host_cost)
    from softmax_bench.kernels import PLAIN
    from softmax_bench.peers import PEERS
    from softmax_bench.providers import cell_input

    peer, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 20
    x = cell_input(64, 4000, torch.bfloat16, "cuda")
    compiled = PEERS[peer].make(PLAIN)

    compiled(x)  # compiled here, not under one_call: only the timed calls' samples are read

    def one_call():
        return compiled(x)

    (warm, _), = host_cost.interleaved([one_call], host_cost.LAUNCH_CALLS, 100, 3)
    print(f"warm: {warm:.2f} µs host a call", flush=True)
    rounds, host = 0, []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        host.append(host_cost.one_round(one_call, host_cost.LAUNCH_CALLS, True)[0])
        rounds += 1
    print(f"{peer}: {rounds} rounds, median host {sorted(host)[len(host) // 2]:.2f} µs a call under the profiler")


if __name__ == "__main__":
    read(sys.argv[2]) if sys.argv[1] == "--read" else main()
