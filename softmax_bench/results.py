"""The results store: one folder per run under results/ (or --out), holding rows.csv and meta.json.

Rows are appended one line at a time as each cell finishes, so an interrupted run keeps every finished cell.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path

import pandas as pd

from .errors import BenchError

# One row per cell and variant. The first thirteen are the contract of DESIGN.md; the rest add detail.
COLUMNS = [
    "variant", "dtype", "M", "N", "ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "model_bytes", "expected_ms",
    "max_err", "status",
    "model_gbps", "reason", "n_regs", "n_spills", "config", "op",
]
KEY = ["variant", "dtype", "M", "N"]
ROWS_FILE, META_FILE = "rows.csv", "meta.json"
DEFAULT_DIR = Path("results")


class Run:
    """A stored run: its folder, metadata and rows."""

    def __init__(self, path: Path):
        self.path = path

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def rows_path(self) -> Path:
        return self.path / ROWS_FILE

    @property
    def meta_path(self) -> Path:
        return self.path / META_FILE

    def meta(self) -> dict:
        try:
            return json.loads(self.meta_path.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise BenchError(f"cannot read {self.meta_path}: {err}") from None

    def write_meta(self, meta: dict) -> None:
        tmp = self.meta_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
        tmp.replace(self.meta_path)  # atomic: a kill never leaves half a file

    def rows(self) -> pd.DataFrame:
        """The run's rows; a line cut short by a kill is dropped."""
        if not self.rows_path.exists():
            return pd.DataFrame(columns=COLUMNS)
        try:
            frame = pd.read_csv(self.rows_path, on_bad_lines="skip")
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise BenchError(f"cannot read {self.rows_path}: {err}") from None
        missing = [c for c in KEY + ["status"] if c not in frame.columns]
        if missing:
            raise BenchError(f"{self.rows_path} is not a softmax-bench results file: no column {', '.join(missing)}")
        return frame.dropna(subset=["status"])

    def append(self, row: dict) -> None:
        """Write one row as one line, flushed: the cell is kept whatever happens next."""
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(["" if row.get(c) is None else row.get(c) for c in COLUMNS])
        new_file = not self.rows_path.exists()
        with self.rows_path.open("a") as f:
            if new_file:
                f.write(",".join(COLUMNS) + "\n")
            f.write(line.getvalue())
            f.flush()


def new_run(out_dir: Path, label: str, run_id: str | None = None) -> Run:
    """A new, empty run folder named run_id, or <date>-<time>-<label>."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if run_id is not None:
            if not re.fullmatch(r"[A-Za-z0-9._-]+", run_id):
                raise BenchError(f"run id {run_id!r}: use letters, digits, '.', '_' and '-' only")
            try:
                (out_dir / run_id).mkdir()
            except FileExistsError:
                raise BenchError(f"run {run_id} already exists in {out_dir}; pick another --run-id") from None
            return Run(out_dir / run_id)
        for n in range(1000):
            path = out_dir / (f"{stamp}-{slug}" + (f"-{n}" if n else ""))
            try:
                path.mkdir()
                return Run(path)
            except FileExistsError:
                continue
    except OSError as err:
        raise BenchError(f"cannot write to {out_dir}: {err.strerror or err}; pass --out to a writable folder") from None
    raise BenchError(f"too many runs named {stamp}-{slug} in {out_dir}")


def open_run(ref: str, out_dir: Path = DEFAULT_DIR) -> Run:
    """A stored run from its folder path or its id (a folder name under out_dir)."""
    for candidate in (Path(ref), out_dir / ref):
        if (candidate / META_FILE).is_file():
            return Run(candidate)
    known = sorted(p.name for p in out_dir.glob("*") if (p / META_FILE).is_file()) if out_dir.is_dir() else []
    hint = f"; runs in {out_dir}: {', '.join(known[-5:])}" if known else f"; no runs in {out_dir}"
    raise BenchError(f"no run {ref!r} (give a run folder or a run id){hint}")
