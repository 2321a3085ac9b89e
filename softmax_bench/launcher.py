"""softmax_bench's own launch of a replayed kernel (issue 29): a C function that takes the stream and the call's
tensors and launches, with every other parameter packed once, when the call was recorded.

Triton 3.8's C launch, which a replayed call otherwise calls (replay.launcher), parses 16 arguments, walks the
kernel's 31 parameters and converts each from Python at every call; on the H200 a replayed launch alone costs ~4.9
µs, where torch.softmax's whole call costs ~6.9. A Launch (launcher.c) keeps the parameters in 8-byte slots and
writes only the tensors' addresses: the work left is the driver's. On a CPU, against a driver that does nothing,
the code around fused's launch costs 1.10 µs with Triton's and 0.25 with this one
(evidence/experiments/2026-12-04-session36/launch-glue.*). A Replay runs a recorded call's whole plan from C (y
allocated, the stream asked, its Launches called): 1.22 µs where replay.Plan's Python around the same Launch took
1.47 (evidence/experiments/2026-12-05-session37/replayed-glue.*).

launcher.c is built at first use as Triton builds its own launcher: Triton's build helper, the system C compiler
and Triton's cache; it includes Triton's copy of cuda.h and links nothing (the driver's functions are found in
libcuda.so.1 by ctypes and given to it). With no C compiler, or a Triton whose kernels it cannot read, replayed
calls launch through Triton's as before, and the reason is said once.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import struct
import warnings
from pathlib import Path

SOURCE = Path(__file__).with_name("launcher.c")
DRIVER_FUNCTIONS = ("cuCtxGetCurrent", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuLaunchKernel",
                    "cuLaunchKernelEx", "cuGetErrorString")
# A parameter's value as the kernel takes it (as Triton 3.8's launch converts it), little-endian in an 8-byte slot;
# bf16 is a float32's upper half.
ENCODINGS = {"i1": "<i", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "u1": "<I", "u8": "<B", "u16": "<H",
             "u32": "<I", "u64": "<Q", "fp16": "<e", "fp32": "<f", "f32": "<f", "fp64": "<d"}
SLOTS = {kind: struct.Struct(f"{code}{8 - struct.calcsize(code)}x") for kind, code in ENCODINGS.items()}  # padded
POINTER, FLOAT, WORD = struct.Struct("<Q"), struct.Struct("<f"), struct.Struct("<I")
NULL_POINTER = bytes(8)
# launcher.c's limits: a cluster of 16 needs a non-portable attribute, shared memory past 228 KB another
MAX_PARAMS, MAX_SLOTS, MAX_CTAS, MAX_SHARED = 64, 8, 8, 228 * 1024


class Unsupported(Exception):
    """A launch launcher.c does not take: it goes through Triton's."""


@functools.cache
def encoder(kind: str):
    """value → its 8-byte slot, for a parameter of Triton type `kind` (struct.error for a value it cannot hold)."""
    if kind.startswith("*"):
        return lambda value: POINTER.pack(0 if value is None else value)
    if kind == "bf16":
        return lambda value: SLOTS["u16"].pack(WORD.unpack(FLOAT.pack(value))[0] >> 16)  # the float's upper half
    if kind in SLOTS:
        return SLOTS[kind].pack
    raise Unsupported(f"a parameter of type {kind}")


@functools.lru_cache(maxsize=256)
def ptx_parameters(ptx: str, name: str) -> tuple[int, ...]:
    """The sizes in bytes of the parameters of kernel `name` as its PTX declares them. Kept for each compiled
    kernel: reading them took 12.5 µs of a call of a new kind (make_launch's 22, thirty-eighth session, CPU)."""
    entry = re.search(rf"\.entry\s+{re.escape(name)}\s*\((.*?)\)", ptx, re.S)
    if entry is None:
        raise Unsupported(f"no .entry {name} in the PTX")
    return tuple(int(bits) // 8 for bits in re.findall(r"\.param\s+\.[busf](\d+)", entry.group(1)))


def pack(kinds: list, ptx: str, name: str, template: list, slots: tuple) -> tuple[bytes, tuple]:
    """(the parameters' slots, ((parameter, source) for each tensor)) of a launch of kernel `name`, of signature
    `kinds` (Triton's types in the kernel's order) and `ptx`, whose arguments are `template` with the tensors
    `slots` places ((position, source), replay's). The parameters are those the compiled kernel takes (constexprs
    left out) and after them the ones Triton adds (scratch pointers: none is used by a kernel this takes),
    counted from its PTX."""
    if len(kinds) != len(template):
        raise Unsupported("a signature that does not match the launch's arguments")
    parameters, added = _parameters(tuple(kinds), ptx, name)
    sources = dict(slots)
    values, tensor_slots = [], []
    for position, kind, to_slot in parameters:
        if position in sources:
            tensor_slots.append((len(values), sources[position]))
            values.append(NULL_POINTER)
        else:
            try:
                values.append(to_slot(template[position]))
            except struct.error as e:  # a value its type cannot hold (Triton's own launch would say so)
                raise Unsupported(f"{template[position]!r} as a parameter of type {kind}: {e}") from None
    return b"".join(values) + NULL_POINTER * added, tuple(tensor_slots)


@functools.lru_cache(maxsize=256)
def _parameters(kinds: tuple, ptx: str, name: str) -> tuple[tuple, int]:
    """((position, kind, its encoder) of each argument the compiled kernel takes, the count of pointers Triton adds
    after them): kept for each compiled kernel, so that a plan of a new kind encodes only its arguments' values
    (make_launch 8.0 → 3.5 µs on a CPU, thirty-ninth session: plan-build-cost.py)."""
    parameters = []
    for position, kind in enumerate(kinds):
        if not isinstance(kind, str):
            raise Unsupported(f"a parameter of type {kind}")  # a tuple
        if kind != "constexpr":
            parameters.append((position, kind, encoder(kind)))
    declared = ptx_parameters(ptx, name)
    if len(declared) < len(parameters) or any(size > 8 for size in declared) or len(declared) > MAX_PARAMS:
        raise Unsupported(f"{len(declared)} parameters in the PTX for {len(parameters)} arguments")
    return tuple(parameters), len(declared) - len(parameters)


def make_launch(compiled, grid: tuple, template: list, slots: tuple, device: int):
    """The Launch (launcher.c) of `compiled` on `grid` with the arguments `template` and the tensors put where
    `slots` says; raises Unsupported where launcher.c does not launch it as Triton would."""
    launcher = driver_bound()
    if launcher is None:
        raise Unsupported("no launcher built")
    try:
        run, metadata, function = compiled.run, compiled.metadata, compiled.function
        kinds, ptx = list(compiled.src.signature.values()), compiled.asm["ptx"]
        name, num_warps, shared = metadata.name, metadata.num_warps, metadata.shared
    except (AttributeError, KeyError, TypeError) as e:
        raise Unsupported(f"a compiled kernel whose facts are not where Triton 3.8 keeps them ({e!r})") from None
    if getattr(run, "global_scratch_size", 0) or getattr(run, "profile_scratch_size", 0) or \
            getattr(run, "gsan_enabled", False):
        raise Unsupported("a kernel that asks for scratch memory")
    num_ctas = getattr(metadata, "num_ctas", 1)
    if len(slots) > MAX_SLOTS or not 1 <= num_ctas <= MAX_CTAS or shared > MAX_SHARED:
        raise Unsupported(f"{len(slots)} tensors, a cluster of {num_ctas}, {shared} bytes of shared memory")
    values, tensor_slots = pack(kinds, ptx, name, template, slots)
    grid = tuple(grid) + (1,) * (3 - len(grid))
    # Triton 3.8 keeps these on its launcher, earlier ones in the metadata
    cooperative, pdl = (bool(getattr(run, name, getattr(metadata, name, False)))
                        for name in ("launch_cooperative_grid", "launch_pdl"))
    return launcher.Launch(function, grid, num_warps, shared, num_ctas, cooperative, pdl, device, values, tensor_slots)


@functools.cache
def built():
    """launcher.c's module, built at first use (Triton's build helper and cache); None, said once, if it cannot be."""
    try:
        import triton
        from triton.runtime.build import compile_module_from_src

        include = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "include")
        return compile_module_from_src(SOURCE.read_text(), "softmax_bench_launcher", include_dirs=[include])
    except Exception as e:  # no C compiler, no Python headers, a Triton without the helper
        _said_once(f"its launcher could not be built ({type(e).__name__}: {e})")
        return None


@functools.cache
def driver_bound(library: str = "libcuda.so.1"):
    """launcher.c's module with the CUDA driver's functions (from `library`) bound; None, said once, where either is
    missing."""
    module = built()
    if module is None:
        return None
    try:
        driver = ctypes.CDLL(library)
        module.bind_driver(*(ctypes.cast(getattr(driver, name), ctypes.c_void_p).value for name in DRIVER_FUNCTIONS))
    except (OSError, AttributeError) as e:
        _said_once(f"the CUDA driver's functions were not found ({e})")
        return None
    return module


def _said_once(reason: str) -> None:
    warnings.warn(f"softmax_bench: {reason}; replayed calls launch through Triton's launcher",
                  RuntimeWarning, stacklevel=3)
