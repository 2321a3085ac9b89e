"""torch.softmax's host µs on a CPU tensor in a process where replayed.cpp is loaded (argv 1) or not (0):
whether loading the extension changes torch's own dispatch. python ext-probe.py 0|1"""
import sys, time, torch
from softmax_bench import replay
if sys.argv[1] == "1":
    assert replay.cxx_built() is not None
x = torch.randn(64, 40)
for _ in range(2000): torch.softmax(x, -1)
best = []
for r in range(7):
    t = time.perf_counter()
    for _ in range(5000): torch.softmax(x, -1)
    best.append((time.perf_counter() - t) / 5000 * 1e6)
print(sys.argv[1], f"{sorted(best)[3]:.2f} us")
