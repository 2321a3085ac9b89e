"""Triton's interpreter under softmax_bench patches triton.language once a launch (softmax_bench.interpreter): a
kernel whose loop calls a @triton.jit helper many times computes what it did, and patches the language once; the
overflow check whose assert it drops is off, integer arithmetic unchanged; and fp32 → bf16 rounds to nearest even,
as torch's conversion does, to the bit. Run in a process of its own with TRITON_INTERPRET=1, so that it runs on a GPU
machine too."""

import os
import subprocess
import sys

import numpy as np
import torch

from softmax_bench.interpreter import bf16_bits_rounded_to_nearest


def fp32_rounding_cases() -> torch.Tensor:
    """fp32 values whose bf16 rounding tells: a tie under an even and an odd last bit, just above and below a tie,
    a carry into the exponent, subnormals, the largest finite (rounds to inf), ±0, ±inf, NaNs; and random bits."""
    special = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x3F7FFFFF, 0x3F7F8000, 0x00008000, 0x00018000,
               0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0, 0x80000000, 0x7F800000, 0xFF800000,
               0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7FFFFFFF]
    random = np.random.default_rng(0).integers(0, 2**32, 100_000, dtype=np.uint64)
    bits = np.concatenate([np.array(special, dtype=np.uint64), random, random & ~np.uint64(0xFFFF) | 0x8000])
    return torch.from_numpy(bits.astype(np.uint32).view(np.float32))


def test_fp32_to_bf16_bits_round_as_torchs_conversion():
    values = fp32_rounding_cases()
    ours = torch.from_numpy(bf16_bits_rounded_to_nearest(values.numpy()).view(np.int16)).view(torch.bfloat16)
    theirs = values.to(torch.bfloat16)
    nan = values.isnan()
    assert torch.equal(ours[~nan].view(torch.int16), theirs[~nan].view(torch.int16))
    assert ours[nan].isnan().all()

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


@triton.jit
def to_bf16(x_ptr, stored_ptr, cast_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    tl.store(stored_ptr + offsets, x)  # the store's own cast
    tl.store(cast_ptr + offsets, x.to(tl.bfloat16))


@triton.jit
def summed_from(x_ptr, y_ptr, start_ptr, BLOCK: tl.constexpr):
    start = tl.load(start_ptr)  # a scalar tensor as range's start: an index, read from its one element
    total = tl.zeros((BLOCK,), tl.float32)
    for block in range(start, 64, BLOCK):
        total += tl.load(x_ptr + block + tl.arange(0, BLOCK))
    tl.store(y_ptr + tl.arange(0, BLOCK), total)


x, y = torch.rand(64), torch.empty(16)
summed_from[(1,)](x, y, torch.tensor([16], dtype=torch.int32), BLOCK=16)
print(bool(torch.allclose(y, x[16:].view(3, 16).sum(0))))


from tests.test_interpreter import fp32_rounding_cases
x = fp32_rounding_cases()[:2**16]
x = x[~x.isnan()]  # a NaN stays a NaN, its bits not torch's
x = torch.cat([x, x[:2**15 - x.numel() % 2**15]])[:2**15]
stored, cast = torch.empty_like(x, dtype=torch.bfloat16), torch.empty_like(x, dtype=torch.bfloat16)
to_bf16[(1,)](x, stored, cast, N=x.numel())
print(bool(torch.equal(stored.view(torch.int16), x.to(torch.bfloat16).view(torch.int16))),
      bool(torch.equal(cast.view(torch.int16), x.to(torch.bfloat16).view(torch.int16))))
"""


def test_a_kernel_calling_a_helper_many_times_patches_the_language_once_a_launch():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert result.returncode == 0, result.stderr[-3000:]
    first, second, third, fourth, fifth = result.stdout.split("\n")[:5]
    assert first == "1 True"  # 3 programs × 8 helper calls: one patch, the launch's
    assert second == "2 True triton.language.math"  # triton.language is Triton's own again after the launch
    # the overflow check, whose assert the interpreter drops, is off; integer arithmetic is what it was
    assert third == f"False {[2**31 - 1, -2**31]}"
    assert fourth == "True"  # a loop from a loaded start (Triton 3.6 under NumPy ≥ 2.4 refused it)
    assert fifth == "True True"  # fp32 → bf16, stored or cast, to the bit of torch's rounding to nearest even
