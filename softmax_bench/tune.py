"""`tune`: time every Triton variant on a grid of shapes and keep, per dtype and row width, the fastest correct
one — the table `auto` picks from on this GPU (softmax_bench.auto_table), for the plain softmax or, with an op
(`tune --op causal`), for that op's form."""

from __future__ import annotations

import time
from typing import Callable

import torch

from .auto_table import AutoTable
from .config import SweepPlan
from .device import device_info
from .errors import BenchError
from .kernels import DTYPES, variants
from .ops import get_op, reference
from .providers import cell_input, check
from .run_life import git_commit
from .sweep import memory_needed
from .timing import measure


# The ops whose forms auto picks by: the plain softmax, causal, masked (a keep-mask of x's shape)
TUNED_OPS = ("softmax", "causal", "scaled-masked")


def tune(plan: SweepPlan, interpret: bool, command: str,
         advance: Callable[[str], None] = lambda what: None) -> AutoTable:
    """The table for this GPU: for each (dtype, M, N) of the plan, every Triton variant that supports N is checked
    against a float32 reference (a wrong one is left out) and timed on the plan's op; the entry names the fastest,
    and the op's form (auto_table.table_form)."""
    if plan.op not in TUNED_OPS:
        raise BenchError(f"tune measures the forms auto picks for (--op {', '.join(TUNED_OPS)}); {plan.op} is not "
                         "one of them")
    op = get_op(plan.op)
    device = "cpu" if interpret else "cuda"
    info = device_info(interpret)
    table = AutoTable(info["name"], meta={
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "commit": git_commit(), "command": command,
        "timing": plan.timing.describe(interpret), "device_info": info,
    })
    candidates = [v for v in variants().values() if v.triton]
    for dtype_name, M, N in plan.cells():
        dtype = DTYPES[dtype_name]
        if not interpret and memory_needed(M, N, dtype) > torch.cuda.mem_get_info()[0]:
            advance(f"{dtype_name} {M}×{N}: skipped, not enough GPU memory")
            continue
        x = cell_input(M, N, dtype, device)
        fusion = op.fusion_for(x)
        ref = reference(x, fusion, torch.float64 if interpret else torch.float32)
        times = {}
        for variant in candidates:
            advance(f"{dtype_name} {M}×{N} {variant.name}")
            if not variant.supports(N, dtype):
                continue
            y, _ = variant.launch(x, fusion)
            wrong = check(y, ref, dtype)[1]
            del y
            if wrong is None:
                times[variant.name] = measure(lambda: variant.launch(x, fusion), plan.timing, interpret).ms
        form = fusion.table_form
        del x, ref, fusion
        if times:
            fastest = min(times, key=times.get)
            table.entries.append({"dtype": dtype_name, "M": M, "N": N, "variant": fastest, "ms": times, "form": form})
    return table
