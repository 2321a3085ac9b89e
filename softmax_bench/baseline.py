"""The ceiling for a memory-bound kernel: a device-to-device copy, measured on this device, cached per device.

Copy bandwidth = (bytes read + bytes written) / median time (softmax_bench/timing.py). It is measured at several
sizes far past L2; the reference a sweep compares against, per dtype, is the copy of 2^27 elements of that dtype —
the same bytes as a cell of the default grid (512 MB fp32, 256 MB bf16), so that % of copy compares like with like.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import torch
import triton
import triton.language as tl

from .device import device_info, same_device
from .errors import BenchError
from .kernels import dtype_name, elem_size
from .results import not_a_file
from .timing import TimingSettings, measure

GRID_ELEMS = 2**27
EXTRA_COPY_BYTES = (2**30, 2**31)  # 1 GB and 2 GB, to show the bandwidth does not depend on size past L2
# Under the interpreter: the CPU's own memcpy, small enough to be quick.
INTERPRETED_GRID_ELEMS = 2**20
INTERPRETED_EXTRA_BYTES = (2**24,)
STORE_NAME = "copy-baseline.json"
FMA_ITERATIONS = 2048
FMA_BLOCK = 4096  # 32 independent FMA chains a thread at 4 warps: enough to hide the FMA latency


@triton.jit
def fma_kernel(out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = offs.to(tl.float32) * 1e-6
    for _ in range(n_iter):
        x = x * 0.9999 + 0.0001  # one FMA: 2 FLOPs
    tl.store(out_ptr + tl.program_id(0) * BLOCK + offs, x)  # keeps the loop alive


def copy_sizes(dtype: torch.dtype, interpret: bool) -> list[int]:
    """Element counts to copy for a dtype: the reference size first."""
    grid, extra = (INTERPRETED_GRID_ELEMS, INTERPRETED_EXTRA_BYTES) if interpret else (GRID_ELEMS, EXTRA_COPY_BYTES)
    return [grid] + [nbytes // elem_size(dtype) for nbytes in extra]


# torch's copy_ between contiguous tensors of one dtype is the driver's device-to-device memcpy, which runs slower
# where a buffer is not a whole number of 4096-byte pages: on the H100 24–31 % slower at 16–48 MiB and 3.3 % at 256
# MiB, 1 … 1024 bf16 elements past a multiple of 2048 (docs/perf-notes.md, fifty-sixth session, copy-numel.py). A
# cell of such a size (3000×4000 bf16: 768 elements past one) would be compared with that slower copy. So the
# copies timed here move their buffers rounded up to whole pages: at most a page more each.
COPY_PAGE_BYTES = 4096


def copy_buffers(numel: int, dtype: torch.dtype, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(source, destination) of a copy of at least `numel` elements of `dtype`: random (never time on zeros), each
    a whole number of COPY_PAGE_BYTES."""
    per_page = max(1, COPY_PAGE_BYTES // elem_size(dtype))
    source = torch.empty(-(-numel // per_page) * per_page, dtype=dtype, device=device).normal_()
    return source, torch.empty_like(source)


def measure_copy(dtype: torch.dtype, numel: int, settings: TimingSettings, interpret: bool) -> dict:
    src, dst = copy_buffers(numel, dtype, "cpu" if interpret else "cuda")
    timing = measure(lambda: dst.copy_(src), settings, interpret)
    numel = src.numel()
    nbytes = 2 * numel * elem_size(dtype)  # read + write
    del src, dst
    return {
        "dtype": dtype_name(dtype),
        "numel": numel,
        "bytes": nbytes,
        "ms": timing.ms,
        "ms_p20": timing.ms_p20,
        "ms_p80": timing.ms_p80,
        "gbps": nbytes / timing.ms / 1e6,
    }


def measure_fp32_rate(settings: TimingSettings, interpret: bool) -> dict:
    """The compute ceiling for the roofline: fp32 FLOP/s of this device, measured.

    GPU: a Triton kernel of independent FMA chains on every SM. Interpreter: torch.mm on the CPU.
    """
    if interpret:
        n = 512
        a, b = torch.randn(n, n), torch.randn(n, n)
        timing = measure(lambda: a @ b, settings, interpret)
        return {"gflops": 2 * n**3 / timing.ms / 1e6, "how": "measured: torch.mm 512×512 fp32 on the CPU"}
    programs = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count * 16
    out = torch.empty(programs * FMA_BLOCK, device="cuda")
    timing = measure(lambda: fma_kernel[(programs,)](out, FMA_ITERATIONS, BLOCK=FMA_BLOCK, num_warps=4), settings, False)
    flops = 2 * FMA_ITERATIONS * FMA_BLOCK * programs
    return {"gflops": flops / timing.ms / 1e6, "how": "measured: Triton kernel of fp32 FMA chains on every SM"}


def _load_store(path: Path) -> list[dict]:
    if not path.exists():
        return []
    try:
        records = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BenchError(f"cannot read the copy baseline {path}: {err}; delete it to measure again") from None
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise BenchError(f"{path} is not a list of copy-baseline records; delete it to measure again")
    return records


def _record_of(records: list[dict], device: dict) -> dict | None:
    return next((r for r in records if same_device(r.get("device", {}), device)), None)


def stored_record(store_dir: Path, device: dict) -> dict | None:
    """This device's stored baseline record, or None."""
    return _record_of(_load_store(store_dir / STORE_NAME), device)


# A copy's time grows with its bytes: a larger copy runs at the GB/s of a smaller one (a GPU's, past L2) or slower
# (a CPU's, past its caches). A larger copy at more than this times a smaller one's GB/s, or GB/s that is not a
# positive number, is a broken measurement (an interpreted copy once took 12 ms for 2 MB and for 16 MB alike).
CONSISTENT_RATIO = 2.0


def implausible(record: dict, dtype: str) -> str | None:
    """Why a stored record's copies of `dtype` cannot be a device's copy bandwidth, or None."""
    of_dtype = [c for c in record.get("copies", []) if c.get("dtype") == dtype]
    reference = (record.get("reference_gbps") or {}).get(dtype)
    values = [v for v in [reference, *(c.get("gbps") for c in of_dtype)] if isinstance(v, (int, float))]
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        return f"its {dtype} copy reads {reference!r} GB/s"
    copies = sorted((c for c in of_dtype if "bytes" in c), key=lambda c: c["bytes"])
    if any(larger["gbps"] > CONSISTENT_RATIO * smaller["gbps"]
           for i, smaller in enumerate(copies) for larger in copies[i + 1:]):
        sizes = ", ".join(f"{c['bytes'] / 2**20:,.0f} MB in {c['ms']:.3g} ms" for c in copies)
        return (f"its larger {dtype} copies ran more than {CONSISTENT_RATIO:g}× the GB/s of its smaller ones "
                f"({sizes}): their times do not follow their bytes")
    return None


def copy_baseline(
    dtypes: list[torch.dtype],
    store_dir: Path,
    settings: TimingSettings,
    interpret: bool,
    fresh: bool = False,
    on_measure=None,
    save: bool = True,
    on_remeasure=None,
) -> dict:
    """The stored copy baseline of this device for these dtypes, measuring what is missing (all with fresh), and
    storing what it measured unless save is False (ranks of a multi-device sweep: rank 0 stores them all).

    Returns {"device", "measured_at", "timing", "copies": [...], "reference_gbps": {dtype: GB/s},
    "fp32_flops": {"gflops", "how"}, "reused": bool}. A stored dtype whose copies are implausible is measured
    again, and on_remeasure(message) says why.
    """
    device = device_info(interpret)
    record = stored_record(store_dir, device)
    wanted = [dtype_name(d) for d in dtypes]
    broken = {d: why for d in wanted if record is not None and d in record.get("reference_gbps", {})
              and (why := implausible(record, d)) is not None}
    if (record is not None and not fresh and not broken and "fp32_flops" in record
            and all(d in record.get("reference_gbps", {}) for d in wanted)):
        return {**record, "reused": True}
    for name, why in broken.items():  # measured again below, and said
        del record["reference_gbps"][name]
        if on_remeasure is not None:
            on_remeasure(f"the stored copy baseline ({store_dir / STORE_NAME}) is not used: {why}; measuring the "
                         f"{name} copy again")

    if record is None or fresh:
        record = {"device": device, "copies": [], "reference_gbps": {}}
    record["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    record["timing"] = settings.describe(interpret)
    for dtype in dtypes:
        name = dtype_name(dtype)
        if name in record["reference_gbps"] and not fresh:
            continue
        measured = []
        for numel in copy_sizes(dtype, interpret):
            if on_measure is not None:
                on_measure(name, numel * elem_size(dtype))
            measured.append(measure_copy(dtype, numel, settings, interpret))
        record["copies"] = [c for c in record["copies"] if c["dtype"] != name] + measured
        record["reference_gbps"][name] = measured[0]["gbps"]  # the grid-sized copy
    if fresh or "fp32_flops" not in record:
        record["fp32_flops"] = measure_fp32_rate(settings, interpret)
    if save:
        save_baselines(store_dir, [record])
    return {**record, "reused": False}


def save_baselines(store_dir: Path, measured: list[dict]) -> None:
    """Store measured baseline records, each in place of the stored record of its device."""
    path = store_dir / STORE_NAME
    records = _load_store(path)
    for record in measured:
        record = {k: v for k, v in record.items() if k != "reused"}
        records = [r for r in records if not same_device(r.get("device", {}), record["device"])] + [record]
    not_a_file(store_dir)
    try:
        store_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records, indent=2) + "\n")
    except OSError as err:
        raise BenchError(f"cannot write the copy baseline to {path}: {err}; pass --out to a writable folder") from None
