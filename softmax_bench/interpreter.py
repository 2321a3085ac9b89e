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
"""

from __future__ import annotations

import dataclasses
import inspect

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
