"""Runs measured on several devices (sweep --gpus, or under torchrun): the median over devices of each cell, the
spread between devices, and the device that measures unlike the others.

A sharded run holds one row per cell and variant, each naming the device that measured it: it reads like a run of
one device. A replicated run holds a row per cell, variant and device; `show`, `plot`, `compare` and `check` take
the median over devices of each cell as its one row, and `show` adds the spread and a table of the devices.
"""

from __future__ import annotations

import pandas as pd

from .results import KEY

# Two H200s measured alike to 1.5 % a cell; a device further than this from the others, at the median, is not alike.
OUTLIER_PCT = 2.0
MEDIAN_COLUMNS = ["ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "model_gbps", "expected_ms", "copy_ms", "copy_p20",
                  "copy_p80", "pct_of_device_copy", "call_ms", "call_p20", "call_p80", "host_us", "pct_of_roofline",
                  "samples", "noise_pct", "copy_host_us", "roofline_copy_ms"]


def devices_of(meta: dict) -> list[dict]:
    """The run's devices, one entry a rank (label, device, copy_gbps, status); empty for a one-device run."""
    return meta.get("devices", [])


def median_over_devices(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per cell and variant. Where several devices measured one: the median over the devices that timed it
    of each timing column, `spread_pct` (how far the slowest device's GB/s is under the fastest's, in %) and
    `device` "median of N". A FAIL on any device makes the cell FAIL, its reason naming the device. Rows of a cell
    measured once are kept as they are (spread_pct empty)."""
    if not rows.duplicated(KEY).any():
        return rows.assign(spread_pct=float("nan"))
    merged = [_merged(group) for _, group in rows.groupby(KEY, sort=False)]
    return pd.DataFrame(merged).reindex(columns=[*rows.columns, "spread_pct"])


def _merged(group: pd.DataFrame) -> dict:
    if len(group) == 1:
        return group.iloc[0].to_dict()
    failed = group[group["status"] == "FAIL"]
    if len(failed):
        row = failed.iloc[0].to_dict()
        if not str(row["reason"]).startswith(str(row["device"])):
            row["reason"] = f"{row['device']}: {row['reason']}"
        return row
    ok = group[group["status"] == "ok"]
    if ok.empty:
        return group.iloc[0].to_dict()
    row = ok.iloc[0].to_dict()
    row.update({column: ok[column].median() for column in MEDIAN_COLUMNS})
    row.update(max_err=ok["max_err"].max(), device=f"median of {len(ok)}",
               spread_pct=100 * (1 - ok["gbps"].min() / ok["gbps"].max()))
    if "throttled" in ok:  # throttled on any device: the median is not a clean measurement either
        row["throttled"] = ok["throttled"].max()
    return row


def gbps_by_device(rows: pd.DataFrame) -> pd.DataFrame:
    """GB/s of each cell and variant (rows) on each device (columns), for the cells every device timed."""
    ok = rows[rows["status"] == "ok"]
    return ok.pivot_table(index=KEY, columns="device", values="gbps").dropna()


def deviation_from_others(table: pd.DataFrame) -> pd.Series:
    """For each device, the median over cells of its GB/s against the median of the other devices in the same
    cell, in % (negative: slower than the others)."""
    if table.shape[1] < 2 or table.empty:
        return pd.Series(dtype=float)
    return pd.Series({device: 100 * (table[device] / table.drop(columns=device).median(axis=1) - 1).median()
                      for device in table.columns})


def outlier(deviation: pd.Series) -> str | None:
    """The device that measures unlike the others: the slowest when it is more than OUTLIER_PCT under them, else
    the fastest when more than OUTLIER_PCT over them; None when they are alike."""
    if deviation.empty:
        return None
    if deviation.min() < -OUTLIER_PCT:
        return deviation.idxmin()
    if deviation.max() > OUTLIER_PCT:
        return deviation.idxmax()
    return None
