"""Timing: triton.testing.do_bench on the GPU (CUDA events, L2 cleared before every rep), a wall-clock
timer under Triton's interpreter. Both give the median and the 20th and 80th percentiles, in ms."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

QUANTILES = (0.5, 0.2, 0.8)


@dataclass(frozen=True)
class TimingSettings:
    warmup_ms: int = 25
    rep_ms: int = 100

    def describe(self, interpret: bool) -> dict:
        """What a result was timed with, for the run's metadata."""
        if interpret:
            timer = "time.perf_counter around each call (Triton interpreter on CPU): not comparable with GPU runs"
            l2 = "not applicable"
        else:
            timer = "triton.testing.do_bench (CUDA events around each call)"
            l2 = "cleared before every timed call (do_bench zeroes a 256 MB buffer)"
        return {**asdict(self), "quantiles": list(QUANTILES), "timer": timer, "l2_policy": l2}


@dataclass(frozen=True)
class Timing:
    ms: float
    ms_p20: float
    ms_p80: float


def measure(fn: Callable[[], object], settings: TimingSettings, interpret: bool) -> Timing:
    if interpret:
        return _wall_clock(fn, settings)
    import triton.testing

    ms, p20, p80 = triton.testing.do_bench(
        fn, warmup=settings.warmup_ms, rep=settings.rep_ms, quantiles=list(QUANTILES)
    )
    return Timing(ms, p20, p80)


def _wall_clock(fn: Callable[[], object], settings: TimingSettings) -> Timing:
    fn()  # warm-up: the interpreter rewrites each kernel on its first call
    times: list[float] = []
    deadline = time.perf_counter() + settings.rep_ms / 1000
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 100):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    deciles = statistics.quantiles(times, n=10, method="inclusive")
    return Timing(statistics.median(times), deciles[1], deciles[7])
