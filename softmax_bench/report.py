"""Rich tables of a run: one per dtype, cells as rows, variants side by side (GB/s and % of the run's copy)."""

from __future__ import annotations

import math

import pandas as pd
from rich.table import Table
from rich.text import Text


def _gbps(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _pct(value: float) -> str:
    return f"{value:.0f}%" if value >= 1 else f"{value:.2g}%"


def run_title(meta: dict, dtype: str) -> str:
    device = meta.get("device", {}).get("name", "unknown device")
    copy = meta.get("copy_gbps", {}).get(dtype)
    copy_text = f"copy {copy:,.0f} GB/s" if copy else "no copy baseline"
    title = f"{meta.get('run_id', '?')} · {device} · {dtype} · {copy_text}"
    if meta.get("interpreted"):
        title += " · INTERPRETED on CPU (wall clock; not comparable with GPU runs)"
    return title


def sweep_tables(rows: pd.DataFrame, meta: dict) -> list[Table]:
    """One table per dtype; the best GB/s of each cell is marked ★; FAIL and skipped cells name their reason."""
    tables = []
    for dtype in dict.fromkeys(rows["dtype"]):
        part = rows[rows["dtype"] == dtype]
        names = list(dict.fromkeys(part["variant"]))
        # A variant skipped in every cell (a missing peer) gets a caption line, not a column of "skip".
        never_ran = [n for n in names if (part.loc[part["variant"] == n, "status"] == "skipped").all()]
        names = [n for n in names if n not in never_ran]
        table = Table(title=run_title(meta, dtype), title_justify="left", caption_justify="left")
        table.add_column("M×N", justify="right", no_wrap=True)
        for name in names:
            table.add_column(name, justify="right", no_wrap=True)
        reasons: dict[str, int] = {}
        for (M, N), cell in part.groupby(["M", "N"], sort=False):
            ok = cell[cell["status"] == "ok"]
            best = ok["gbps"].max() if len(ok) else math.nan
            by_name = {r.variant: r for r in cell.itertuples(index=False)}
            texts = []
            for name in names:
                r = by_name.get(name)
                if r is None:
                    texts.append(Text(""))
                elif r.status == "ok":
                    star = " ★" if r.gbps == best else ""
                    style = "bold green" if star else ""
                    texts.append(Text(f"{_gbps(r.gbps)} {_pct(r.pct_of_copy)}{star}", style=style))
                else:
                    mark = reasons.setdefault(str(r.reason), len(reasons) + 1)
                    style = "bold red" if r.status == "FAIL" else "dim"
                    texts.append(Text(f"{'FAIL' if r.status == 'FAIL' else 'skip'} [{mark}]", style=style))
            table.add_row(f"{int(M)}×{int(N)}", *texts)
        caption = ["GB/s = 2·M·N·elem / median time, then % of the run's copy; ★ best of the cell"]
        caption += [f"[{n}] {reason}" for reason, n in reasons.items()]
        for name in never_ran:
            caption.append(f"not measured: {name}: {part.loc[part['variant'] == name, 'reason'].iloc[0]}")
        table.caption = "\n".join(caption)
        tables.append(table)
    return tables


def copy_table(baseline: dict) -> Table:
    device = baseline["device"]
    reused = " (stored, reused)" if baseline.get("reused") else ""
    table = Table(title=f"device copy · {device['name']} · {baseline.get('measured_at', '')}{reused}",
                  title_justify="left")
    for column in ("dtype", "size", "median ms", "p20–p80 ms", "GB/s (read + write)", "reference"):
        table.add_column(column, justify="right")
    for copy in baseline["copies"]:
        is_reference = baseline["reference_gbps"].get(copy["dtype"]) == copy["gbps"]
        table.add_row(
            copy["dtype"], f"{copy['bytes'] / 2 / 2**20:,.0f} MB", f"{copy['ms']:.4f}",
            f"{copy['ms_p20']:.4f}–{copy['ms_p80']:.4f}", f"{copy['gbps']:,.0f}", "◀ sweeps compare to this" if is_reference else "",
        )
    return table
