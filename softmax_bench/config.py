"""What a sweep measures: shapes, dtypes, variants and timing, from presets, TOML configs and CLI options.

A config file (and a preset, which is a config file shipped in softmax_bench/presets/) may hold:

    description = "what this sweep is for"
    shapes = ["32768x4096", "8192x50257"]   # explicit M×N
    n = [1024, 4096]                         # with `m`: every (m, n) pair; with `elems`: M = elems // N
    m = [4096]
    elems = 134217728
    dtypes = ["bf16", "fp32"]
    variants = ["fused", "eager"]            # default: every variant and peer that supports the cell
    op = "causal"                            # softmax (default), scaled-masked or causal: softmax_bench.ops
    warmup_ms = 25
    rep_ms = 100
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .errors import BenchError
from .kernels import DTYPES
from .ops import get_op
from .timing import TimingSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_KEYS = {"description", "shapes", "n", "m", "elems", "dtypes", "variants", "op", "warmup_ms", "rep_ms"}
DEFAULT_DTYPES = ["bf16", "fp32"]


@dataclass
class SweepPlan:
    shapes: list[tuple[int, int]] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)  # empty: all
    op: str = "softmax"  # what is fused around it: softmax_bench.ops
    timing: TimingSettings = field(default_factory=TimingSettings)
    sources: list[str] = field(default_factory=list)

    def cells(self) -> list[tuple[str, int, int]]:
        """(dtype, M, N) in sweep order: dtype by dtype, narrow rows first."""
        return [(d, m, n) for d in self.dtypes for m, n in sorted(self.shapes, key=lambda s: (s[1], s[0]))]


def preset_names() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in resources.files("softmax_bench.presets").iterdir()
                  if p.name.endswith(".toml"))


def preset_path(name: str) -> Path:
    if name not in preset_names():
        raise BenchError(f"unknown preset {name!r}; choose from {', '.join(preset_names())}")
    return Path(str(resources.files("softmax_bench.presets") / f"{name}.toml"))


def parse_shape(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(-?\d+)\s*[x×X]\s*(-?\d+)\s*", text)
    if not match:
        raise BenchError(f"shape {text!r} is not MxN (e.g. 32768x4096)")
    m, n = int(match[1]), int(match[2])
    check_positive(m, n)
    return m, n


def check_positive(m: int, n: int) -> None:
    if m <= 0 or n <= 0:
        raise BenchError(f"M and N must be positive, got {m}x{n}")


def check_dtypes(names: list[str]) -> list[str]:
    for name in names:
        if name not in DTYPES:
            raise BenchError(f"unknown dtype {name!r}; choose from {', '.join(DTYPES)}")
    return list(dict.fromkeys(names))


def load_config(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError as err:
        raise BenchError(f"cannot read config {path}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise BenchError(f"{path}: not valid TOML: {err}") from None
    unknown = sorted(set(data) - CONFIG_KEYS)
    if unknown:
        raise BenchError(f"{path}: unknown key {unknown[0]!r}; allowed keys: {', '.join(sorted(CONFIG_KEYS))}")
    return data


def _int_list(data: dict, key: str, source: str) -> list[int]:
    values = data.get(key, [])
    if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
        raise BenchError(f"{source}: {key} must be a list of whole numbers")
    return values


def shapes_from(data: dict, source: str) -> list[tuple[int, int]]:
    shapes = []
    for text in data.get("shapes", []):
        try:
            shapes.append(parse_shape(str(text)))
        except BenchError as err:
            raise BenchError(f"{source}: {err}") from None
    ns, ms = _int_list(data, "n", source), _int_list(data, "m", source)
    if ns and "elems" in data:
        shapes += [(max(1, data["elems"] // n), n) for n in ns]
    elif ns and ms:
        shapes += [(m, n) for m in ms for n in ns]
    elif ns or ms:
        raise BenchError(f"{source}: `n` needs `m` (every pair) or `elems` (M = elems // N), and `m` needs `n`")
    for m, n in shapes:
        check_positive(m, n)
    return shapes


def build_plan(
    shapes: list[str],
    ms: list[int],
    ns: list[int],
    config: Path | None,
    preset: str | None,
    dtypes: list[str],
    variants: list[str],
    warmup_ms: int | None = None,
    rep_ms: int | None = None,
    op: str | None = None,
) -> SweepPlan:
    """The sweep the user asked for; the default preset when no shape is given."""
    plan = SweepPlan()
    sources: list[tuple[str, dict]] = []
    if preset is not None:
        sources.append((f"preset {preset}", load_config(preset_path(preset))))
    if config is not None:
        sources.append((str(config), load_config(config)))
    cli_shapes = [parse_shape(s) for s in shapes]
    if ms or ns:
        sources.append(("--m/--n", {"m": ms, "n": ns}))
    if not sources and not cli_shapes:
        sources.append(("preset default", load_config(preset_path("default"))))
    for source, data in sources:
        plan.shapes += shapes_from(data, source)
        plan.dtypes += data.get("dtypes", [])
        plan.variants += data.get("variants", [])
        plan.op = data.get("op", plan.op)
        plan.timing = TimingSettings(
            warmup_ms=data.get("warmup_ms", plan.timing.warmup_ms), rep_ms=data.get("rep_ms", plan.timing.rep_ms)
        )
        plan.sources.append(source)
    plan.shapes = list(dict.fromkeys(plan.shapes + cli_shapes))
    if cli_shapes:
        plan.sources.append("--shape")
    plan.dtypes = check_dtypes(dtypes or plan.dtypes or DEFAULT_DTYPES)
    plan.variants = list(dict.fromkeys(variants or plan.variants))
    plan.op = get_op(op or plan.op).name
    plan.timing = TimingSettings(
        warmup_ms=warmup_ms if warmup_ms is not None else plan.timing.warmup_ms,
        rep_ms=rep_ms if rep_ms is not None else plan.timing.rep_ms,
    )
    return plan
