"""Figures of a stored run (matplotlib, Agg): the roofline, % of copy against N, registers and spills against N.

Each figure has one panel per dtype; every variant of the run found in the rows is a series (nothing is listed
here by hand), so a new variant or peer appears in every plot.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .kernels import REGISTER_BUDGET, SOFTMAX_FLOPS_PER_ELEMENT, variants  # noqa: E402
from .errors import BenchError  # noqa: E402
from .results import Run  # noqa: E402

PANEL_INCHES = (6.4, 4.8)
DPI = 100
MARKERS = "osD^v<>ph*XP"


def _title(kind: str, meta: dict, dtypes: list[str]) -> str:
    device = meta.get("device", {}).get("name", "unknown device")
    date = (meta.get("started_at") or "")[:10]
    interpreted = " — INTERPRETED on CPU" if meta.get("interpreted") else ""
    return f"{kind} — {device}{interpreted}\n{', '.join(dtypes)} — {date} — run {meta.get('run_id', '?')}"


def _panels(rows: pd.DataFrame, nrows: int = 1):
    dtypes = list(dict.fromkeys(rows["dtype"]))
    fig, axes = plt.subplots(
        nrows, len(dtypes), figsize=(PANEL_INCHES[0] * len(dtypes), PANEL_INCHES[1] * nrows), dpi=DPI, squeeze=False
    )
    return fig, axes, dtypes


def _marker(names: list[str], name: str) -> str:
    return MARKERS[names.index(name) % len(MARKERS)]


def flops_per_element(name: str, config: object = None) -> int:
    """A variant's FLOPs per element: auto counts as the variant it picked; peers as a one-pass softmax (5)."""
    if name == "auto" and isinstance(config, str) and "picked=" in config:
        name = config.split("picked=")[1].split()[0]
    variant = variants().get(name)
    return variant.flops_per_element if variant is not None else SOFTMAX_FLOPS_PER_ELEMENT


def roofline(rows: pd.DataFrame, meta: dict) -> plt.Figure:
    """Arithmetic intensity (FLOPs / the variant's own model bytes) against achieved GFLOP/s, log-log, under the
    run's copy bandwidth and the device's fp32 rate."""
    ok = rows[rows["status"] == "ok"]
    fig, axes, dtypes = _panels(rows)
    names = list(dict.fromkeys(rows["variant"]))
    flops_info = meta.get("copy_baseline", {}).get("fp32_flops") or {}
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            per_element = [flops_per_element(name, config) for config in series["config"]]
            flops = series["M"] * series["N"] * per_element
            intensity = flops / series["model_bytes"]
            gflops = flops / series["ms"] / 1e6
            ax.scatter(intensity, gflops, marker=_marker(names, name), label=name)
        copy_gbps = meta.get("copy_gbps", {}).get(dtype)
        xs = [1e-2, 1e3]
        if copy_gbps:
            ax.plot(xs, [copy_gbps * x for x in xs], "k--", label=f"memory: copy {copy_gbps:,.0f} GB/s")
        if flops_info.get("gflops"):
            ax.axhline(flops_info["gflops"], color="tab:red", linestyle=":",
                       label=f"compute: fp32 {flops_info['gflops'] / 1e3:,.1f} TFLOP/s ({flops_info['how'].split(':')[0]})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*xs)
        ax.set_xlabel("arithmetic intensity (FLOP / byte moved, by each variant's traffic model)")
        ax.set_ylabel("achieved GFLOP/s")
        ax.set_title(dtype)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(_title("roofline", meta, dtypes), fontsize="medium")
    fig.tight_layout()
    return fig


def bandwidth_vs_n(rows: pd.DataFrame, meta: dict) -> plt.Figure:
    """% of the run's copy against N (log2), one line per variant: where a variant stops scaling."""
    ok = rows[rows["status"] == "ok"]
    fig, axes, dtypes = _panels(rows)
    names = list(dict.fromkeys(rows["variant"]))
    for ax, dtype in zip(axes[0], dtypes):
        part = ok[ok["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            ax.plot(series["N"], series["pct_of_copy"], marker=_marker(names, name), label=name)
        ax.axhline(100, color="k", linestyle="--", label="device copy (100 %)")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 110)
        ax.set_xlabel("N (row length)")
        ax.set_ylabel("% of the run's copy bandwidth")
        ax.set_title(dtype)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(_title("bandwidth vs N", meta, dtypes), fontsize="medium")
    fig.tight_layout()
    return fig


def registers_vs_n(rows: pd.DataFrame, meta: dict) -> plt.Figure:
    """Registers a thread and spilled values of each Triton variant's compiled kernel against N."""
    triton_names = [n for n, v in variants().items() if v.triton]
    compiled = rows[rows["variant"].isin(triton_names) & rows["n_regs"].notna()]
    fig, axes, dtypes = _panels(rows, nrows=2)
    for column, dtype in enumerate(dtypes):
        regs_ax, spills_ax = axes[0][column], axes[1][column]
        part = compiled[compiled["dtype"] == dtype]
        for name, series in part.groupby("variant", sort=False):
            series = series.sort_values("N")
            regs_ax.plot(series["N"], series["n_regs"], marker=_marker(triton_names, name), label=name)
            spills_ax.plot(series["N"], series["n_spills"], marker=_marker(triton_names, name), label=name)
        regs_ax.axhline(REGISTER_BUDGET, color="tab:red", linestyle=":", label=f"{REGISTER_BUDGET} registers a thread")
        if part.empty:
            regs_ax.text(0.5, 0.5, "no compiled kernels in this run (interpreted)", ha="center",
                         transform=regs_ax.transAxes)
        for ax, label in ((regs_ax, "registers a thread"), (spills_ax, "spilled values (4-byte words of local memory)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("N (row length)")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="small")
        regs_ax.set_title(dtype)
    fig.suptitle(_title("registers and spills vs N", meta, dtypes), fontsize="medium")
    fig.tight_layout()
    return fig


FIGURES = {"roofline": roofline, "bandwidth-vs-n": bandwidth_vs_n, "registers-vs-n": registers_vs_n}


def plot_run(run: Run) -> list[Path]:
    """Write every figure of the run beside it, as PNG and SVG; returns the paths."""
    rows, meta = run.nonempty_rows(), run.meta()
    if not (rows["status"] == "ok").any():
        raise BenchError(f"run {run.id} has no timed rows (every cell was skipped or FAIL): nothing to plot")
    paths = []
    for name, make in FIGURES.items():
        fig = make(rows, meta)
        for ext in ("png", "svg"):
            path = run.path / f"{name}.{ext}"
            fig.savefig(path, dpi=DPI)
            paths.append(path)
        plt.close(fig)
    return paths
