"""Issue 29: AutoTable.pick at a width not measured (rule 2), µs a call, the fastest of 7 rounds of 20000 (CPU).

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session40/pick-cost.py
"""
import timeit
from pathlib import Path
from softmax_bench.auto_table import read_table
t = read_table(Path("softmax_bench/auto_tables/nvidia-h200-triton3.8.json"))
sup = lambda n: True
n = 20000
for N in (4001, 100000):
    print(N, "pick µs", round(min(timeit.repeat(lambda: t.pick(N, "bf16", sup), number=n, repeat=7)) / n * 1e6, 2))
