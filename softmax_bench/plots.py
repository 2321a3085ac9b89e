"""Figures of a stored run (matplotlib, Agg): the roofline, % of copy against N, registers and spills against N.

Each figure has one panel per dtype; every variant of the run found in the rows is a series (nothing is listed
here by hand), so a new variant or peer appears in every plot. FLOPs and HBM bytes come from the registry's
current models (softmax_bench.kernels), as every other reader of the registry takes them. A run on several devices
is drawn by the median over its devices of each cell (softmax_bench.across_devices).
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
from PIL import Image  # noqa: E402

from .across_devices import median_over_devices  # noqa: E402
from .errors import BenchError  # noqa: E402
from .kernels import (BACKWARD_FLOPS_PER_ELEMENT, DTYPES, REGISTER_BUDGET, SOFTMAX_FLOPS_PER_ELEMENT,  # noqa: E402
                      backward_traffic, backwards, one_pass_traffic, variants)
from .ops import get_op  # noqa: E402
from .report import device_text, number  # noqa: E402
from .results import Run  # noqa: E402

PANEL_INCHES = (6.4, 4.8)
ROOFLINE_HEIGHT = 6.4  # room for the legend under the axes
DPI = 100
MARKERS = "osD^v<>ph*XP"
PCT_AXIS_TOP = 110  # % of copy: values past it are marked at the top edge
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in an SVG: small files, searchable


def _title(kind: str, meta: dict, dtypes: list[str], pass_: str = "forward") -> str:
    device = device_text(meta) + (", median over the devices" if meta.get("placement") == "replicated" else "")
    date = (meta.get("started_at") or "")[:10]
    interpreted = " — INTERPRETED on CPU" if meta.get("interpreted") else ""
    kind += " — BACKWARD (read y and dy, write dx)" if pass_ == "backward" else ""
    return f"{kind} — {device}{interpreted}\n{', '.join(dtypes)} — {date} — run {meta.get('run_id', '?')}"


def _panels(rows: pd.DataFrame, nrows: int = 1, height: float = PANEL_INCHES[1]):
    dtypes = list(dict.fromkeys(rows["dtype"]))
    fig, axes = plt.subplots(
        nrows, len(dtypes), figsize=(PANEL_INCHES[0] * len(dtypes), height * nrows), dpi=DPI, squeeze=False
    )
    return fig, axes, dtypes


def _marker(names: list[str], name: str) -> str:
    return MARKERS[names.index(name) % len(MARKERS)]


def _registered(name: str, config: object, pass_: str):
    """The registry's variant (or backward) a row measured: auto as the one it picked; None for a peer."""
    if name == "auto" and isinstance(config, str) and "picked=" in config:
        name = config.split("picked=")[1].split()[0]
    return (backwards() if pass_ == "backward" else variants()).get(name)


def flops_and_hbm_bytes(row, op: str, pass_: str = "forward") -> tuple[int, int]:
    """A row's FLOPs and HBM bytes by the current models: its variant's or backward's (a peer counts as a one-pass
    softmax, or a backward that reads y and dy once and writes dx once)."""
    registered = _registered(row.variant, row.config, pass_)
    M, N = int(row.M), int(row.N)
    fusion = get_op(op).fusion(torch.empty(M, N, device="meta"))  # shapes only
    if pass_ == "backward":
        traffic = (registered.traffic if registered else backward_traffic)(M, N, DTYPES[row.dtype], fusion)
        return BACKWARD_FLOPS_PER_ELEMENT * M * N, traffic.total_bytes
    traffic = (registered.traffic if registered else one_pass_traffic)(M, N, DTYPES[row.dtype], fusion)
    per_element = registered.flops_per_element if registered else SOFTMAX_FLOPS_PER_ELEMENT
    return per_element * M * N, traffic.total_bytes


def roofline(rows: pd.DataFrame, meta: dict, pass_: str = "forward") -> plt.Figure:
    """Achieved GFLOP/s against arithmetic intensity (FLOPs per HBM byte), log-log, under one roof: the smaller of
    the run's copy bandwidth × intensity and the device's measured fp32 rate, with the ridge point marked. Axes
    fit the points and the ridge; a point above the roof is ringed, and the legend says by how much and why."""
    ok = rows[rows["status"] == "ok"]
    fig, axes, dtypes = _panels(rows, height=ROOFLINE_HEIGHT)
    names = list(dict.fromkeys(rows["variant"]))
    peak = (meta.get("copy_baseline", {}).get("fp32_flops") or {}).get("gflops")
    op = meta.get("op", "softmax")
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        model = pd.DataFrame([flops_and_hbm_bytes(r, op, pass_) for r in part.itertuples()], index=part.index,
                             columns=["flops", "hbm_bytes"])
        intensity = model["flops"] / model["hbm_bytes"]
        gflops = model["flops"] / part["ms"] / 1e6
        for name, series in part.groupby("variant", sort=False):
            ax.scatter(intensity[series.index], gflops[series.index], marker=_marker(names, name), label=name)
        copy = meta.get("copy_gbps", {}).get(dtype)
        ridge = peak / copy if peak and copy else None
        lo = intensity.min() / 2
        hi = max(intensity.max(), ridge or 0) * 2
        if copy or peak:
            _roof(ax, copy, peak, lo, hi)
            _ring_points_above(ax, intensity, gflops, intensity.map(_roof_at(copy, peak)), meta, dtype)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(gflops.min() / 2, max(gflops.max(), peak or 0) * 2)
        ax.set_xlabel("arithmetic intensity (FLOP per HBM byte, by each variant's traffic model)")
        ax.set_ylabel("achieved GFLOP/s")
        ax.set_title(dtype)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3)  # off the points
    fig.suptitle(_title("roofline", meta, dtypes, pass_), fontsize="medium")
    fig.tight_layout()
    return fig


def _roof_at(copy: float | None, peak: float | None):
    """The roof's GFLOP/s at an intensity: copy GB/s × FLOP/byte, at most the fp32 peak (either may be unknown)."""
    return lambda x: min(copy * x if copy else math.inf, peak or math.inf)


def _roof(ax, copy: float | None, peak: float | None, lo: float, hi: float) -> None:
    """One line: min(copy × intensity, peak) over [lo, hi], bending at the ridge point, which is marked."""
    ridge = peak / copy if peak and copy else None
    xs = [lo] + ([ridge] if ridge and lo < ridge < hi else []) + [hi]
    ys = [_roof_at(copy, peak)(x) for x in xs]
    parts = [f"copy {number(copy)} GB/s × intensity" if copy else "", f"fp32 {number(peak)} GFLOP/s" if peak else ""]
    roofs = ",\n".join(p for p in parts if p)
    ax.plot(xs, ys, "k-", linewidth=1.5, label=f"roof: min({roofs})")
    if ridge:
        ax.plot([ridge], [peak], "kD", markersize=5)
        ax.annotate(f"ridge point: {ridge:.3g} FLOP/byte", (ridge, peak), textcoords="offset points", xytext=(-8, 4),
                    ha="right", fontsize="small")


def _ring_points_above(ax, intensity: pd.Series, gflops: pd.Series, roof: pd.Series, meta: dict, dtype: str) -> None:
    """Ring the points above the roof; the legend says how far, and whether this run's own copies went as far."""
    above = gflops > roof
    if not above.any():
        return
    excess = 100 * (gflops[above] / roof[above]).max() - 100
    copies = [c["gbps"] for c in meta.get("copy_baseline", {}).get("copies", []) if c.get("dtype") == dtype]
    reference = meta.get("copy_gbps", {}).get(dtype)
    best = max(copies, default=0)
    if reference and best >= reference * (1 + excess / 100):
        why = f"within this run's larger copies (up to {number(best)} GB/s)"
    else:
        why = "past every copy of this run: a traffic model counts bytes HBM did not move"
    ax.scatter(intensity[above], gflops[above], s=150, facecolors="none", edgecolors="tab:red", linewidths=1.2,
               label=f"{int(above.sum())} above the roof by ≤ {excess:.1f} %,\n{why}")


def bandwidth_vs_n(rows: pd.DataFrame, meta: dict, pass_: str = "forward") -> plt.Figure:
    """% of copy against N (log2), one line per variant: where a variant stops scaling. A value past the top of the
    axis is marked there with its value."""
    ok = rows[rows["status"] == "ok"]
    fig, axes, dtypes = _panels(rows)
    names = list(dict.fromkeys(rows["variant"]))
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            (line,) = ax.plot(series["N"], series["pct_of_copy"], marker=_marker(names, name), label=name)
            for r in series[series["pct_of_copy"] > PCT_AXIS_TOP].itertuples():
                ax.scatter([r.N], [PCT_AXIS_TOP], marker="^", s=60, color=line.get_color(), clip_on=False, zorder=3)
                ax.annotate(f"{r.pct_of_copy:.0f} %", (r.N, PCT_AXIS_TOP), textcoords="offset points", xytext=(0, -14),
                            ha="center", fontsize="x-small", color=line.get_color())
        ax.axhline(100, color="k", linestyle="--", label="a copy of the same bytes (100 %)")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, PCT_AXIS_TOP)
        ax.set_xlabel("N (row length)")
        ax.set_ylabel(f"% of a copy of the cell's bytes (▲: past {PCT_AXIS_TOP} %)")
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(_title("bandwidth vs N", meta, dtypes, pass_), fontsize="medium")
    fig.tight_layout()
    return fig


def registers_vs_n(rows: pd.DataFrame, meta: dict, pass_: str = "forward") -> plt.Figure:
    """Registers a thread and spilled values of each Triton variant's (or backward's) compiled kernel against N;
    one panel saying so when the run compiled nothing (an interpreted run)."""
    registry = backwards() if pass_ == "backward" else variants()
    triton_names = [n for n, v in registry.items() if v.triton]
    compiled = rows[rows["variant"].isin(triton_names) & rows["n_regs"].notna()]
    if compiled.empty:
        fig, ax = plt.subplots(figsize=PANEL_INCHES, dpi=DPI)
        ax.text(0.5, 0.5, "Nothing to show: registers and spills are known only\nfor kernels compiled for a GPU, "
                "and this run compiled none" + (" (interpreted)." if meta.get("interpreted") else "."),
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        fig.suptitle(_title("registers and spills vs N", meta, list(dict.fromkeys(rows["dtype"])), pass_),
                     fontsize="medium")
        return fig
    fig, axes, dtypes = _panels(rows, nrows=2)
    for column, dtype in enumerate(dtypes):
        regs_ax, spills_ax = axes[0][column], axes[1][column]
        part = compiled[compiled["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            regs_ax.plot(series["N"], series["n_regs"], marker=_marker(triton_names, name), label=name)
            spills_ax.plot(series["N"], series["n_spills"], marker=_marker(triton_names, name), label=name)
        regs_ax.axhline(REGISTER_BUDGET, color="tab:red", linestyle=":", label=f"{REGISTER_BUDGET} registers a thread")
        regs_ax.set_ylim(0, REGISTER_BUDGET * 1.1)
        top = max(1.0, part["n_spills"].max()) * 1.1  # all zero: 0 … 1, not ±0.04
        spills_ax.set_ylim(-0.05 * top, top)
        for ax, label in ((regs_ax, "registers a thread"), (spills_ax, "spilled values (4-byte words of local memory)")):
            ax.set_xscale("log", base=2)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("N (row length)")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
        regs_ax.set_title(dtype)
    fig.suptitle(_title("registers and spills vs N", meta, dtypes, pass_), fontsize="medium")
    fig.tight_layout()
    return fig


FIGURES = {"roofline": roofline, "bandwidth-vs-n": bandwidth_vs_n, "registers-vs-n": registers_vs_n}


def plot_run(run: Run) -> list[Path]:
    """Write every figure of the run beside it, as PNG and SVG, for each pass it measured (the backward's named
    `*-backward`); returns the paths."""
    rows, meta = median_over_devices(run.nonempty_rows()), run.meta()
    if not (rows["status"] == "ok").any():
        raise BenchError(f"run {run.id} has no timed rows (every cell was skipped or FAIL): nothing to plot")
    paths = []
    for pass_, part in rows.groupby("pass", sort=False):
        if not (part["status"] == "ok").any():
            continue
        suffix = "" if pass_ == "forward" else f"-{pass_}"
        for name, make in FIGURES.items():
            fig = make(part, meta, pass_)
            png, svg = run.path / f"{name}{suffix}.png", run.path / f"{name}{suffix}.svg"
            save_png(fig, png)
            fig.savefig(svg, dpi=DPI)
            paths += [png, svg]
            plt.close(fig)
    return paths


def save_png(fig: plt.Figure, path: Path) -> None:
    """A PNG of 256 colours (matplotlib's Pillow): the same picture, a third of the bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)
