"""The results store: one folder per run under results/ (or --out), holding rows.csv and meta.json.

Rows are appended one line at a time as each cell finishes, so an interrupted run keeps every finished cell.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pandas as pd

from .clocks import COLUMNS as CLOCK_COLUMNS
from .errors import BenchError

# One row per cell and variant (and device, in a replicated run). The first thirteen are the contract of DESIGN.md;
# the rest add detail. `device` names the device that measured the row: cuda:<index>, or cpu under the interpreter.
COLUMNS = [
    "variant", "dtype", "M", "N", "ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "model_bytes", "expected_ms",
    "max_err", "status",
    "model_gbps", "reason", "n_regs", "n_spills", "config", "op",
    "copy_ms", "copy_p20", "copy_p80", "pct_of_device_copy", "call_ms", "call_p20", "call_p80", "host_us", "device",
    "pass", "pct_of_roofline", "samples", "noise_pct", *CLOCK_COLUMNS, "copy_host_us", "mask_shape", "roofline_copy_ms",
]
KEY = ["variant", "pass", "dtype", "M", "N"]
PASSES = ("forward", "backward")
REQUIRED = COLUMNS[:13]  # older runs lack some of the later columns: they read as empty
NUMERIC = ["M", "N", "ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "model_bytes", "expected_ms", "max_err",
           "model_gbps", "n_regs", "n_spills", "copy_ms", "copy_p20", "copy_p80", "pct_of_device_copy", "call_ms",
           "call_p20", "call_p80", "host_us", "pct_of_roofline", "samples", "noise_pct", *CLOCK_COLUMNS,
           "copy_host_us", "roofline_copy_ms"]
STATUSES = ("ok", "FAIL", "skipped")
TIMED = ["ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy"]  # what an ok row must hold
ROWS_FILE, META_FILE = "rows.csv", "meta.json"
DEFAULT_DIR = Path("results")


@dataclass(frozen=True)
class CellFilter:
    """The rows `show`, `compare` and `plot` keep: of these variants, dtypes, shapes (M, N) and ops (each: all when
    empty)."""

    variants: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    shapes: tuple[tuple[int, int], ...] = ()
    ops: tuple[str, ...] = ()

    def options(self) -> str:
        """The filter as the options that asked for it."""
        given = [*(f"--variant {v}" for v in self.variants), *(f"--dtype {d}" for d in self.dtypes),
                 *(f"--shape {M}x{N}" for M, N in self.shapes), *(f"--op {o}" for o in self.ops)]
        return " ".join(given)

    def apply(self, rows: pd.DataFrame, what: str) -> pd.DataFrame:
        """The rows kept; a filter that keeps none of `what`'s rows is refused, with what the rows hold."""
        if rows.empty or not any((self.variants, self.dtypes, self.shapes, self.ops)):
            return rows
        keep = pd.Series(True, index=rows.index)
        for column, wanted in (("variant", self.variants), ("dtype", self.dtypes), ("op", self.ops)):
            if wanted:
                keep &= rows[column].astype(str).isin(wanted)
        if self.shapes:
            keep &= pd.Series([(int(m), int(n)) in self.shapes for m, n in zip(rows["M"], rows["N"])], index=rows.index)
        if not keep.any():
            held = "; ".join(f"{c}s {', '.join(sorted(set(rows[c].dropna().astype(str))))}"
                             for c in ("variant", "dtype", "op"))
            raise BenchError(f"{what} has no cell that {self.options()} keeps: it holds {held}")
        return rows[keep]


WIDE_BAND = 2.0  # % of the median: the stability the instrument promises between two runs of one commit


def wide_band(r) -> bool:
    """The row's p20–p80 band, or that of the copy its % of copy is divided by (where the run keeps it), is wider
    than WIDE_BAND % of its median: tables mark it ~, not stable to 2 %. On the H200 a copy of 64 MB (~18 µs) has
    a band of 2.3 %, and two runs' % of copy of such a cell differ by up to 4 % where each kernel's band is
    under 2 % (evidence/runs/default-h200-a2, -b2)."""
    copy_p20, copy_p80 = getattr(r, "copy_p20", math.nan), getattr(r, "copy_p80", math.nan)
    copy_band = 100 * (copy_p80 - copy_p20) / getattr(r, "copy_ms", math.nan)
    copy_band = 0.0 if math.isnan(copy_band) else copy_band  # runs from before the copy's band was kept
    return max(100 * (r.ms_p80 - r.ms_p20) / r.ms, copy_band) > WIDE_BAND


def pct_band(row) -> tuple[float, float]:
    """The p20–p80 interval in % of copy, from the slow end (p80 time) to the fast end (p20 time) of the kernel
    and, where the run keeps them, of the copy it is divided by: both measurements' noise is in the ratio (what
    `check` gates on, and the plots draw)."""
    copy_p20, copy_p80 = getattr(row, "copy_p20", math.nan), getattr(row, "copy_p80", math.nan)
    if math.isnan(copy_p20) or math.isnan(copy_p80):
        copy_p20 = copy_p80 = getattr(row, "copy_ms", math.nan)
    if math.isnan(copy_p20):  # runs from before the copy of each cell's bytes: their own copy, one number
        return row.pct_of_copy * row.ms / row.ms_p80, row.pct_of_copy * row.ms / row.ms_p20
    return 100 * copy_p20 / row.ms_p80, 100 * copy_p80 / row.ms_p20


def cell_label(variant: str, pass_: str, dtype: str, M, N) -> str:
    """'fused bf16 4096×4096', and 'fused backward bf16 …' for a backward cell."""
    return f"{variant}{' backward' if pass_ == 'backward' else ''} {dtype} {int(M)}×{int(N)}"


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
            meta = json.loads(self.meta_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise BenchError(f"cannot read {self.meta_path}: {err}") from None
        if not isinstance(meta, dict):
            raise BenchError(f"{self.meta_path} is not a run's metadata (a JSON object)")
        return meta

    def write_meta(self, meta: dict) -> None:
        tmp = self.meta_path.with_suffix(".json.tmp")
        with self._writing():
            tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
            tmp.replace(self.meta_path)  # atomic: a kill never leaves half a file

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write into the run's folder; one that fails is said in one line, with what to do."""
        try:
            yield
        except OSError as err:
            raise BenchError(f"cannot write into run {self.id} ({self.path}): {err.strerror or err}; a run is "
                             "finished where it can be written: copy its folder somewhere writable and --resume the "
                             "copy") from None

    def _text(self) -> str:
        try:
            return self.rows_path.read_text() if self.rows_path.exists() else ""
        except (OSError, UnicodeDecodeError) as err:
            raise BenchError(f"cannot read {self.rows_path}: {err}") from None

    def rows(self) -> pd.DataFrame:
        """The run's rows, checked: a missing column, a value that is not a number, an unknown status, an ok row
        without its timing and a line cut short each stop here with the file and line named."""
        text = self._text()
        if not text:
            return pd.DataFrame(columns=COLUMNS)
        if not text.endswith("\n"):
            raise BenchError(f"{self.rows_path}: line {text.count(chr(10)) + 1} is cut short (a sweep killed while "
                             f"writing it); `softmax-bench sweep --resume {self.id}` drops it and measures that cell again")
        try:
            frame = pd.read_csv(io.StringIO(text), dtype={"reason": str, "config": str, "device": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise BenchError(f"cannot read {self.rows_path}: {str(err).strip()}") from None
        missing = [c for c in REQUIRED if c not in frame.columns]
        if missing:
            raise BenchError(f"{self.rows_path} has no column {', '.join(missing)}: a softmax-bench rows.csv has the "
                             f"columns {', '.join(REQUIRED)}, …")
        for column in [c for c in NUMERIC if c in frame.columns]:
            numbers = pd.to_numeric(frame[column], errors="coerce")
            self._refuse(frame, numbers.isna() & frame[column].notna(), column, "expected a number")
            frame[column] = numbers
        self._refuse(frame, ~frame["status"].isin(STATUSES), "status", f"expected one of {', '.join(STATUSES)}")
        for column in TIMED:
            self._refuse(frame, (frame["status"] == "ok") & frame[column].isna(), column, "an ok row needs a value")
        frame = frame.reindex(columns=list(frame.columns) + [c for c in COLUMNS if c not in frame.columns])
        frame["pass"] = frame["pass"].astype(object).fillna("forward")  # runs from before the backward: forward
        self._refuse(frame, ~frame["pass"].isin(PASSES), "pass", f"expected one of {', '.join(PASSES)}")
        return frame

    def nonempty_rows(self) -> pd.DataFrame:
        rows = self.rows()
        if rows.empty:
            raise BenchError(f"run {self.id} has no rows yet; finish it with `softmax-bench sweep --resume {self.id}`")
        return rows

    def _refuse(self, frame: pd.DataFrame, bad: pd.Series, column: str, accepted: str) -> None:
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise BenchError(f"{self.rows_path} line {i + 2}: {column} = {frame[column].iloc[i]!r}: {accepted}")

    def _header(self) -> list[str]:
        with self.rows_path.open() as f:
            return next(csv.reader([f.readline()]))

    def drop_cut_line(self) -> str | None:
        """Remove a last line cut short by a kill (so that the next row starts a line of its own); returns it."""
        text = self._text()
        if not text or text.endswith("\n"):
            return None
        kept, _, cut = text.rpartition("\n")
        with self._writing():
            self.rows_path.write_text(kept + "\n" if kept else "")
        return cut

    def append(self, row: dict) -> None:
        """Write one row as one line, flushed: the cell is kept whatever happens next. A run started before a column
        existed keeps the columns of its header."""
        new_file = not self.rows_path.exists() or self.rows_path.stat().st_size == 0
        columns = COLUMNS if new_file else self._header()
        line = io.StringIO()
        csv.writer(line, lineterminator="\n").writerow(["" if row.get(c) is None else row.get(c) for c in columns])
        with self._writing(), self.rows_path.open("a") as f:
            if new_file:
                f.write(",".join(COLUMNS) + "\n")
            f.write(line.getvalue())
            f.flush()


def not_a_file(out_dir: Path) -> None:
    """--out names a folder (made when missing): refuse a file, and say so."""
    for path in (out_dir, *out_dir.parents):
        if path.exists() and not path.is_dir():
            raise BenchError(f"--out {out_dir}: {path} is a file, not a folder; pass --out a folder (it is made "
                             "when missing)")


def new_run(out_dir: Path, label: str, run_id: str | None = None) -> Run:
    """A new, empty run folder named run_id, or <date>-<time>-<label>."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    not_a_file(out_dir)
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
        if (candidate / ROWS_FILE).is_file():
            raise BenchError(f"{candidate} has {ROWS_FILE} but no {META_FILE}: not a whole run folder (a run folder "
                             f"holds both, written by softmax-bench sweep)")
    known = [run.id for run in stored_runs(out_dir)]
    hint = f"; the newest runs in {out_dir}: {', '.join(known[:5])}" if known else f"; no runs in {out_dir}"
    raise BenchError(f"no run {ref!r} (give a run folder or a run id; `softmax-bench runs` lists them){hint}")


def stored_runs(out_dir: Path, *more_dirs: Path) -> list[Run]:
    """The runs under out_dir (and more_dirs), newest first (by when each started, as its metadata says; a run
    whose metadata cannot be read, by its folder's time)."""
    runs = [Run(p) for folder in (out_dir, *more_dirs) if folder.is_dir() for p in folder.iterdir()
            if (p / META_FILE).is_file()]

    def started(run: Run) -> str:
        try:
            return str(run.meta().get("started_at") or "")
        except BenchError:
            return ""

    return sorted(runs, key=lambda run: (started(run), run.path.stat().st_mtime), reverse=True)


def run_summary(run: Run) -> dict:
    """What `softmax-bench runs` shows of a run: when, where, what it measured and how it ended."""
    try:
        meta, rows = run.meta(), run.rows()
    except BenchError as err:
        return {"run": run.id, "status": f"unreadable: {err}"}
    device = meta.get("device") or {}
    ok = rows[rows["status"] == "ok"]
    return {"run": run.id, "started": str(meta.get("started_at") or "")[:16].replace("T", " "),
            "device": device.get("name", "?") + (" (interpreted)" if meta.get("interpreted") else ""),
            "triton": device.get("triton", "?"), "op": meta.get("op", "softmax"),
            "pass": "+".join(meta.get("passes") or ["forward"]),
            "cells": f"{len(ok.drop_duplicates(['dtype', 'M', 'N']))} ({len(ok)} rows ok)",
            "commit": str(meta.get("git_commit") or "?")[:10], "status": str(meta.get("status", "?"))}
