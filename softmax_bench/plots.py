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
from matplotlib.ticker import MaxNLocator  # noqa: E402
from PIL import Image  # noqa: E402

from .across_devices import median_over_devices  # noqa: E402
from .errors import BenchError  # noqa: E402
from .kernels import (BACKWARD_FLOPS_PER_ELEMENT, DTYPES, REGISTER_BUDGET, SOFTMAX_FLOPS_PER_ELEMENT,  # noqa: E402
                      backwards, floor_traffic, variants)
from .ops import get_op, judged_by_roofline, pass_bytes  # noqa: E402
from .peers import PEERS  # noqa: E402
from .report import device_text, number  # noqa: E402
from .results import CellFilter, Run, pct_band  # noqa: E402

PANEL_INCHES = (6.4, 4.8)
ROOFLINE_HEIGHT = 6.4  # room for the legend under the axes
DPI = 100
MARKERS = "osD^v<>ph*XP"
LABELLED_SLOWEST = 3
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in an SVG: small files, searchable
matplotlib.rcParams["svg.hashsalt"] = "softmax-bench"  # the same ids in every render: a re-plot changes no byte
SVG_METADATA = {"Date": None}  # no date in an SVG either


def series_names() -> list[str]:
    """Every name a series can have, in a fixed order — our variants, auto, the peers — so that a variant has one
    colour and one marker in every panel of every plot of every run."""
    return [*variants(), "auto", *PEERS]


def style(name: str) -> dict:
    """A series' colour and marker by its name (series_names); a peer's markers hollow and its lines dashed."""
    names = series_names()
    i = names.index(name) if name in names else len(names) + sum(map(ord, name))
    peer = name in PEERS or name == "eager"
    return {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)], "peer": peer}


def line_style(name: str) -> dict:
    s = style(name)
    return {"color": s["color"], "marker": s["marker"], "linestyle": "--" if s["peer"] else "-",
            "markerfacecolor": "none" if s["peer"] else s["color"]}


def scatter_style(name: str) -> dict:
    s = style(name)
    return {"marker": s["marker"], "edgecolors": s["color"], "facecolors": "none" if s["peer"] else s["color"]}


def _title(kind: str, meta: dict, dtypes: list[str], pass_: str = "forward") -> str:
    device = device_text(meta) + (", median over the devices" if meta.get("placement") == "replicated" else "")
    date = (meta.get("started_at") or "")[:10]
    interpreted = " — INTERPRETED on CPU" if meta.get("interpreted") else ""
    if pass_ == "backward":
        kind += f" — BACKWARD ({pass_bytes(meta.get('op', 'softmax'), pass_)[1]})"
    return f"{kind} — {device}{interpreted}\n{', '.join(dtypes)} — {date} — run {meta.get('run_id', '?')}"


def _panels(rows: pd.DataFrame, nrows: int = 1, height: float = PANEL_INCHES[1]):
    dtypes = list(dict.fromkeys(rows["dtype"]))
    fig, axes = plt.subplots(
        nrows, len(dtypes), figsize=(PANEL_INCHES[0] * len(dtypes), height * nrows), dpi=DPI, squeeze=False
    )
    return fig, axes, dtypes


def _registered(name: str, config: object, pass_: str):
    """The registry's variant (or backward) a row measured: auto as the one it picked; None for a peer."""
    if name == "auto" and isinstance(config, str) and "picked=" in config:
        name = config.split("picked=")[1].split()[0]
    return (backwards() if pass_ == "backward" else variants()).get(name)


# a step's gradient an element: the probability's coefficient, the target's term, the scale
CROSS_ENTROPY_GRADIENT_FLOPS = 3


def useful_flops_per_element(op: str, pass_: str) -> int:
    """The op's FLOPs an element, the same for every variant."""
    if op == "cross-entropy":
        return SOFTMAX_FLOPS_PER_ELEMENT + (CROSS_ENTROPY_GRADIENT_FLOPS if pass_ == "backward" else 0)
    return BACKWARD_FLOPS_PER_ELEMENT if pass_ == "backward" else SOFTMAX_FLOPS_PER_ELEMENT


def flops_and_hbm_bytes(row, op: str, pass_: str = "forward", mask_shape: str = "full",
                        log: bool = False) -> tuple[int, int]:
    """A row's useful FLOPs — the op's, the same for every variant: work a variant does twice (two_pass's second
    exp) is not more work done — and its HBM bytes by its variant's or backward's traffic model (a peer counts as
    a one-pass softmax, or a backward that reads y and dy once and writes dx once)."""
    M, N = int(row.M), int(row.N)
    if op == "cross-entropy":  # the loss's own providers: the bytes their model gave the row (sweep.measure_cell)
        return useful_flops_per_element(op, pass_) * M * N, int(row.model_bytes)
    registered = _registered(row.variant, row.config, pass_)
    dtype = DTYPES[row.dtype]
    fusion = get_op(op).shapes_fusion(M, N, dtype, mask_shape, log)
    traffic = registered.traffic(M, N, dtype, fusion) if registered else floor_traffic(M, N, dtype, fusion, pass_)
    return useful_flops_per_element(op, pass_) * M * N, traffic.total_bytes


def roofline(rows: pd.DataFrame, meta: dict, pass_: str = "forward") -> plt.Figure:
    """Achieved GFLOP/s against arithmetic intensity (FLOPs per HBM byte), log-log, under one roof: the smaller of
    the run's copy bandwidth × intensity and the device's measured fp32 rate, with the ridge point marked. Axes
    fit the points and the ridge; a point above the roof is ringed, and the legend says by how much and why. The
    panel's LABELLED_SLOWEST slowest points and its fastest are labelled with their variant and N."""
    ok = rows[rows["status"] == "ok"]
    fig, axes, dtypes = _panels(rows, height=ROOFLINE_HEIGHT)
    peak = (meta.get("copy_baseline", {}).get("fp32_flops") or {}).get("gflops")
    op = meta.get("op", "softmax")
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        model = pd.DataFrame([flops_and_hbm_bytes(r, op, pass_, meta.get("mask_shape", "full"), meta.get("log", False))
                              for r in part.itertuples()], index=part.index,
                             columns=["flops", "hbm_bytes"])
        intensity = model["flops"] / model["hbm_bytes"]
        gflops = model["flops"] / part["ms"] / 1e6
        for name, series in part.groupby("variant", sort=False):
            ax.scatter(intensity[series.index], gflops[series.index], label=name, **scatter_style(name))
        # which cells the panel's slowest points and its fastest are (one-pass variants share an intensity, so a
        # label at every point would be a column of overlapping text)
        marked = [*gflops.nsmallest(LABELLED_SLOWEST).index, gflops.idxmax()] if len(gflops) else []
        for k, i in enumerate(dict.fromkeys(marked)):
            ax.annotate(f"{part.at[i, 'variant']} N={int(part.at[i, 'N'])}", (intensity[i], gflops[i]),
                        textcoords="offset points", xytext=(24, -11 * k), fontsize="xx-small", va="center",
                        arrowprops={"arrowstyle": "-", "linewidth": 0.5, "color": "0.4"})
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
        flops = useful_flops_per_element(op, pass_)
        ax.set_xlabel(f"arithmetic intensity (useful FLOP per HBM byte: {flops} an element for every variant,\n"
                      "bytes by each variant's traffic model)", fontsize="small")
        ax.set_ylabel("achieved GFLOP/s (useful FLOPs)")
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


def grid_elements(rows: pd.DataFrame) -> int:
    """The M·N most of the run's cells share (the default grid's 2^27): its cells are joined by lines, and cells
    of other sizes (the vocabulary shapes) are drawn apart, as points."""
    return int((rows["M"].astype("int64") * rows["N"].astype("int64")).mode().iloc[0])


def by_grid(series: pd.DataFrame, grid: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows of M·N = grid, drawn as a line; the others, drawn as points)."""
    on_grid = series[series["M"].astype("int64") * series["N"].astype("int64") == grid]
    return on_grid, series.drop(on_grid.index)


def figure_legend(fig: plt.Figure, axes, bottom: float = 0.0) -> None:
    """One legend for the figure, its lower edge at `bottom` (of the figure's height), below the panels: off the
    data, and a variant drawn alike in each panel listed once."""
    legend = {}
    for ax in axes[0]:
        legend.update({label: handle for handle, label in zip(*ax.get_legend_handles_labels())})
    fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=min(6, len(legend)), fontsize="x-small",
               bbox_to_anchor=(0.5, bottom))


def figure_name(name: str, pass_: str) -> str:
    """A figure's file name: the backward's end in -backward."""
    return name + ("" if pass_ == "forward" else f"-{pass_}")


def bands(rows: pd.DataFrame, column: str = "pct_of_copy") -> tuple[list[float], list[float]]:
    """The rows' p20–p80 bands in % of copy (results.pct_band: the kernel's and its copy's noise, as `check`
    gates on them), or in % of roofline (column, scaled as the row's value is), as (lows, highs), each reaching
    the row's own value: a replicated run's median over devices takes each quantile's median apart, and those need
    not hold the median % of copy between them."""
    scales = (rows[column] / rows["pct_of_copy"]).tolist()
    pairs = [(low * k, high * k) for (low, high), k in zip((pct_band(r) for r in rows.itertuples()), scales)]
    pcts = rows[column].tolist()
    return [min(low, p) for (low, _), p in zip(pairs, pcts)], [max(high, p) for (_, high), p in zip(pairs, pcts)]


def judged_by(rows: pd.DataFrame, meta: dict) -> tuple[str, str]:
    """(the rows' column a figure plots, its axis label): % of the cell's own roofline for a fused op's run (its
    mask read, a causal row's columns past the diagonal not), else % of a copy of the cell's bytes."""
    if judged_by_roofline(rows, meta):
        return "pct_of_roofline", "% of the roofline of its own bytes: at a copy's speed (band: p20–p80)"
    return "pct_of_copy", "% of a copy of the cell's bytes (band: p20–p80)"


def bandwidth_vs_n(rows: pd.DataFrame, meta: dict, pass_: str = "forward") -> plt.Figure:
    """% of copy against N (log2), one line per variant over the run's grid (cells of one M·N) with its p20–p80
    band, the other shapes as points: where a variant stops scaling. The y-range fits the data and 100 %; a FAIL or
    skipped cell is an × at the bottom of the panel, its reason in a footnote."""
    ok = rows[rows["status"] == "ok"]
    not_ok = rows[rows["status"] != "ok"]
    fig, axes, dtypes = _panels(rows, height=PANEL_INCHES[1] + 1.2)
    grid = grid_elements(rows)
    column, label = judged_by(ok, meta)
    notes: dict[tuple[str, str], list] = {}  # (variant, status) → [its mark, the first reason, how many cells]
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        values = part[column].tolist() + [100.0]
        bottom = max(0.0, min(values) - 0.08 * (max(values) - min(values) + 1))
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            on_grid, other = by_grid(series, grid)
            styled = line_style(name)
            ax.plot(on_grid["N"], on_grid[column], label=name, **styled)
            low, high = bands(on_grid, column)
            ax.fill_between(on_grid["N"], low, high, color=styled["color"], alpha=0.2, linewidth=0)
            if not other.empty:
                low, high = bands(other, column)
                spread = [other[column] - low, high - other[column]]
                ax.errorbar(other["N"], other[column], yerr=spread, fmt=styled["marker"], color=styled["color"],
                            markerfacecolor=styled["markerfacecolor"], linestyle="none")
        for r in not_ok[not_ok["dtype"] == dtype].itertuples():
            note = notes.setdefault((r.variant, r.status), [len(notes) + 1, str(r.reason)[:100], 0])
            note[2] += 1
            ax.scatter([r.N], [bottom], marker="x", color=style(r.variant)["color"], clip_on=False, zorder=3)
            ax.annotate(str(note[0]), (r.N, bottom), textcoords="offset points", xytext=(3, 3), fontsize="xx-small")
        ax.axhline(100, color="k", linestyle=":", label="a copy of the same bytes (100 %)" if column == "pct_of_copy"
                   else "the cell's own bytes at a copy's speed (100 %)")
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom, max(values) + 0.08 * (max(values) - min(values) + 1))
        ax.set_xlabel(f"N (row length; lines: the cells of M·N = {grid:,}, points: other shapes)", fontsize="small")
        ax.set_ylabel(label)
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
    figure_legend(fig, axes, bottom=0.06 if notes else 0.0)
    if notes:
        fig.text(0.01, 0.005, "×: " + "; ".join(f"{mark} {variant} {status} at {cells} cell{'s' * (cells > 1)} "
                                               f"(first: {why})" for (variant, status), (mark, why, cells)
                                               in notes.items()), fontsize="xx-small", wrap=True, va="bottom")
    fig.suptitle(_title("bandwidth vs N", meta, dtypes, pass_), fontsize="medium")
    fig.tight_layout(rect=(0, 0.2 if notes else 0.12, 1, 1))
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
    spills = bool(compiled["n_spills"].fillna(0).max() > 0)  # none anywhere: a line of text, not a panel of zeros
    fig, axes, dtypes = _panels(rows, nrows=2 if spills else 1)
    for column, dtype in enumerate(dtypes):
        regs_ax = axes[0][column]
        spills_ax = axes[1][column] if spills else None
        part = compiled[compiled["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            regs_ax.plot(series["N"], series["n_regs"], label=name, **line_style(name))
            if spills:
                spills_ax.plot(series["N"], series["n_spills"], label=name, **line_style(name))
        regs_ax.axhline(REGISTER_BUDGET, color="tab:red", linestyle=":", label=f"{REGISTER_BUDGET} registers a thread")
        regs_ax.set_ylim(0, REGISTER_BUDGET * 1.1)
        panels = [(regs_ax, "registers a thread")]
        if spills:
            top = max(1.0, part["n_spills"].max()) * 1.1  # zero in this dtype: 0 … 1, not ±0.04
            spills_ax.set_ylim(-0.05 * top, top)
            panels.append((spills_ax, "spilled values (4-byte words of local memory)"))
        for ax, label in panels:
            ax.set_xscale("log", base=2)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("N (row length)")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
        regs_ax.set_title(dtype)
    if not spills:
        fig.text(0.5, 0.01, "Spills: none — no compiled kernel of this run spilled, at any N.", ha="center",
                 fontsize="small")
    fig.suptitle(_title("registers and spills vs N", meta, dtypes, pass_), fontsize="medium")
    fig.tight_layout(rect=(0, 0 if spills else 0.04, 1, 1))
    return fig


FIGURES = {"roofline": roofline, "bandwidth-vs-n": bandwidth_vs_n, "registers-vs-n": registers_vs_n}


def speedup_vs_n(frame: pd.DataFrame, labels: list[str], pass_: str = "forward") -> plt.Figure:
    """Each later run's GB/s over the first run's, cell by cell (regression.compare's ratio:i), against N: one
    panel per dtype, a line per variant over the grid's cells (a later run after the second dotted), other shapes
    as points; above 1, faster than the first run."""
    dtypes = list(dict.fromkeys(frame["dtype"]))
    fig, axes = plt.subplots(1, len(dtypes), figsize=(PANEL_INCHES[0] * len(dtypes), PANEL_INCHES[1] + 1.2), dpi=DPI,
                             squeeze=False)
    grid = grid_elements(frame)
    ratios = [f"ratio:{i}" for i in range(1, len(labels))]
    for ax, dtype in zip(axes[0], dtypes):
        part = frame[frame["dtype"] == dtype]
        for i, ratio in enumerate(ratios, start=1):
            for name, series in part.dropna(subset=[ratio]).groupby("variant", sort=False):
                series = series.sort_values("N")
                on_grid, other = by_grid(series, grid)
                styled = line_style(name) | ({"linestyle": ":"} if i > 1 else {})
                label = name if len(ratios) == 1 else f"{name}: {labels[i]}"
                ax.plot(on_grid["N"], on_grid[ratio], label=label, **styled)
                ax.plot(other["N"], other[ratio], **(styled | {"linestyle": "none"}))
        ax.axhline(1.0, color="k", linestyle=":", label=f"as fast as {labels[0]}")
        values = [1.0, *part[ratios].stack().tolist()]
        pad = 0.08 * (max(values) - min(values) + 0.02)
        ax.set_ylim(min(values) - pad, max(values) + pad)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"N (row length; lines: the cells of M·N = {grid:,}, points: other shapes)", fontsize="small")
        ax.set_ylabel(f"GB/s over {labels[0]}'s, the same cell (> 1: faster)")
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
    figure_legend(fig, axes)
    backward = " — BACKWARD" if pass_ == "backward" else ""
    fig.suptitle(f"speed-up vs N{backward} — {', '.join(labels[1:])} over {labels[0]}\n{', '.join(dtypes)}",
                 fontsize="medium")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def plot_comparison(runs: list[Run], out: Path | None = None, cells: CellFilter = CellFilter()) -> list[Path]:
    """The speed-up of each later run over the first, cell by cell, for each pass they share, into `out` (None:
    beside the last run) as speedup-vs-n[-backward].png and .svg; returns the paths."""
    from .regression import compare, run_labels

    frame, labels = compare(runs, cells), run_labels(runs)
    out = runs[-1].path if out is None else Path(out)
    paths = []
    for pass_, part in frame.groupby("pass", sort=False):
        fig = speedup_vs_n(part, labels, pass_)
        paths += _save(fig, out, figure_name("speedup-vs-n", pass_))
    return paths


def _save(fig: plt.Figure, out: Path, name: str) -> list[Path]:
    """The figure as out/name.png and .svg; a folder that cannot be written is said in one line."""
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    try:
        out.mkdir(parents=True, exist_ok=True)
        save_png(fig, png)
        fig.savefig(svg, dpi=DPI, metadata=SVG_METADATA)
    except OSError as err:
        raise BenchError(f"cannot write the plots into {out}: {err.strerror or err}; give --to a folder you can "
                         "write") from None
    finally:
        plt.close(fig)
    return [png, svg]


def plot_run(run: Run, out: Path | None = None, cells: CellFilter = CellFilter()) -> list[Path]:
    """Write every figure of the run's cells that `cells` keeps into `out` (None: beside the run), as PNG and SVG,
    for each pass it measured (the backward's named `*-backward`); returns the paths. The same run gives the same
    files, byte for byte."""
    out = run.path if out is None else Path(out)
    rows, meta = cells.apply(median_over_devices(run.nonempty_rows()), f"run {run.id}"), run.meta()
    if not (rows["status"] == "ok").any():
        raise BenchError(f"run {run.id} has no timed rows (every cell was skipped or FAIL): nothing to plot")
    paths = []
    for pass_, part in rows.groupby("pass", sort=False):
        if not (part["status"] == "ok").any():
            continue
        for name, make in FIGURES.items():
            paths += _save(make(part, meta, pass_), out, figure_name(name, pass_))
    return paths


def save_png(fig: plt.Figure, path: Path) -> None:
    """A PNG of 256 colours (matplotlib's Pillow): the same picture, a third of the bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    Image.open(buffer).convert("RGB").quantize(256).save(path, optimize=True)
