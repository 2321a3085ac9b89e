"""Rich tables of a run: one per dtype, cells as rows, variants side by side (GB/s and % of the run's copy)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import pandas as pd
from rich import box
from rich.table import Table
from rich.text import Text

from .across_devices import (OUTLIER_PCT, deviation_from_others, devices_of, gbps_by_device, median_over_devices,
                             outlier)
from .clocks import MAX_RETAKES, THROTTLE_FRACTION
from .kernels import DTYPES, REGISTER_BUDGET, elem_size
from .ops import judged_by_roofline, op_label, pass_bytes
from .regression import NOISE_Z
from .results import WIDE_BAND, cell_label, wide_band
from .timing import SAMPLING_TIMEOUT_MS


# A rule under the header and two spaces between columns, no borders: tables of many columns fit 80 terminal columns.
COMPACT = dict(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)


def number(value: float) -> str:
    """A bandwidth or rate: whole numbers with separators from 100 up, three significant digits below."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.0f}" if nbytes >= 100 * 2**20 else f"{nbytes / 2**20:.1f}"


def _ms(value: float) -> str:
    return f"{value:.4g}"


def _pct(value: float) -> str:
    return f"{value:.0f}%" if value >= 1 else f"{value:.2g}%"


def device_text(meta: dict) -> str:
    """The device of a run, or its devices: "NVIDIA H200 ×2, replicated"."""
    ranks = devices_of(meta)
    if not ranks:
        return meta.get("device", {}).get("name", "unknown device")
    names = list(dict.fromkeys(entry["device"].get("name", "?") for entry in ranks))
    named = f"{names[0]} ×{len(ranks)}" if len(names) == 1 else ", ".join(names)
    return f"{named}, {meta.get('placement', 'sharded')}"


def _copy_text(meta: dict, dtype: str) -> str:
    """The copy bandwidth a run's dtype is compared with; its range over the devices of a multi-device run."""
    copies = [entry["copy_gbps"].get(dtype) for entry in devices_of(meta)] or [meta.get("copy_gbps", {}).get(dtype)]
    copies = [c for c in copies if c]
    if not copies:
        return "no copy baseline"
    low, high = f"{min(copies):,.0f}", f"{max(copies):,.0f}"
    return f"copy {low} GB/s" if low == high else f"copy {low}–{high} GB/s"


def run_title(meta: dict, dtype: str, pass_: str = "forward") -> str:
    device, copy_text = device_text(meta), _copy_text(meta, dtype)
    op = op_label(meta.get("op", "softmax"), meta.get("mask_shape", "full"), meta.get("log", False))
    title = f"{meta.get('run_id', '?')} · {device} · {dtype}{'' if op == 'softmax' else ' · op ' + op}"
    title += f"{' · BACKWARD' if pass_ == 'backward' else ''} · {copy_text}"
    for name, value in meta.get("settings", {}).items():  # the project's switches the run was made with
        title += f" · {name}={value}"
    if meta.get("interpreted"):
        title += " · INTERPRETED on CPU (wall clock; not comparable with GPU runs)"
    return title


def _header(name: str) -> str:
    """A variant's name as a column header, broken after an underscore: narrow columns fit 80 terminal columns."""
    return name.replace("_", "_\n")


def _footnote(reason: object) -> str:
    """A reason without the cell's own numbers ("(got N = 65536)"), so that one footnote serves every cell."""
    return re.sub(r"\s*\(got [^)]*\)", "", str(reason))


HOST_BOUND = 1.3  # call time / kernel time past which a cell is marked as set by the host


def host_bound(r) -> bool:
    """A call among calls back to back costs HOST_BOUND× the kernel or more (rows without call_ms: never)."""
    call = getattr(r, "call_ms", None)
    return call is not None and not math.isnan(call) and call >= HOST_BOUND * r.ms


def sweep_tables(rows: pd.DataFrame, meta: dict) -> list[Table]:
    """One table per dtype, cells as rows, variants side by side: GB/s over % of the run's copy, the best of a cell
    marked ★. Two lines a cell keep a column as narrow as its header, so the table fits 80 terminal columns. FAIL
    and skipped cells point to a footnote with their reason, one footnote per reason. A replicated run shows the
    median over devices with a third line, the spread between them; a run on several devices ends with a table of
    its devices."""
    tables = []
    for grid in sweep_grids(rows, meta):
        table = Table(title=grid.title, title_justify="left", caption_justify="left", **COMPACT)
        if len(grid.names) < 3:  # the caption wraps at the table's width: a table of one or two columns would cut it
            table.min_width = 80
        table.add_column("M\n×N", justify="right")
        for name in grid.names:
            table.add_column(_header(name), justify="right")
        for (M, N), cells in grid.cells:
            table.add_row(f"{M}\n×{N}", *(Text("\n".join(lines), style=style) for lines, style in cells))
        table.caption = "\n".join(grid.caption)
        tables.append(table)
    if devices_of(meta):
        tables.append(devices_table(rows, meta))
    return tables


@dataclass
class SweepGrid:
    """One pass and dtype of a run as its table shows it: cells as rows, variants as columns, a cell's lines and
    style, and the caption (marks, footnotes): sweep_tables draws it for a terminal, sweep_markdown as Markdown."""

    title: str
    names: list[str]
    cells: list[tuple[tuple[int, int], list[tuple[list[str], str]]]]
    caption: list[str]


def sweep_grids(rows: pd.DataFrame, meta: dict) -> list[SweepGrid]:
    rows = median_over_devices(rows)
    replicas = len(devices_of(meta)) if meta.get("placement") == "replicated" else 0
    # a fused op is judged by its own bytes (the mask read, a causal row's skipped columns not): % of its roofline
    own_bytes = judged_by_roofline(rows, meta)
    max_noise = (meta.get("timing") or {}).get("max_noise")
    grids = []
    for (pass_, dtype), part in rows.groupby(["pass", "dtype"], sort=False):
        part = part.sort_values(["N", "M"], kind="stable")  # a sharded run's rows interleave
        names = list(dict.fromkeys(part["variant"]))
        # A variant skipped in every cell (a missing peer) gets a caption line, not a column of "skip".
        never_ran = [n for n in names if (part.loc[part["variant"] == n, "status"] == "skipped").all()]
        names = [n for n in names if n not in never_ran]
        reasons: dict[str, int] = {}
        cells = []
        for (M, N), cell in part.groupby(["M", "N"], sort=False):
            ok = cell[cell["status"] == "ok"]
            best = ok["gbps"].max() if len(ok) else math.nan
            by_name = {r.variant: r for r in cell.itertuples(index=False)}
            texts = []
            for name in names:
                r = by_name.get(name)
                if r is None:
                    texts.append(([""], ""))
                elif r.status == "ok":
                    star = "★" if r.gbps == best else ""
                    marks = star + ("~" if wide_band(r) else "") + ("‡" if host_bound(r) else "")
                    marks += "!" if max_noise and not getattr(r, "noise_pct", 0) <= max_noise else ""
                    marks += "↓" if getattr(r, "throttled", 0) == 1 else ""
                    marks += "§" if spilled(r) else ""
                    spread = [f"Δ{r.spread_pct:.1f}%"] if replicas and not math.isnan(r.spread_pct) else []
                    pct = f"{_pct(r.pct_of_copy)}{marks}"
                    if own_bytes and not math.isnan(r.pct_of_roofline):
                        pct = f"{_pct(r.pct_of_roofline)}r{marks}"
                    texts.append(([number(r.gbps), pct, *spread], "bold green" if star else ""))
                else:
                    mark = reasons.setdefault(_footnote(r.reason), len(reasons) + 1)
                    texts.append(([("FAIL" if r.status == "FAIL" else "skip"), f"[{mark}]"],
                                  "bold red" if r.status == "FAIL" else "dim"))
            cells.append(((int(M), int(N)), texts))
        count, what = pass_bytes(meta.get("op", "softmax"), pass_)
        moved = f"{count}·M·N·elem ({what})"
        caption = [f"GB/s = {moved} / median kernel time, over % of a copy of the cell's bytes timed in the run; "
                   f"★ best of the cell; ~ p20–p80 band wider than {WIDE_BAND:g} % of the median (not stable to "
                   f"{WIDE_BAND:g} %); ‡ a call costs ≥ {HOST_BOUND:g}× the kernel (the host sets the pace: call_ms)"]
        if max_noise:
            caption.append(f"sampled until the median's noise was at most {max_noise:g} %; ! not reached in "
                           f"{SAMPLING_TIMEOUT_MS / 1000:g} s of sampling (noise_pct in rows.csv)")
        if "throttled" in part and (part["throttled"] == 1).any():
            caption.append(f"↓ the GPU was throttled while timed: its SM clock was under "
                           f"{THROTTLE_FRACTION:.0%} of its maximum after {MAX_RETAKES} retakes (sm_mhz_min in "
                           "rows.csv); check does not gate the cell")
        if any(spilled(r) for r in part.itertuples(index=False) if r.status == "ok"):
            caption.append("§ its kernel spilled registers to local memory, which costs it loads and stores the "
                           "traffic model does not count (n_spills in rows.csv: 4-byte words a thread)")
        if own_bytes:
            caption.append("r: % of the roofline of the bytes each moves (its traffic model: ours read x and the "
                           "mask or bias once, a causal row's columns up to its diagonal, and write y; eager's and "
                           "unfused's passes count too, so compare them by GB/s or ★) at the bandwidth of "
                           + ("a copy of the op's own bytes timed in the run (roofline_copy_ms)" if meta.get("roofline")
                              else "the copy of x and y") + ": expected_ms / ms in rows.csv, pct_of_copy beside it")
        if replicas:
            caption.append(f"median over the {replicas} devices, each against its own copy; Δ: how far the slowest "
                           "device's GB/s is under the fastest's")
        elif devices_of(meta):
            caption.append(f"cells shared out among {len(devices_of(meta))} devices; rows.csv names each row's")
        caption += [f"[{n}] {reason}" for reason, n in reasons.items()]
        for name in never_ran:
            caption.append(f"not measured: {name}: {part.loc[part['variant'] == name, 'reason'].iloc[0]}")
        grids.append(SweepGrid(run_title(meta, dtype, pass_), names, cells, caption))
    return grids


def spilled(row) -> bool:
    """Whether a row's Triton kernel spilled registers (n_spills > 0; unknown for torch's and the peers' kernels)."""
    spills = getattr(row, "n_spills", None)
    return spills is not None and not pd.isna(spills) and spills > 0


def run_as_text(rows: pd.DataFrame, meta: dict, form: str) -> str:
    """A stored run as `show --format` prints it: md (sweep_markdown), csv (its rows) or json (meta and rows)."""
    if form == "md":
        return sweep_markdown(rows, meta)
    if form == "csv":
        return rows.to_csv(index=False)
    records = json.loads(rows.to_json(orient="records"))  # NaN as null
    return json.dumps({"meta": meta, "rows": records}, indent=1, default=str) + "\n"


def sweep_markdown(rows: pd.DataFrame, meta: dict) -> str:
    """The run's tables as Markdown, for a CI summary or a review: a table per pass and dtype, GB/s (% of copy)."""
    out = []
    for grid in sweep_grids(rows, meta):
        out += [f"### {grid.title}", "", "| M×N | " + " | ".join(grid.names) + " |",
                "|---|" + "---:|" * len(grid.names)]
        for (M, N), cells in grid.cells:
            texts = [f"**{lines[0]}**" if "★" in "".join(lines) else lines[0] for lines, _ in cells]
            texts = [f"{t} ({' '.join(lines[1:])})" if len(lines) > 1 else t for t, (lines, _) in zip(texts, cells)]
            out.append(f"| {M}×{N} | " + " | ".join(texts) + " |")
        out += [""] + [f"{line}  " for line in grid.caption] + [""]
    return "\n".join(out)


def devices_table(rows: pd.DataFrame, meta: dict) -> Table:
    """A multi-device run's devices: GPU, copy bandwidth, rows timed and how each ended; for a replicated run, how
    each compares with the others, and the one that measures unlike them."""
    replicated = meta.get("placement") == "replicated"
    dtypes = list(dict.fromkeys(rows["dtype"]))
    table = Table(title=f"{meta.get('run_id', '?')} · devices · {device_text(meta)}", title_justify="left",
                  caption_justify="left", **COMPACT)
    for column in ("device", "GPU", *(f"copy {d}\nGB/s" for d in dtypes), "rows\ntimed"):
        table.add_column(column, justify="left" if column in ("device", "GPU") else "right")
    caption = []
    if replicated:
        by_device = gbps_by_device(rows)
        deviation = deviation_from_others(by_device)
        slowest = by_device.idxmin(axis=1).value_counts() if by_device.shape[1] > 1 else pd.Series(dtype=int)
        odd = outlier(deviation)
        table.add_column("vs\nothers", justify="right")
        table.add_column("slowest\nin", justify="right")
        caption.append("vs others: the device's GB/s against the median of the other devices in the same cell, "
                       f"median over the {len(by_device)} cells all timed; an outlier is more than {OUTLIER_PCT:g} % "
                       "from the others")
    table.add_column("status")
    for entry in devices_of(meta):
        label = entry["label"]
        mine = rows[rows["device"] == label]
        cells = [label, str(entry["device"].get("name", "?")),
                 *(number(entry["copy_gbps"][d]) if d in entry.get("copy_gbps", {}) else "—" for d in dtypes),
                 str(int((mine["status"] == "ok").sum()))]
        if replicated:
            cells += [f"{deviation[label]:+.1f} %" if label in deviation else "—",
                      f"{int(slowest.get(label, 0))}/{len(by_device)}"]
        status = entry.get("status", "?") + (f": {entry['error']}" if entry.get("error") else "")
        style = "" if status == "complete" else "bold red"
        if replicated and label == odd:
            status, style = status + " · OUTLIER", "bold red"
        table.add_row(*cells, Text(status, style=style))
    if replicated:
        caption.append(f"outlier: {odd}" if odd else "no outlier: the devices measure alike")
    table.caption = "\n".join(caption) or None
    return table


def copy_table(baseline: dict) -> Table:
    device = baseline["device"]
    reused = " (stored, reused)" if baseline.get("reused") else ""
    table = Table(title=f"device copy · {device['name']} · {baseline.get('measured_at', '')}{reused}",
                  title_justify="left", caption_justify="left",
                  caption="GB/s: bytes read + written / median time; ◀ the copy a sweep compares with")
    for column in ("dtype", "size", "median ms", "p20–p80 ms", "GB/s", ""):
        table.add_column(column, justify="right")
    for copy in baseline["copies"]:
        is_reference = baseline["reference_gbps"].get(copy["dtype"]) == copy["gbps"]
        table.add_row(
            copy["dtype"], f"{copy['bytes'] / 2 / 2**20:,.0f} MB", f"{copy['ms']:.4f}",
            f"{copy['ms_p20']:.4f}–{copy['ms_p80']:.4f}", f"{copy['gbps']:,.0f}", "◀" if is_reference else "",
        )
    return table


def explain_report(e) -> list:
    """Rich renderables for an Explanation (softmax_bench.explain)."""
    items: list = []
    head = Text()
    head.append(f"{e.M}×{e.N} {e.dtype}" + ("" if e.op == "softmax" else f" · op {e.op}"), style="bold")
    head.append(f" — input {e.input_bytes:,} bytes ({e.input_bytes / 2**20:,.1f} MiB); "
                f"a softmax must read it once and write it once: {2 * e.input_bytes:,} bytes")
    items.append(head)
    floor = sum(r + w for _, r, w in e.floor)
    if e.floor and floor != 2 * e.input_bytes:  # a fused form's own bytes: its roofline
        what = "; ".join(f"{name}: {r + w:,} bytes" for name, r, w in e.floor)
        above = (" — fewer than a copy of x moves, so its cells may run above 100 % of a copy"
                 if floor < 2 * e.input_bytes else "")
        items.append(Text(f"op {e.op} must move {floor:,} bytes ({what}): its roofline, pct_of_roofline in a "
                          f"sweep's rows{above}"))
    if e.bandwidth_gbps:
        items.append(Text(f"bandwidth: {e.bandwidth_gbps:,.0f} GB/s — {e.bandwidth_source}"))
    else:
        items.append(Text(f"bandwidth: unknown — {e.bandwidth_source}; bytes only", style="yellow"))

    measured = any(line.measured_ms is not None for line in e.lines)
    compiled = any(line.n_regs is not None for line in e.lines)
    table = Table(title="MiB each variant moves through HBM (and through L2 only), and the time the HBM bytes take at "
                        "that bandwidth", title_justify="left", caption_justify="left", **COMPACT)
    columns = ["variant", "HBM\nread", "HBM\nwritten", "L2\nonly", "× one\npass", "expected\nms"]
    columns += ["kernel\nms", "ratio", "call\nms", "host\nµs"] if measured else []
    columns += ["regs/\nspills"] if compiled else []
    for column in columns:
        table.add_column(column, justify="right" if column != "variant" else "left")
    one_pass = 2 * e.input_bytes
    notes = []
    for line in e.lines:
        if line.why_not is not None:
            table.add_row(line.name, *["—"] * (len(columns) - 1), style="dim")  # why: in the caption
            notes.append(f"{line.name}: {line.why_not}")
            continue
        cells = [line.name, *(_mib(n) for n in (line.read_bytes, line.write_bytes, line.l2_bytes)),
                 f"{(line.read_bytes + line.write_bytes) / one_pass:.2f}",
                 _ms(line.expected_ms) if line.expected_ms is not None else "—"]
        if measured:
            ratio = line.measured_ms / line.expected_ms if line.expected_ms and line.measured_ms else None
            cells += [_ms(line.measured_ms) if line.measured_ms else "—", f"{ratio:.2f}" if ratio else "—",
                      _ms(line.call_ms) if line.call_ms else "—", f"{line.host_us:.0f}" if line.host_us else "—"]
        if compiled:
            cells += [f"{line.n_regs}/{line.n_spills}" if line.n_regs is not None else "—"]
        table.add_row(*cells)
    if measured:
        notes.append("kernel ms: the GPU's time for a call; ratio: kernel / expected; call ms: a call among calls "
                     "issued back to back (the larger of host and kernel); host µs: the host's time to issue one" + (
                         "; INTERPRETED on CPU (wall clock), not GPU times" if e.interpreted else ""))
    table.caption = "\n".join(notes) or None
    items.append(table)
    items.append(_backward_bytes_table(e))

    fused_line = next(line for line in e.lines if line.name == "fused")
    intensity = fused_line.flops / one_pass
    flop_text = f"FLOPs: {fused_line.flops / (e.M * e.N):.0f} per element = {fused_line.flops:,} for fused"
    if e.fp32_gflops and e.bandwidth_gbps:
        compute_ms = fused_line.flops / e.fp32_gflops / 1e6
        bytes_ms = one_pass / e.bandwidth_gbps / 1e6
        ridge = e.fp32_gflops / e.bandwidth_gbps
        flop_text += f": {_ms(compute_ms)} ms at {number(e.fp32_gflops)} GFLOP/s fp32 ({e.fp32_source}) against " \
                     f"{_ms(bytes_ms)} ms to move the bytes. Intensity {intensity:.2f} FLOP/byte, "
        if intensity < ridge:
            flop_text += (f"{ridge / intensity:,.0f}× below the ridge point {ridge:.3g} FLOP/byte: the time is the "
                          "bytes, not the arithmetic.")
        else:
            flop_text += (f"at or past this device's ridge point {ridge:.3g} FLOP/byte: here the arithmetic, not the "
                          "bytes, sets the time.")
    else:
        flop_text += (f"; intensity {intensity:.2f} FLOP/byte — a GPU's ridge point is tens of FLOP/byte, so the "
                      "time is the bytes, not the arithmetic (fp32 rate not measured here).")
    items.append(Text(flop_text))

    c = e.fused_config
    share = f"⌈{c['BLOCK_N']} × {c['ROWS']} / (32 × {c['num_warps']})⌉ = {e.elems_per_thread}"
    fewer = c["BLOCK_N"] * c["ROWS"] < 32 * c["num_warps"]
    note = " (fewer elements than threads: each still holds one, some of them copies)" if fewer else ""
    holds = (
        f"fused would launch BLOCK_N = {c['BLOCK_N']}, ROWS = {c['ROWS']} rows a program, num_warps = "
        f"{c['num_warps']}: each thread holds {share} values of the row in fp32 registers{note}, against a budget of "
        f"{REGISTER_BUDGET} registers a thread (at {c['num_warps']} warps an SM's 65536 registers allow "
        f"{e.registers_per_thread} each)"
    )
    fits = e.elems_per_thread < e.registers_per_thread * 3 // 4
    holds += " — fits." if fits else " — too close to the budget: expect spills (see regs/spills)."
    if c.get("EVICT"):
        holds += (f" Its loads are {c['EVICT']}, as torch.compile's forward loads: their lines stay in L2 ahead of "
                  "others (faster on the H200; the next kernel gets less L2); SOFTMAX_BENCH_FORWARD_EVICT=plain "
                  "loads plainly.")
    if fused_line.why_not is not None:
        holds = f"fused does not run this shape: {fused_line.why_not}."
    items.append(Text(holds))
    items.append(Text(f"auto picks {e.auto[0]}: {e.auto[1]}", style="bold"))
    return items



def loss_explain_report(e) -> list:
    """Rich renderables for a LossExplanation (softmax_bench.explain.explain_loss)."""
    head = Text()
    head.append(f"{e.M}×{e.V} {e.dtype} · op cross-entropy", style="bold")
    head.append(f" — logits {e.logits_bytes:,} bytes ({e.logits_bytes / 2**20:,.1f} MiB); the loss must read them "
                f"once, a training step read them and write their gradient: {2 * e.logits_bytes:,} bytes, one copy")
    items: list = [head]
    if e.bandwidth_gbps:
        items.append(Text(f"bandwidth: {e.bandwidth_gbps:,.0f} GB/s — {e.bandwidth_source}"))
    else:
        items.append(Text(f"bandwidth: unknown — {e.bandwidth_source}; bytes only", style="yellow"))
    table = Table(title="MiB each pass must move and the fused kernel's own, through HBM (and through L2 only), and "
                        "the time at that bandwidth", title_justify="left", caption_justify="left", **COMPACT)
    for column in ("pass", "least\nread", "least\nwritten", "least\nms", "fused\nread", "fused\nwritten",
                   "L2\nonly", "fused\nms"):
        table.add_column(column, justify="left" if column == "pass" else "right")
    for pass_, least_read, least_written, read, written, l2 in e.lines:
        times = [_ms(n / e.bandwidth_gbps / 1e6) if e.bandwidth_gbps else "—"
                 for n in (least_read + least_written, read + written)]
        table.add_row("forward (the loss)" if pass_ == "forward" else "backward (a step)",
                      _mib(least_read), _mib(least_written), times[0], _mib(read), _mib(written), _mib(l2), times[1])
    c = e.config
    if e.on_cluster[1]:
        held = "each row held across a thread-block cluster: read once, the gradient written from the same registers"
    elif c["ON_CHIP"]:
        held = (f"a row's {c['BLOCK']} lanes held on chip ({c['num_warps']} warps): read once, the gradient written "
                "from the same registers")
    else:
        held = f"rows walked in chunks of {c['BLOCK']} lanes ({c['num_warps']} warps), twice with the gradient"
    forward = "reads each row once across a cluster" if e.on_cluster[0] else "walks in chunks"
    table.caption = (f"the step's kernel here: {held}; a forward with no gradient {forward}. `sweep --op "
                     "cross-entropy` times both passes beside torch, torch.compile, Liger and Quack")
    items.append(table)
    return items


def _backward_bytes_table(e) -> Table:
    """The backward's byte arithmetic: dx from y and dy, whose floor is three row passes (read y and dy, write dx)."""
    table = Table(title="the backward (dx from y and dy): MiB each moves through HBM (and through L2 only), and the "
                        "time that takes", title_justify="left", caption_justify="left", **COMPACT)
    for column in ("backward", "HBM\nread", "HBM\nwritten", "L2\nonly", "× three\npasses", "expected\nms"):
        table.add_column(column, justify="right" if column != "backward" else "left")
    three_passes = 3 * e.input_bytes
    notes = []
    for line in e.backward_lines:
        if line.why_not is not None:
            table.add_row(line.name, *["—"] * 5, style="dim")
            notes.append(f"{line.name}: {line.why_not}")
            continue
        table.add_row(line.name, *(_mib(n) for n in (line.read_bytes, line.write_bytes, line.l2_bytes)),
                      f"{(line.read_bytes + line.write_bytes) / three_passes:.2f}",
                      _ms(line.expected_ms) if line.expected_ms is not None else "—")
    table.caption = "\n".join(notes) or None
    return table


def check_table(result, run_id: str, base_id: str) -> Table:
    """Every compared cell with the gate it was held to; regressions red, improvements green."""
    verdict = ("REGRESSED" if result.regressions else "HOST COST REGRESSED" if result.host_regressions else
               "FAIL cells" if result.failures else
               "EMPTY RUN" if result.empty else "LOST CELLS" if result.exit_code else "no regression")
    table = Table(title=f"check {run_id} against {base_id} · % of copy, median (p20–p80) · a regression: down by "
                        f"more than its gate ({result.threshold:g} % + {NOISE_Z:g}× the medians' noise; older runs: + "
                        f"the p20–p80 spread, bands apart) · "
                        f"{verdict}",
                  title_justify="left")
    for column in ("cell", "baseline", "now", "change", "gate", "verdict"):
        table.add_column(column, justify="left" if column == "cell" else "right")
    regressed, improved = set(map(id, result.regressions)), set(map(id, result.improvements))
    for c in sorted(result.changes, key=lambda c: c.change):
        verdict = "REGRESSION" if id(c) in regressed else ("improvement" if id(c) in improved else "")
        style = "bold red" if id(c) in regressed else ("green" if id(c) in improved else "")
        table.add_row(c.cell, f"{c.base_pct:.1f} ({c.base_band[0]:.1f}–{c.base_band[1]:.1f})",
                      f"{c.pct:.1f} ({c.band[0]:.1f}–{c.band[1]:.1f})", f"{c.change:+.1f} %",
                      f"±{c.gate(result.threshold):.1f} %", Text(verdict, style=style))
    notes = [f"FAIL: {f}" for f in result.failures]
    notes += [f"made with other settings: {result.settings}"] if result.settings else []
    notes += [f"FAIL of torch's or a peer's code, not gated: {f}" for f in result.their_failures]
    notes += [f"HOST COST REGRESSION: {g}, past {result.host_threshold:g} %" for g in result.host_regressions]
    notes += [f"host cost: {g}" for g in result.host_changes if g not in result.host_regressions]
    if result.empty:
        notes.append("the run has no rows")
    lost = "ok in the baseline, missing, skipped or FAIL now" + (
        f" (allowed: {result.allow_missing})" if result.allow_missing else "")
    for what, cells in ((lost, result.missing), ("new in the run", result.new)):
        if cells:
            notes.append(f"{what}: {listed(cells)}")
    table.caption = "\n".join(notes) or None
    return table


def listed(items: list[str], most: int = 4) -> str:
    """The first `most` items, comma-separated, and how many there are in all when there are more."""
    more = f", … ({len(items)} in all)" if len(items) > most else ""
    return f"{', '.join(items[:most])}{more}"


def compare_table(frame: pd.DataFrame, labels: list[str]) -> Table:
    table = Table(title="compare: GB/s (% of each run's copy), ratio of GB/s to the first run", title_justify="left")
    table.add_column("cell")
    for label in labels:
        table.add_column(label, justify="right")
    for r in frame.to_dict("records"):
        cells = [cell_label(r["variant"], r["pass"], r["dtype"], r["M"], r["N"])]
        for i in range(len(labels)):
            gbps, pct = r.get(f"gbps:{i}"), r.get(f"pct:{i}")
            if gbps is None or math.isnan(gbps):
                cells.append("—")
                continue
            text = f"{number(gbps)} ({_pct(pct)})" + ("~" if r.get(f"wide:{i}") is True else "")
            ratio = r.get(f"ratio:{i}")
            if i and ratio is not None and not math.isnan(ratio):
                text += f" {ratio:.2f}×"
            cells.append(text)
        table.add_row(*cells)
    table.caption = (f"~ the cell's p20–p80 band in that run is wider than {WIDE_BAND:g} % of its median (not stable "
                     f"to {WIDE_BAND:g} %)")
    return table


def tune_table(table) -> Table:
    """The variants' GB/s per (dtype, M×N) of an auto table; ★ marks the one `auto` will run."""
    names = list(dict.fromkeys(name for entry in table.entries for name in entry["ms"]))
    out = Table(title=f"auto table · {table.device}", title_justify="left")
    forms = len(table.forms()) > 1
    if forms:
        out.add_column("form")
    out.add_column("dtype")
    out.add_column("M×N", justify="right")
    for name in names:
        out.add_column(name, justify="right")
    for entry in table.entries:
        nbytes = 2 * entry["M"] * entry["N"] * elem_size(DTYPES[entry["dtype"]])
        cells = []
        for name in names:
            ms = entry["ms"].get(name)
            text = "—" if ms is None else number(nbytes / ms / 1e6) + (" ★" if name == entry["variant"] else "")
            cells.append(Text(text, style="bold" if name == entry["variant"] else ""))
        form = [entry.get("form", "softmax")] if forms else []
        out.add_row(*form, entry["dtype"], f"{entry['M']}×{entry['N']}", *cells)
    out.caption = "GB/s = 2·M·N·element size / median time; — : the variant does not support the row or was wrong"
    return out
