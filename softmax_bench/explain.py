"""`explain`: the byte arithmetic of one shape — what each variant moves (and each backward), how long that takes
at the copy bandwidth, why the FLOPs do not matter, how the fused kernel holds a row, and what `auto` picks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from .auto_table import table_for
from .baseline import STORE_NAME, stored_record
from .device import device_info
from .errors import BenchError
from .dispatch import auto_choice
from .kernels import DTYPES, REGISTER_BUDGET, backwards, elem_size, fused, one_pass_traffic, variants
from .ops import OPS, Op, user_call
from .results import Run
from .timing import TimingSettings, measure

REGISTERS_PER_SM = 65536


@dataclass
class VariantLine:
    name: str
    read_bytes: int  # from HBM
    write_bytes: int  # to HBM
    l2_bytes: int  # read and written that L2 serves
    expected_ms: float | None
    flops: int
    why_not: str | None  # why it does not run here, None where it does
    n_regs: int | None = None
    n_spills: int | None = None
    measured_ms: float | None = None  # the kernel's time
    call_ms: float | None = None  # a call among calls back to back
    host_us: float | None = None  # the host's time to issue a call


@dataclass
class Explanation:
    M: int
    N: int
    dtype: str
    bandwidth_gbps: float | None
    bandwidth_source: str
    fp32_gflops: float | None
    fp32_source: str
    fused_config: dict
    elems_per_thread: int
    registers_per_thread: int
    auto: tuple[str, str]
    lines: list[VariantLine] = field(default_factory=list)
    backward_lines: list[VariantLine] = field(default_factory=list)  # bytes only: `sweep --pass backward` times them
    interpreted: bool = False
    op: str = "softmax"
    floor: tuple[tuple[str, int, int], ...] = ()  # what the op itself must move: one_pass_traffic's passes

    @property
    def input_bytes(self) -> int:
        return self.M * self.N * elem_size(DTYPES[self.dtype])


def _bandwidth(out_dir: Path, dtype: str, interpret: bool) -> tuple[float | None, str, float | None, str]:
    """Copy bandwidth and fp32 rate, with where each came from."""
    device = device_info(interpret)
    try:
        stored = stored_record(out_dir, device)
    except BenchError:  # an unreadable store: explain falls back as if none were stored
        stored = None
    if stored is not None and dtype in stored.get("reference_gbps", {}):
        flops = stored.get("fp32_flops") or {}
        return (stored["reference_gbps"][dtype], f"copy measured {stored.get('measured_at', '')} ({out_dir / STORE_NAME})",
                flops.get("gflops"), flops.get("how", "not measured"))
    if interpret:
        return None, "no copy baseline stored for this machine: run `softmax-bench copy-baseline --interpret`", None, "unknown"
    # Peak from the device's own memory clock and bus width (double data rate): a datasheet-style number.
    peak = 2 * device["memory_clock_khz"] * 1e3 * device["memory_bus_width_bits"] / 8 / 1e9
    return (peak, "DATASHEET-STYLE PEAK (memory clock × bus width × 2), not measured: run `softmax-bench copy-baseline`",
            None, "not measured: run `softmax-bench copy-baseline`")


def _from_run(run: Run, N: int, dtype: str, form: str = "softmax"
              ) -> tuple[float, str, float | None, str, tuple[str, str]]:
    """A stored run's copy bandwidth and fp32 rate for dtype, and what `auto` picks on its GPU under its Triton
    (from the table shipped for them, else the declared-support rule): a GPU explained on any machine."""
    meta = run.meta()
    gbps = (meta.get("copy_gbps") or {}).get(dtype)
    if not gbps:
        has = ", ".join(meta.get("copy_gbps") or {}) or "none"
        raise BenchError(f"run {run.id} measured no {dtype} copy (it has {has}): explain another dtype, or another run")
    device = meta.get("device") or {}
    name, triton = device.get("name", "an unnamed device"), ".".join(str(device.get("triton", "")).split(".")[:2])
    source = f"copy measured in run {run.id} on {name}, Triton {device.get('triton', '?')} ({run.path})"
    flops = (meta.get("copy_baseline") or {}).get("fp32_flops") or {}
    registry = variants()

    def holds(variant: str) -> bool:  # by its declared bounds alone: what runs on this machine does not matter
        return variant in registry and registry[variant].unsupported(N, DTYPES[dtype], here=False) is None

    table = table_for(name, triton) if triton else None
    auto = table.pick(N, dtype, holds, form) if table is not None else None
    if auto is None:
        rule, why = auto_choice(N, DTYPES[dtype], torch.device("cpu"))
        auto = rule, f"{why} (no table for {name} under Triton {triton}: the declared-support rule, without cluster)"
    return gbps, source, flops.get("gflops"), flops.get("how", "not measured in that run"), auto


def explain(M: int, N: int, dtype: str, out_dir: Path, interpret: bool, measure_time: bool = False,
            settings: TimingSettings = TimingSettings(), op: Op = OPS["softmax"],
            advance: Callable[[str], None] = lambda what: None, run: Run | None = None,
            mask_shape: str = "full") -> Explanation:
    """The explanation of one shape; with measure_time, each variant is also timed (advance says which, before).
    With a stored run: at that run's copy bandwidth and for its GPU, compiling and timing nothing here."""
    torch_dtype = DTYPES[dtype]
    # the traffic model's fusion (masks made on meta: no memory)
    meta_fusion = op.shapes_fusion(M, N, torch_dtype, mask_shape)
    form = meta_fusion.table_form
    if run is not None:
        bandwidth, source, gflops, gflops_source, auto = _from_run(run, N, dtype, form)
    else:
        bandwidth, source, gflops, gflops_source = _bandwidth(out_dir, dtype, interpret)
        auto = auto_choice(N, torch_dtype, form=form)
    evict = fused.forward_evict(N, meta_fusion)
    config = {**fused.launch_config(M, N, torch_dtype, meta_fusion), **({"EVICT": evict} if evict else {})}
    # a block of fewer elements than threads still gives each thread one (Triton's layout wraps: copies)
    elems_per_thread = -(-config["BLOCK_N"] * config["ROWS"] // (32 * config["num_warps"]))
    result = Explanation(
        M=M, N=N, dtype=dtype, bandwidth_gbps=bandwidth, bandwidth_source=source,
        fp32_gflops=gflops, fp32_source=gflops_source, fused_config=config, elems_per_thread=elems_per_thread,
        registers_per_thread=min(REGISTER_BUDGET, REGISTERS_PER_SM // (32 * config["num_warps"])),
        auto=auto, interpreted=interpret and run is None, op=op.name,
    )
    x = None
    result.floor = one_pass_traffic(M, N, torch_dtype, meta_fusion).passes
    if run is None and (measure_time or not interpret):
        device = "cpu" if interpret else "cuda"
        rows = M if measure_time else min(M, 4096)  # the compiled kernel is the same for fewer rows
        x = torch.randn(rows, N, device=device).to(torch_dtype)
        run_fusion = op.fusion_for(x, mask_shape)
    for name, variant in variants().items():
        traffic = variant.traffic(M, N, torch_dtype, meta_fusion)
        line = VariantLine(
            name=name, read_bytes=traffic.read_bytes, write_bytes=traffic.write_bytes, l2_bytes=traffic.l2_bytes,
            expected_ms=traffic.total_bytes / bandwidth / 1e6 if bandwidth else None,
            flops=variant.flops_per_element * M * N, why_not=variant.unsupported(N, torch_dtype, here=run is None),
        )
        if x is not None and line.why_not is None:
            advance(f"{name}: compile" + (" and time" if measure_time else ""))
            _, launch = variant.launch(x, run_fusion)
            line.n_regs, line.n_spills = launch.n_regs, launch.n_spills
            if measure_time:
                timing = measure(user_call(x, run_fusion, name), settings, interpret)
                line.measured_ms, line.call_ms, line.host_us = timing.ms, timing.call_ms, timing.host_us
        result.lines.append(line)
    for name, backward in backwards().items():
        traffic = backward.traffic(M, N, torch_dtype, meta_fusion)
        result.backward_lines.append(VariantLine(
            name=name, read_bytes=traffic.read_bytes, write_bytes=traffic.write_bytes, l2_bytes=traffic.l2_bytes,
            expected_ms=traffic.total_bytes / bandwidth / 1e6 if bandwidth else None, flops=0,
            why_not=backward.unsupported(N, torch_dtype, here=run is None),
        ))
    return result


@dataclass
class LossExplanation:
    """The cross-entropy's byte arithmetic at one shape: each pass's least bytes and our kernel's own."""

    M: int
    V: int
    dtype: str
    bandwidth_gbps: float | None
    bandwidth_source: str
    config: dict  # the kernel's launch for the step (kernels/cross_entropy.launch_config)
    lines: list[tuple[str, int, int, int, int, int]]  # (pass, least read, least written, ours read, written, L2)
    on_cluster: tuple[bool, bool] = (False, False)  # the forward's rows, the step's, held across a cluster here

    @property
    def logits_bytes(self) -> int:
        return self.M * self.V * elem_size(DTYPES[self.dtype])


def explain_loss(M: int, V: int, dtype: str, out_dir: Path, interpret: bool, run: Run | None = None) -> LossExplanation:
    """The cross-entropy's passes at M×V: the forward (the loss, no gradient) must read the logits once, a training
    step read them and write their gradient (one copy); beside it, what our kernel moves (a row read twice unless it
    is held on chip) at the stored (or the run's) copy bandwidth."""
    from .kernels import cross_entropy as kernel

    torch_dtype = DTYPES[dtype]
    if run is not None:
        bandwidth, source = _from_run(run, V, dtype)[:2]
    else:
        bandwidth, source = _bandwidth(out_dir, dtype, interpret)[:2]
    nbytes = M * V * elem_size(torch_dtype)
    lines = []
    for pass_, least in (("forward", (nbytes, 0)), ("backward", (nbytes, nbytes))):
        ours = kernel.traffic(M, V, torch_dtype, with_grad=pass_ == "backward")
        lines.append((pass_, *least, ours.read_bytes, ours.write_bytes, ours.l2_bytes))
    on_cluster = tuple(bool(kernel.on_cluster(V, torch_dtype, with_grad=grad)) for grad in (False, True))
    return LossExplanation(M, V, dtype, bandwidth, source, kernel.launch_config(V, torch_dtype, True), lines,
                           on_cluster)
