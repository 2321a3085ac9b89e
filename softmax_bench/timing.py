"""Timing: for every call two times, since both are real, and the host's time to issue it.

- kernel (ms): the GPU's time for the call, with no host in the way and L2 as the policy leaves it. Each timed
  call is preceded by the L2 clear and by a GPU sleep longer than the host's time for the call (so the call is
  queued before the GPU reaches it); CUDA events bracket the call alone.
- call (call_ms): what a call costs among calls issued back to back from an idle GPU, as a model's eager
  forward issues them: host and GPU overlap, so it is the larger of the host's time and the kernel's, with L2 as
  the previous call left it. A call_ms well above ms says the host, not the kernel, sets the pace.
- host (host_us): the host's time to issue one call, the median over the first HOST_CALLS timed calls of each
  batch of samples (queued behind the GPU's sleep, before the launch queue fills: the host does not wait on the
  GPU). `check` compares it with the host time of the cell's copy
  (a torch launch) measured in the same run, so that a slower host does not read as slower code.

L2 policies (`l2`): "clean" (the default) zeroes a 256 MB buffer, as triton.testing.do_bench does, then reads
another 256 MB, which writes the zeroed lines back to memory and leaves L2 holding clean lines no kernel uses;
"dirty" only zeroes (do_bench's: the kernel timed next may pay for writing the zeroes back); "warm" clears
nothing. docs/perf-notes.md has the experiment that chose "clean" (scripts/timing-methods.py).
Under Triton's interpreter all three are the wall clock around each call.
Times in ms: the median and the 20th and 80th percentiles.

With `max_noise` (%, `sweep --max-noise`; a sweep's default on a GPU is DEFAULT_MAX_NOISE), a measurement samples
past its rep_ms, in batches, until the relative noise of its median (`median_noise_pct`) is at most max_noise, or
SAMPLING_TIMEOUT_MS of wall time have passed (the Timing says how many samples it took and the noise it reached), as
nvbench samples to a noise target.
Without it, rep_ms of GPU time in samples, at least MIN_REPS.

On a GPU the SM clock is read after each batch of samples (clocks.py, NVML): a batch the GPU ran throttled is taken
again, and the Timing keeps the clocks' range, power and temperature.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from functools import cache
from typing import Callable

from .clocks import Watch, clocks_of

QUANTILES = (0.5, 0.2, 0.8)
L2_POLICIES = ("clean", "dirty", "warm")
CLEAR_BYTES = 256 * 2**20  # larger than any GPU's L2 today (H200: 50 MB), as do_bench's
CALL_ROUNDS = 20  # rounds of calls for the call time, each of about CALL_ROUND_MS of GPU time
CALL_ROUND_MS = 2.0
MIN_CALLS, MAX_CALLS = 5, 200
MIN_REPS, MAX_REPS = 10, 500
HOST_MARGIN = 3  # the sleep before a timed call lasts this many times the host's time for a call
# host_us is taken over the first HOST_CALLS calls of each batch of samples, which follow a synchronize: later in a
# batch of hundreds of calls (each an L2 clear, a sleep, two events and the call) CUDA's launch queue fills and a
# launch waits on the GPU. On the H200, timing every call of a batch read fp32 512×262144 at 34.6 µs in one run and
# 250.7 in a rerun of the same commit, and its copy at 52.6 µs against 7.2 (nineteenth session, noise-host).
HOST_CALLS = 16
# Under the interpreter, calls after the warm-up (a call takes 0.1–1 s of CPU there, and its time is the CPU's, not
# comparable with a GPU's): one is the median of a call slower than rep_ms (faster ones are sampled for rep_ms); the
# noise rule samples on from it
INTERPRETED_SAMPLES = 1
SAMPLING_TIMEOUT_MS = 3000  # of wall time, sampling past rep_ms to reach max_noise
# A sweep's default --max-noise on a GPU (config.build_plan), %. On the H200 (eighteenth session, the default grid
# with auto twice a target, docs/perf-notes.md): with 1 %, the reruns agreed within 1.44 % at every cell (29.1 and
# 29.8 s of wall time); with rep_ms alone, within 2.34 % (2 cells past 2 %; 34.5 and 28.5 s).
DEFAULT_MAX_NOISE = 1.0
MAX_SAMPLES = 20000


@dataclass(frozen=True)
class TimingSettings:
    warmup_ms: int = 25
    rep_ms: int = 100
    l2: str = "clean"
    max_noise: float | None = None  # %: sample until the median's relative noise is at most this (None: rep_ms)

    def describe(self, interpret: bool) -> dict:
        """What a result was timed with, for the run's metadata."""
        if interpret:
            timer = "time.perf_counter around each call (Triton interpreter on CPU): not comparable with GPU runs"
            l2 = "not applicable"
            call = timer
        else:
            timer = ("CUDA events around each call, queued behind a GPU sleep longer than the host's time for the "
                     "call: the kernel's time, no host in the way")
            call = ("CUDA events around rounds of calls issued back to back from an idle GPU, per call: the larger of "
                    "the host's time and the kernel's")
            l2 = {"clean": "cleared before every timed call: 256 MB zeroed, then 256 MB read (L2 left clean)",
                  "dirty": "cleared before every timed call: 256 MB zeroed (do_bench's; L2 left dirty)",
                  "warm": "not cleared (data of the previous call may still be in L2)"}[self.l2]
        return {**asdict(self), "quantiles": list(QUANTILES), "timer": timer, "call_timer": call, "l2_policy": l2}


@dataclass(frozen=True)
class Timing:
    ms: float  # kernel
    ms_p20: float
    ms_p80: float
    call_ms: float | None = None  # a call among calls issued back to back
    call_p20: float | None = None
    call_p80: float | None = None
    host_us: float | None = None  # the host's time to issue one call: the median over HOST_CALLS a batch
    samples: int | None = None  # kernel times taken
    noise_pct: float | None = None  # the relative noise of their median (median_noise_pct)
    clocks: dict | None = None  # the GPU's clocks, power and temperature while timed (clocks.Watch.fields)


def median_noise_pct(times: list[float]) -> float:
    """The relative noise of the median of `times`, in %: its standard error, 1.2533 · σ / √n, over the median,
    with σ taken from the interquartile range (IQR / 1.349), so that a few outliers (a sample preempted) do not
    set it. It falls as samples are added; inf for fewer than four."""
    if len(times) < 4:
        return math.inf
    q1, median, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return 100 * 1.2533 * (q3 - q1) / 1.349 / math.sqrt(len(times)) / median if median > 0 else math.inf


def sampled(take: Callable[[int], list[float]], first: int, settings: TimingSettings,
            clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Times from take(n) (n samples a call): `first` of them, and with settings.max_noise more, in batches as
    large as what is held, until their median's noise is at most max_noise, MAX_SAMPLES are held, or
    SAMPLING_TIMEOUT_MS of wall time (by `clock`, in s) have passed since the first."""
    times = take(first)
    if settings.max_noise is None:
        return times
    began = clock()
    while (median_noise_pct(times) > settings.max_noise and len(times) < MAX_SAMPLES
           and (clock() - began) * 1000 < SAMPLING_TIMEOUT_MS):
        times += take(min(len(times), MAX_SAMPLES - len(times)))
    return times


def measure(fn: Callable[[], object], settings: TimingSettings, interpret: bool) -> Timing:
    if interpret:
        return _wall_clock(fn, settings)
    import torch

    clear = _l2_clear(settings.l2)
    host_ms, gpu_ms = _estimate(fn, clear, settings.warmup_ms)
    sleep = _sleep_cycles(HOST_MARGIN * host_ms)
    reps = max(MIN_REPS, min(MAX_REPS, int(settings.rep_ms / max(gpu_ms, 1e-3))))

    host_times: list[float] = []  # s, the first HOST_CALLS calls of each batch: the launch queue is not full yet

    def take(n: int) -> list[float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        torch.cuda.synchronize()
        for i, (start, end) in enumerate(zip(starts, ends)):
            clear()
            torch.cuda._sleep(sleep)
            start.record()
            began = time.perf_counter()
            fn()
            if i < HOST_CALLS:
                host_times.append(time.perf_counter() - began)
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]

    watch = Watch(clocks_of(torch.cuda.current_device()))
    times = sampled(watch.watched(take), reps, settings)
    call = _quantiles(_call_times(fn, gpu_ms))
    return Timing(*_quantiles(times), *call, host_us=1e6 * statistics.median(host_times), samples=len(times),
                  noise_pct=_noise(times), clocks=watch.fields())


def _call_times(fn, gpu_ms: float) -> list[float]:
    """Per-call times of CALL_ROUNDS rounds of calls issued back to back from an idle GPU, L2 as they leave it."""
    import torch

    calls = max(MIN_CALLS, min(MAX_CALLS, int(CALL_ROUND_MS / gpu_ms)))
    times = []
    for _ in range(CALL_ROUNDS):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return times


def _estimate(fn, clear, warmup_ms: float) -> tuple[float, float]:
    """(host ms, GPU ms) of one call, from five calls; then calls for about warmup_ms of GPU time."""
    import torch

    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    host = []
    start.record()
    for _ in range(5):
        clear()
        began = time.perf_counter()
        fn()
        host.append((time.perf_counter() - began) * 1000)
    end.record()
    torch.cuda.synchronize()
    clear_ms = _clear_ms(clear)
    gpu_ms = max(start.elapsed_time(end) / 5 - clear_ms, 1e-3)
    for _ in range(min(MAX_REPS, int(warmup_ms / (gpu_ms + clear_ms)))):
        clear()
        fn()
    return statistics.median(host), gpu_ms


@cache
def _clear_buffers():
    import torch

    return (torch.empty(CLEAR_BYTES // 4, dtype=torch.int32, device="cuda"),
            torch.ones(CLEAR_BYTES // 4, dtype=torch.int32, device="cuda"))


@cache  # one clear a policy: its GPU time is measured once (_clear_ms)
def _l2_clear(policy: str) -> Callable[[], None]:
    if policy not in L2_POLICIES:
        raise ValueError(f"unknown L2 policy {policy!r}; choose from {', '.join(L2_POLICIES)}")
    if policy == "warm":
        return lambda: None
    zeroed, read = _clear_buffers()
    if policy == "dirty":
        return zeroed.zero_
    return _clean(zeroed, read)


def _clean(zeroed, read) -> Callable[[], None]:
    import torch

    out = torch.empty((), dtype=read.dtype, device=read.device)

    def clean() -> None:
        zeroed.zero_()
        torch.amax(read, dim=0, out=out)  # reads 256 MB, writes one element

    return clean


@cache  # a clear is one function a policy (_l2_clear), so its time is measured once
def _clear_ms(clear) -> float:
    """GPU ms of one L2 clear."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    clear()
    start.record()
    for _ in range(10):
        clear()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 10


@cache
def _cycles_per_ms() -> float:
    """The rate of torch.cuda._sleep's cycles, measured once."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(100_000)
    start.record()
    torch.cuda._sleep(10_000_000)
    end.record()
    end.synchronize()
    return 10_000_000 / start.elapsed_time(end)


def _sleep_cycles(ms: float) -> int:
    return int(max(ms, 0.005) * _cycles_per_ms())


def _quantiles(times: list[float]) -> tuple[float, float, float]:
    if len(times) < 2:
        return times[0], times[0], times[0]
    deciles = statistics.quantiles(times, n=10, method="inclusive")
    return statistics.median(times), deciles[1], deciles[7]


def _wall_clock(fn: Callable[[], object], settings: TimingSettings) -> Timing:
    fn()  # warm-up: the interpreter rewrites each kernel on its first call

    def take(n: int) -> list[float]:
        times: list[float] = []
        deadline = time.perf_counter() + settings.rep_ms / 1000
        while len(times) < n or (time.perf_counter() < deadline and len(times) < 100):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1000)
        return times

    times = sampled(take, INTERPRETED_SAMPLES, settings)
    kernel = _quantiles(times)
    return Timing(*kernel, *kernel, host_us=1000 * kernel[0], samples=len(times), noise_pct=_noise(times))


def _noise(times: list[float]) -> float | None:
    """median_noise_pct, None where too few samples say it."""
    noise = median_noise_pct(times)
    return noise if math.isfinite(noise) else None
