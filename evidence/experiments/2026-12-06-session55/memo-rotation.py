"""Issue 29: replayed.cpp's look-up of plain bf16 64×N calls, N = 4000 … 4000 + K − 1 called in turn (K kinds, each
with a kept plan that returns at once), with PLANS a plain dict (no memo: the key tuple built and looked up every
call) and a replay.PlanTable (the memo), ns a call, the median of 7 rounds of 20000 turns. The question: do kinds
called in turn, more than the memo's entries, cost a call more than the key alone? On a machine with no GPU (CPU
tensors; nothing is launched).

    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session55/memo-rotation.py
"""

import statistics
import time

import torch

from softmax_bench import replay

module = replay.cxx_built()
answer = torch.empty(1)


def plan(x, mask, bias):
    return answer


xs = [torch.randn(64, 4000 + i, dtype=torch.bfloat16) for i in range(96)]


def ns_a_call(table, kinds: int) -> float:
    module.configure(table, replay.FUSED_CASTS)
    for x in xs:
        table[replay.plan_key(x, -1, None, None, False, "auto")] = plan
    replayed, chosen = module.replayed, xs[:kinds]

    def turn():
        for x in chosen:
            replayed(x, -1, None, None, None, False, "auto", False, None)

    rounds = []
    for _ in range(7):
        began = time.perf_counter_ns()
        for _ in range(20000):
            turn()
        rounds.append((time.perf_counter_ns() - began) / 20000 / kinds)
    return statistics.median(rounds)


for kinds in (1, 8, 16, 32, 96):
    plain, memo = ns_a_call({}, kinds), ns_a_call(replay.PlanTable(), kinds)
    print(f"{kinds} kinds: dict {plain:.0f} ns; PlanTable (memo) {memo:.0f} ns")
