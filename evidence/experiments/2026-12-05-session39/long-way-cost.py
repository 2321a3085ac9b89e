"""Issue 29: softmax_bench.softmax the long way (a call of a new kind), its Triton launch stubbed as host-cost.py's
`no launch` rows stub it: µs a call (the fastest of 5 rounds of 5000), then cProfile of 5000 calls. CPU, bf16 64×4000
under the interpreter's stubs.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session39/long-way-cost.py
"""
import sys, importlib, cProfile, pstats, timeit
sys.path[:0] = [".", "scripts"]
hc = importlib.import_module("host-cost")
import torch, softmax_bench
x = hc.cell_input(64, 4000, torch.bfloat16, "cpu")
with hc.no_launch():
    f = lambda: softmax_bench.softmax(x)
    f()
    n = 5000
    print("us", min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6)
    cProfile.run("for _ in range(5000): f()", "/tmp/long.prof")
st = pstats.Stats("/tmp/long.prof")
st.sort_stats("tottime").print_stats(25)
st.sort_stats("cumtime").print_stats(25)
