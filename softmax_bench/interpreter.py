"""Triton's CPU interpreter (TRITON_INTERPRET=1, `--interpret`), made to patch triton.language once a launch and
to skip an overflow check whose result it drops.

The interpreter re-patches the whole of triton.language each time a kernel calls a @triton.jit helper
(`_patch_lang`, under Triton 3.8): `sweep --interpret` of the smoke preset took 28 s without this change and 22 s
with it, and the test suite on 2 cores 305 s and 271–276 s. Within one launch the language is already patched, by
the launch, so a helper's call that sees only language modules the launch patched skips it; the launch's own
patch, and its restore at the launch's end, are Triton's as they were. What a kernel computes is unchanged. Where
the interpreter is laid out otherwise (another Triton), nothing is changed.

Each integer +, - and * of 32 bits or fewer is also computed again in int64 and compared with the type's range
(`binary_op_sanitize_overflow_impl`, under `sanitize_overflow`), for a device_assert that does nothing unless
`debug` is set: the interpreter's options never set it. A split launch of 16 × 1000 fp32 spent 31 % of its time
there (cProfile, Triton 3.8). With debug off the check is turned off; with debug on it stays.

And fp32 → bf16 is rounded to nearest, ties to even, as the GPU's cvt.rn.bf16.f32 and torch round it. The
interpreter truncates it (its `cast_impl`, Triton 3.6 and 3.8): about half of a kernel's bf16 outputs came out an
ulp low on CPU, about twice the error of torch's own bf16 softmax, and its gradients as much further from float64.

Under Triton 3.6 with NumPy ≥ 2.4, a scalar tensor used as an index (a loop's `range(start, end, BLOCK)`) is read
with int() of its one-element array, which that NumPy refuses: 565 of the CPU suite's tests failed with "only
0-dimensional arrays can be converted to Python scalars". Triton 3.8 squeezes the array first; 3.6 is made to.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

# How many times the language was patched for real (a launch, or a helper that sees another language module).
patches = 0


def patch_language_once_a_launch() -> bool:
    """Install the change (once a process); whether it is in place."""
    import triton.language as tl
    from triton.runtime import interpreter

    patch_lang = getattr(interpreter, "_patch_lang", None)
    scope_type = getattr(interpreter, "_LangPatchScope", None)
    grid_executor = getattr(interpreter, "GridExecutor", None)
    if patch_lang is None or scope_type is None or grid_executor is None:
        return False
    if getattr(patch_lang, "once_a_launch", False):
        return True
    launches: list[set[int]] = []  # per launch under way, the language modules it has patched

    def languages(fn) -> set[int]:
        return {id(v) for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)}

    def patch_once(fn):
        global patches
        seen = languages(fn)
        if launches and launches[-1] and seen <= launches[-1]:
            return scope_type()  # nothing to restore: the launch's own scope restores what it patched
        patches += 1
        scope = patch_lang(fn)
        if launches:
            launches[-1].update(seen)
        return scope

    launch = grid_executor.__call__

    def launch_patching_once(self, *args, **kwargs):
        launches.append(set())
        try:
            return launch(self, *args, **kwargs)
        finally:
            launches.pop()

    patch_once.once_a_launch = True
    interpreter._patch_lang = patch_once
    grid_executor.__call__ = launch_patching_once
    return True


def skip_the_dropped_overflow_check() -> bool:
    """Turn sanitize_overflow off in the interpreter's options where debug is off (its asserts are dropped then);
    whether it is off."""
    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if not dataclasses.is_dataclass(options) or not hasattr(options, "sanitize_overflow") or \
            getattr(options, "debug", True):
        return False
    builder.options = dataclasses.replace(options, sanitize_overflow=False)
    return True


def bf16_bits_rounded_to_nearest(data: np.ndarray) -> np.ndarray:
    """fp32 values as bf16 bit patterns (uint16), rounded to nearest, ties to even; a NaN stays a NaN, quieted."""
    bits = np.asarray(data, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x40
    return np.where(np.isnan(data), quiet_nan, rounded).astype(np.uint16)


def round_bf16_to_nearest() -> bool:
    """Make the interpreter's fp32 → bf16 casts (a store into bf16, `.to(tl.bfloat16)`) round to nearest even
    (once a process); whether they do."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder_type = getattr(interpreter, "InterpreterBuilder", None)
    handle_type = getattr(interpreter, "TensorHandle", None)
    cast_impl = getattr(builder_type, "cast_impl", None)
    if cast_impl is None or handle_type is None:
        return False
    if getattr(cast_impl, "rounds_bf16_to_nearest", False):
        return True

    def cast_rounding_bf16(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            return handle_type(bf16_bits_rounded_to_nearest(src.data), dst_type.scalar)
        return cast_impl(self, src, dst_type)

    cast_rounding_bf16.rounds_bf16_to_nearest = True
    builder_type.cast_impl = cast_rounding_bf16
    return True


def index_with_one_element_scalars() -> bool:
    """Where the interpreter's scalar tensors refuse to be an index (Triton 3.6 under NumPy ≥ 2.4), read them as
    Triton 3.8 does, from their one element (once a process); whether they can be one."""
    import operator
    from types import SimpleNamespace

    from triton.runtime import interpreter

    patch_tensor = getattr(interpreter, "_patch_lang_tensor", None)
    scope_type = getattr(interpreter, "_LangPatchScope", None)
    if patch_tensor is None or scope_type is None:
        return False
    if getattr(patch_tensor, "indexes_one_element", False):
        return True

    class Probe:
        pass

    scope = scope_type()
    try:
        patch_tensor(Probe, scope)
        probe = Probe()
        probe.handle = SimpleNamespace(data=np.zeros(1, dtype=np.int32))
        operator.index(probe)
        return True  # this Triton and NumPy read it already
    except TypeError:
        pass
    finally:
        scope.restore()

    def patch_tensor_indexing_one_element(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(())))

    patch_tensor_indexing_one_element.indexes_one_element = True
    interpreter._patch_lang_tensor = patch_tensor_indexing_one_element
    return True
