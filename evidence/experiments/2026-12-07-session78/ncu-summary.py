"""A line a kernel of each ncu-*.csv (ncu --csv --page raw) under DIR: time, DRAM / L2 / L1 throughput (% of peak),
L2 hit rate, warps active, registers, and the four largest warp stall reasons (warps stalled per issue).

    python3 ncu-summary.py DIR
"""

import csv
import glob
import io
import os
import sys

WANTED = {"gpu__time_duration.sum": "us", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
          "lts__throughput.avg.pct_of_peak_sustained_elapsed": "l2%",
          "l1tex__throughput.avg.pct_of_peak_sustained_active": "l1%",
          "lts__t_sector_hit_rate.pct": "l2hit%", "sm__warps_active.avg.pct_of_peak_sustained_active": "active%",
          "launch__registers_per_thread": "regs", "dram__bytes_read.sum": "dram_rd", "dram__bytes_write.sum": "dram_wr"}
STALL = "smsp__average_warps_issue_stalled_"


def number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


for path in sorted(glob.glob(os.path.join(sys.argv[1], "ncu-*.csv"))):
    text = open(path).read()
    start = text.find('"ID"')
    if start < 0:
        print(os.path.basename(path), "no rows:", text[-300:].replace("\n", " | "))
        continue
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, units = rows[0], rows[1]
    body = [row for row in rows[2:] if len(row) == len(header)]  # not ncu's ==PROF== lines
    for row in body:
        cells = dict(zip(header, row))
        unit = dict(zip(header, units))
        parts = [os.path.basename(path)[4:-4], cells.get("Kernel Name", "?")[:24]]
        for key, label in WANTED.items():
            if key in cells:
                parts.append(f"{label}={cells[key]}{unit.get(key, '') if label.startswith('dram_') else ''}")
        stalls = sorted(((number(v) or 0.0, k[len(STALL):].replace("_per_issue_active.ratio", ""))
                         for k, v in cells.items() if k.startswith(STALL) and k.endswith("_per_issue_active.ratio")),
                        reverse=True)[:4]
        parts.append("stalls " + " ".join(f"{name}={value:.2f}" for value, name in stalls))
        print(" ".join(parts))
