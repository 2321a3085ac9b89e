"""What a sweep measures: shapes, dtypes, variants and timing, from presets, TOML configs and CLI options.

A config file (and a preset, which is a config file shipped in softmax_bench/presets/) may hold:

    description = "what this sweep is for"
    shapes = ["32768x4096", "8192x50257"]   # explicit M×N
    n = [1024, 4096]                         # with `m`: every (m, n) pair; with `elems`: M = elems // N
    m = [4096]
    elems = 134217728
    dtypes = ["bf16", "fp32"]
    variants = ["fused", "eager"]            # default: every variant and peer that supports the cell
    op = "causal"                            # softmax (default), scaled, scaled-masked, causal, key-padded,
                                             # biased, log-softmax, cross-entropy: softmax_bench.ops
    mask_shape = "rows/64"                   # scaled-masked's mask, biased's bias: full (default), row, rows/K or
                                             # period/K over x's rows (softmax_bench.ops.MASK_SHAPES)
    log = true                               # the log_softmax of the op (default false)
    pass = "backward"                        # forward (default), backward or both
    warmup_ms = 25
    rep_ms = 100
    max_noise = 0.5                          # %: sample each cell until its median's noise is this low
                                             # (timing.py; default 1 on a GPU, 0: off, rep_ms of samples)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .errors import BenchError
from .kernels import DTYPES, VARIANT_MODULES
from .ops import MASK_SHAPES, OPS, check_mask_shape, get_op
from .peers import PEERS
from .timing import DEFAULT_MAX_NOISE, TimingSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_DTYPES = ["bf16", "fp32"]
# What --pass and a config's `pass` take: the passes each measures.
PASS_CHOICES = {"forward": ["forward"], "backward": ["backward"], "both": ["forward", "backward"]}
# Everything a sweep can measure, by name: the variants (each module of softmax_bench.kernels is named after its
# variant), auto, and the peers.
MEASURABLE = (*VARIANT_MODULES, "auto", *PEERS)
# The interpreter runs a program at a time (fused: ~7 ms a row of 4096 on one core): a cell of at most 2^20
# elements takes seconds a call, and progress stays within a minute.
INTERPRET_MAX_ELEMS = 2**20


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _list_of(value: object, ok) -> bool:
    return isinstance(value, list) and all(ok(v) for v in value)


def _names(names) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _is_mask_shape(text: str) -> bool:
    try:
        check_mask_shape(text)
    except BenchError:
        return False
    return True


# key: (is a value acceptable?, what is accepted)
CONFIG_KEYS = {
    "description": (lambda v: isinstance(v, str), "a string"),
    "shapes": (lambda v: _list_of(v, lambda s: isinstance(s, str)), 'a list of "MxN" strings, e.g. ["32768x4096"]'),
    "m": (lambda v: _list_of(v, lambda m: _whole(m, 1)), "a list of whole numbers ≥ 1, e.g. [4096]"),
    "n": (lambda v: _list_of(v, lambda n: _whole(n, 1)), "a list of whole numbers ≥ 1, e.g. [1024, 4096]"),
    "elems": (lambda v: _whole(v, 1), "a whole number ≥ 1, e.g. 134217728"),
    "dtypes": (lambda v: bool(v) and _list_of(v, lambda d: d in DTYPES), f"a non-empty list of dtypes from "
               f'{_names(DTYPES)}, e.g. ["bf16", "fp32"] (leave the key out for the default dtypes)'),
    "variants": (lambda v: _list_of(v, lambda n: n in MEASURABLE), f"a list of names from {_names(MEASURABLE)}, "
                 'e.g. ["fused", "eager"]'),
    "op": (lambda v: isinstance(v, str) and v in OPS, f"one of {_names(OPS)}"),
    "pass": (lambda v: v in PASS_CHOICES, f"one of {_names(PASS_CHOICES)}"),
    "log": (lambda v: isinstance(v, bool), "true or false"),
    "mask_shape": (lambda v: isinstance(v, str) and _is_mask_shape(v),
                   f'one of {_names(MASK_SHAPES)} (K a whole number ≥ 1), e.g. "rows/64"'),
    "warmup_ms": (lambda v: _whole(v, 0), "a whole number of milliseconds ≥ 0, e.g. 25"),
    "rep_ms": (lambda v: _whole(v, 1), "a whole number of milliseconds ≥ 1, e.g. 100"),
    "max_noise": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
                  "a number of percent ≥ 0, e.g. 0.5 (0: off, rep_ms of samples)"),
}


@dataclass
class SweepPlan:
    shapes: list[tuple[int, int]] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)  # empty: all
    op: str = "softmax"  # what is fused around it: softmax_bench.ops
    mask_shape: str = "full"  # how the op's mask or bias is laid out over x's rows: softmax_bench.ops.MASK_SHAPES
    log: bool = False  # the log_softmax of the op
    passes: list[str] = field(default_factory=lambda: ["forward"])  # forward, backward or both
    timing: TimingSettings = field(default_factory=TimingSettings)
    sources: list[str] = field(default_factory=list)
    description: str = ""
    default_preset: str | None = None  # the preset run because no shape was asked for

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


MAX_ELEMS = 2**62  # torch's storage sizes are 64-bit byte counts: past this no dtype's tensor can be made


def parse_shape(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[x×X]\s*(\d+)\s*", text)
    if not match or int(match[1]) < 1 or int(match[2]) < 1:
        raise BenchError(f"shape {text!r} is not MxN with M, N ≥ 1 (e.g. 32768x4096)")
    M, N = int(match[1]), int(match[2])
    if M * N > MAX_ELEMS:
        raise BenchError(f"shape {text!r} has {M * N:.3g} elements, more than a tensor can hold (2^62)")
    return M, N


def check_dtypes(names: list[str]) -> list[str]:
    for name in names:
        if name not in DTYPES:
            raise BenchError(f"unknown dtype {name!r}; choose from {', '.join(DTYPES)}")
    return list(dict.fromkeys(names))


def check_interpretable(M: int, N: int, what: str) -> None:
    """Refuse a cell too large for Triton's interpreter, before anything runs."""
    if M * N > INTERPRET_MAX_ELEMS:
        raise BenchError(
            f"{what}: {M}x{N} is {M * N:,} elements, too many for --interpret (each kernel call would take minutes "
            f"on CPU); use cells of at most {INTERPRET_MAX_ELEMS:,} elements, e.g. --shape 256x4096 or --preset smoke"
        )


def load_config(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError as err:
        raise BenchError(f"cannot read config {path}: {err.strerror or err}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise BenchError(f"{path}: not valid TOML: {err}") from None
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise BenchError(f"{path}: unknown key {key!r}; allowed keys: {', '.join(sorted(CONFIG_KEYS))}")
        acceptable, accepted = CONFIG_KEYS[key]
        if not acceptable(value):
            raise BenchError(f"{path}: {key} = {json.dumps(value, ensure_ascii=False)}: expected {accepted}")
    return data


def shapes_from(data: dict, source: str) -> list[tuple[int, int]]:
    """The shapes of a checked config: `shapes`, and `n` with `m` (every pair) or with `elems`."""
    shapes = []
    for text in data.get("shapes", []):
        try:
            shapes.append(parse_shape(text))
        except BenchError as err:
            raise BenchError(f"{source}: shapes: {err}") from None
    ns, ms = data.get("n", []), data.get("m", [])
    if ns and "elems" in data:
        shapes += [(max(1, data["elems"] // n), n) for n in ns]
    elif ns and ms:
        shapes += [(m, n) for m in ms for n in ns]
    elif ns or ms:
        raise BenchError(f"{source}: `n` needs `m` (every pair) or `elems` (M = elems // N), and `m` needs `n`")
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
    interpret: bool = False,
    pass_: str | None = None,
    max_noise: float | None = None,
    mask_shape: str | None = None,
    log: bool | None = None,
) -> SweepPlan:
    """The sweep the user asked for. With no shape given, the default preset (the smoke preset under the
    interpreter); under the interpreter, no cell larger than INTERPRET_MAX_ELEMS."""
    plan = SweepPlan()
    sources: list[tuple[str, dict]] = []
    if preset is not None:
        sources.append((f"preset {preset}", load_config(preset_path(preset))))
    if config is not None:
        sources.append((str(config), load_config(config)))
    try:
        cli_shapes = [parse_shape(s) for s in shapes]
    except BenchError as err:
        raise BenchError(f"--shape: {err}") from None
    if ms or ns:
        sources.append(("--m/--n", {"m": ms, "n": ns}))
    if not sources and not cli_shapes:
        plan.default_preset = "smoke" if interpret else "default"
        sources.append((f"preset {plan.default_preset}", load_config(preset_path(plan.default_preset))))
    noise = None  # the noise target asked for, of the sources or --max-noise (0: off)
    for source, data in sources:
        plan.shapes += shapes_from(data, source)
        plan.dtypes += data.get("dtypes", [])
        plan.variants += data.get("variants", [])
        plan.op = data.get("op", plan.op)
        plan.mask_shape = data.get("mask_shape", plan.mask_shape)
        plan.log = data.get("log", plan.log)
        if "pass" in data:
            plan.passes = PASS_CHOICES[data["pass"]]
        plan.description = data.get("description", plan.description)
        plan.timing = TimingSettings(
            warmup_ms=data.get("warmup_ms", plan.timing.warmup_ms), rep_ms=data.get("rep_ms", plan.timing.rep_ms),
        )
        noise = data.get("max_noise", noise)
        plan.sources.append(source)
    plan.shapes = list(dict.fromkeys(plan.shapes + cli_shapes))
    if cli_shapes:
        plan.sources.append("--shape")
    plan.dtypes = check_dtypes(dtypes or plan.dtypes or DEFAULT_DTYPES)
    plan.variants = list(dict.fromkeys(variants or plan.variants))
    plan.op = get_op(op or plan.op).name
    plan.mask_shape = get_op(plan.op).check_mask_shape(mask_shape or plan.mask_shape)
    plan.log = log if log is not None else plan.log
    if plan.log and plan.op == "cross-entropy":
        raise BenchError("--log takes the log_softmax of a softmax op; cross-entropy is a loss (it takes one already)")
    measures = get_op(plan.op).measures
    for name in plan.variants:
        if measures is not None and name not in measures:
            raise BenchError(f"--op {plan.op} measures {', '.join(measures)}; {name!r} is not one of them")
    if pass_ is not None:
        if pass_ not in PASS_CHOICES:
            raise BenchError(f"unknown pass {pass_!r}; choose from {', '.join(PASS_CHOICES)}")
        plan.passes = PASS_CHOICES[pass_]
    if max_noise is not None and not max_noise >= 0:
        raise BenchError(f"--max-noise {max_noise:g}: no median is that quiet; give a percent > 0, e.g. 0.5, or 0 "
                         "for --rep-ms of samples")
    noise = max_noise if max_noise is not None else noise
    if noise is None:  # under the interpreter a sample is a CPU's call: rep_ms of them, as before the rule
        noise = 0 if interpret else DEFAULT_MAX_NOISE
    plan.timing = TimingSettings(
        warmup_ms=warmup_ms if warmup_ms is not None else plan.timing.warmup_ms,
        rep_ms=rep_ms if rep_ms is not None else plan.timing.rep_ms,
        max_noise=noise or None,
    )
    if not plan.shapes:
        raise BenchError(f"{' + '.join(plan.sources)}: no shapes to measure; give `shapes = [\"MxN\"]`, or `n` with "
                         "`elems` or `m` (or --shape)")
    if interpret:
        for M, N in plan.shapes:
            check_interpretable(M, N, " + ".join(plan.sources))
    return plan
