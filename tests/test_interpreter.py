"""Triton's interpreter under softmax_bench patches triton.language once a launch (softmax_bench.interpreter): a
kernel whose loop calls a @triton.jit helper many times computes what it did, and patches the language once; and the
overflow check whose assert it drops is off, integer arithmetic unchanged. Run in
a process of its own with TRITON_INTERPRET=1, so that it runs on a GPU machine too."""

import os
import subprocess
import sys

CODE = """
import torch
import triton
import triton.language as tl

import softmax_bench  # with TRITON_INTERPRET=1: the change is in place from here
from softmax_bench import interpreter


@triton.jit
def twice(x):
    return x * 2.0


@triton.jit
def doubled(x_ptr, y_ptr, STEPS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    for _ in tl.static_range(STEPS):
        x = twice(x)
    tl.store(y_ptr + tl.arange(0, 16), x)


x, y = torch.rand(16), torch.empty(16)
before = interpreter.patches
doubled[(3,)](x, y, STEPS=8)
print(interpreter.patches - before, bool(torch.equal(y, x * 256)))
doubled[(1,)](x, y, STEPS=1)  # a second launch patches again, and is restored after as the first was
print(interpreter.patches - before, bool(torch.equal(y, x * 2)), tl.exp.__module__)


@triton.jit
def wrapped(y_ptr, big):
    tl.store(y_ptr + tl.arange(0, 2), big + tl.arange(0, 2))  # int32 past 2^31 - 1: wraps, as on a GPU


from triton.runtime.interpreter import interpreter_builder
out = torch.empty(2, dtype=torch.int32)
wrapped[(1,)](out, 2**31 - 1)
print(interpreter_builder.options.sanitize_overflow, out.tolist())
"""


def test_a_kernel_calling_a_helper_many_times_patches_the_language_once_a_launch():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-3000:]
    first, second, third = result.stdout.split("\n")[:3]
    assert first == "1 True"  # 3 programs × 8 helper calls: one patch, the launch's
    assert second == "2 True triton.language.math"  # triton.language is Triton's own again after the launch
    # the overflow check, whose assert the interpreter drops, is off; integer arithmetic is what it was
    assert third == f"False {[2**31 - 1, -2**31]}"
