"""The tables `auto` picks from: for each dtype and row width measured on a GPU, the fastest Triton variant.

A table is JSON named after the GPU and the Triton it was measured under (NVIDIA H200, Triton 3.8.0 →
nvidia-h200-triton3.8.json): the same kernel compiles differently under another Triton, and a variant may not
build at all (cluster needs 3.8). `auto` looks first in the user's folder —
$SOFTMAX_BENCH_AUTO_TABLES, else $XDG_CACHE_HOME/softmax-bench/auto-tables, else ~/.cache/softmax-bench/auto-tables,
where `softmax-bench tune` writes — then among the tables shipped in softmax_bench/auto_tables/.

The rule, for rows of N elements of a dtype on a GPU:
1. the table's variant for that dtype and N, when the table measured N;
2. else the variant measured fastest at the nearest measured width (by ratio) that supports N;
   a 16-bit dtype the table did not measure takes the other 16-bit dtype's entries (the kernels move the same
   bytes: fp16 rows of 24576 went to fused by rule 3 at 66 % of a copy, where bf16's entry, cluster, runs them at
   98 %);
   in either, `fused` where the entry measured it within TIE of the fastest: a difference that reruns do not
   keep (same-commit reruns on the H200 agree within 2 %) decides nothing for a plain softmax, and fused, which
   holds the row in registers, is what the fused forms want (H200, fp32 rows of 2048: two_pass 0.45 % ahead of
   fused on a plain softmax, and the pick for every form; scaled-masked then ran at 90.5 % of its roofline and causal
   at 69 %, where fused ran the neighbouring widths at 86–104 %);
3. with no table for the GPU and this Triton (or on CPU), the declared-support rule of
   softmax_bench.dispatch.auto_choice.
Entries are per form (`table_form`; kernels.cluster.form_of is another thing, the finer forms of its measured
configurations): a plain softmax's (a scale alone and log_softmax take them too: the same bytes, the same kernels'
configurations), a causal softmax's and a masked one's (a keep-mask or a bias). A fused form
takes its own entries where `tune --op` measured them, else the plain softmax's: on the H200 the plain rows of fp32
16384 tie fused with cluster, where the causal ones ran at 87 % of a copy in fused and 101 % in cluster (reading
only the vectors they keep).
"""

from __future__ import annotations

import bisect
import json
import math
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Callable

PACKAGED = Path(__file__).parent / "auto_tables"
SAME_BYTES = {"fp16": "bf16", "bf16": "fp16"}  # rule 2's stand-in for a 16-bit dtype the table did not measure
TIE = 0.01  # fused within 1 % of an entry's fastest is taken (rules 1 and 2)


def table_form(mask: object, causal: bool, bias: object) -> str:
    """Which entries of a table a call takes: masked (a keep-mask or a bias, causal or not), causal, softmax."""
    if mask is not None or bias is not None:
        return "masked"
    return "causal" if causal else "softmax"


def user_tables_dir() -> Path:
    if "SOFTMAX_BENCH_AUTO_TABLES" in os.environ:
        return Path(os.environ["SOFTMAX_BENCH_AUTO_TABLES"])
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "softmax-bench" / "auto-tables"


def triton_version() -> str:
    """The running Triton's major.minor: what a table is keyed by."""
    import triton

    return ".".join(triton.__version__.split(".")[:2])


def table_name(device_name: str, triton: str) -> str:
    """The file a GPU's table under a Triton lives in: ('NVIDIA H200', '3.8') → 'nvidia-h200-triton3.8.json'."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-") + f"-triton{triton}.json"


@dataclass
class AutoTable:
    device: str
    # {"dtype", "M", "N", "variant", "ms": {variant: ms}, "form"} (no "form": a plain softmax's, as tables before it)
    entries: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # when, which commit, which command, timing settings
    source: str = ""  # the file it was read from

    def forms(self) -> set[str]:
        return {entry.get("form", "softmax") for entry in self.entries}

    def pick(self, N: int, dtype: str, supports: Callable[[str], bool], form: str = "softmax"
             ) -> tuple[str, str] | None:
        """(variant, why) by rules 1 and 2 of this module's docstring, from the entries of `form` where the table
        has any for the dtype (or the other 16-bit one), else the plain softmax's; None when no entry applies."""
        if form != "softmax" and (self._of(form, dtype) or self._of(form, SAME_BYTES.get(dtype))):
            picked = self._pick_among(form, N, dtype, supports)
            return None if picked is None else (picked[0], f"{form} rows {picked[1]}")
        return self._pick_among("softmax", N, dtype, supports)

    def _grouped(self) -> tuple[dict, dict]:
        """(form and dtype → their entries, form and dtype → _Widths). Grouped once, and again only when the
        entries were added to (tune appends as it measures) or replaced: a call of a new width walks one group's
        widths out from its own, not the whole table."""
        grouped = self.__dict__.get("_grouping")
        if grouped is None or grouped[0] is not self.entries or grouped[1] != len(self.entries):
            by_key: dict[tuple[str, str], list[dict]] = {}
            for e in self.entries:
                by_key.setdefault((e.get("form", "softmax"), e["dtype"]), []).append(e)
            grouped = self.__dict__["_grouping"] = (self.entries, len(self.entries), by_key,
                                                    {key: _Widths.of(group) for key, group in by_key.items()})
        return grouped[2], grouped[3]

    def _of(self, form: str, dtype: str | None) -> list[dict]:
        """The entries of a form and dtype."""
        return self._grouped()[0].get((form, dtype), [])

    def _pick_among(self, form: str, N: int, dtype: str, supports: Callable[[str], bool]
                    ) -> tuple[str, str] | None:
        table_dtype = dtype
        if not self._of(form, dtype) and dtype in SAME_BYTES:
            table_dtype = SAME_BYTES[dtype]
        widths = self._grouped()[1].get((form, table_dtype))
        nearest = None if widths is None else widths.nearest(max(N, 1), supports)  # N = 0: an empty row
        if nearest is None:
            return None
        where = f"{self.device}, {os.path.basename(self.source)}"
        if table_dtype != dtype:
            where += f"; {dtype} was not measured, {table_dtype} moves the same bytes"
        at = f"rows of N = {N}" if nearest["N"] == N else f"at N = {nearest['N']}, the nearest width measured"
        fastest, ms = nearest["variant"], nearest.get("ms", {})
        if fastest != "fused" and supports("fused") and ms.get("fused", math.inf) <= ms.get(fastest, 0) * (1 + TIE):
            return "fused", (f"measured within {ms['fused'] / ms[fastest] - 1:.1%} of {fastest} for {table_dtype} "
                             f"{at} on this GPU ({where}): a tie, and fused holds the row in registers")
        return fastest, f"measured fastest for {table_dtype} {at} on this GPU ({where})"

    def merged_into(self, older: AutoTable | None) -> AutoTable:
        """This table with the entries of the forms it did not measure kept from `older` (a table of the same
        GPU that `tune --op` adds a form to), and their tune commands in meta["forms"]."""
        if older is None or older.device != self.device:
            return self
        measured = self.forms()
        kept = [e for e in older.entries if e.get("form", "softmax") not in measured]
        forms = {**older.meta.get("forms", {form: older.meta.get("command") for form in older.forms()}),
                 **{form: self.meta.get("command") for form in measured}}
        return AutoTable(self.device, kept + self.entries, {**self.meta, "forms": forms}, self.source)

    def to_json(self) -> str:
        return json.dumps({"device": self.device, **self.meta, "entries": self.entries}, indent=1) + "\n"


@dataclass(frozen=True)
class _Widths:
    """One form and dtype's entries by width: the widths measured, ascending; width → its entries in the table's
    order; the variants they name."""
    widths: list[int]
    at: dict[int, list[dict]]
    variants: tuple[str, ...]

    @classmethod
    def of(cls, entries: list[dict]) -> _Widths:
        at: dict[int, list[dict]] = {}
        for e in entries:
            at.setdefault(e["N"], []).append(e)
        return cls(sorted(at), at, tuple(dict.fromkeys(e["variant"] for e in entries)))

    def nearest(self, width: int, supports: Callable[[str], bool]) -> dict | None:
        """Rule 2's entry: the nearest to `width` by ratio (the narrower of two as near; the first in the table of
        one width) whose variant runs the row, found by walking out from `width` (each variant asked once)."""
        runs = {name: supports(name) for name in self.variants}
        widths = self.widths
        below = bisect.bisect_left(widths, width) - 1
        above = below + 1
        while below >= 0 or above < len(widths):
            if above == len(widths) or (below >= 0 and abs(math.log(widths[below] / width))
                                        <= abs(math.log(widths[above] / width))):
                measured, below = widths[below], below - 1
            else:
                measured, above = widths[above], above + 1
            for e in self.at[measured]:
                if runs[e["variant"]]:
                    return e
        return None


def read_table(path: Path) -> AutoTable:
    data = json.loads(path.read_text())
    entries = data.pop("entries")
    return AutoTable(data.pop("device"), entries, data, str(path))


@cache
def table_for(device_name: str, triton: str) -> AutoTable | None:
    """The user's table for this GPU and Triton (major.minor), else the shipped one, else None."""
    for folder in (user_tables_dir(), PACKAGED):
        path = folder / table_name(device_name, triton)
        if path.is_file():
            return read_table(path)
    return None
