"""Correct rounding: every Triton variant's 16-bit output is its fp32 result rounded once, to nearest.

A tolerance cannot see this: y rounded twice is within two ulps of the truth, which every tolerance admits, and yet
a quarter of its elements are an ulp off and its rows no longer sum to 1 as closely as torch's do. So these tests
count the elements equal to the float64 result rounded once to the output dtype, and compare the worst row sum with
torch's own.

On CPU the interpreter's widths are counted in fp16 and bf16 (the interpreter truncates fp32 → bf16 on its own;
softmax_bench.interpreter makes it round to nearest, as a GPU does); the GPU runs count both at every width of the
default grid and the wide-rows config.
"""

import pytest
import torch

import softmax_bench
from softmax_bench.config import load_config, preset_path, shapes_from
from softmax_bench.kernels import interpreted

from .conftest import DEVICE, REPO, runnable_variants, triton_variants_here
from .test_kernels import fresh_randn

SHARE_EQUAL = 0.999  # of the elements, equal to the float64 result rounded once
SUM_SLACK = 1.25  # the worst row sum's error, against torch's on the same rows
ROWS = 199
# On CPU: enough elements that a row whose log-sum lands near a rounding boundary (its few ulp-off elements come
# together) cannot by itself move the share by a tenth of a percent: 8 rows of 1000 did, once in about 30 seeds
CPU_ROWS = 64
TRITON_VARIANTS = triton_variants_here()


def widths_of_the_grids() -> list[int]:
    """Every N of the default preset and of configs/wide-rows.toml."""
    default = preset_path("default")
    wide = REPO / "configs" / "wide-rows.toml"
    return sorted({n for path in (default, wide) for _, n in shapes_from(load_config(path), str(path))})


def rounded_once(x: torch.Tensor, log: bool) -> torch.Tensor:
    """The float64 softmax (or log_softmax) of x, rounded once to x's dtype."""
    x64 = x.double()
    return (torch.log_softmax(x64, dim=-1) if log else torch.softmax(x64, dim=-1)).to(x.dtype)


def share_equal(y: torch.Tensor, x: torch.Tensor, log: bool = False) -> float:
    return (y == rounded_once(x, log)).double().mean().item()


def worst_sum_error(y: torch.Tensor) -> float:
    return (y.double().sum(dim=-1) - 1).abs().max().item()


def assert_rounded_once(x: torch.Tensor, variant: str, log: bool = False, seed: int = 0) -> None:
    run = softmax_bench.log_softmax if log else softmax_bench.softmax
    y = run(x, variant=variant)
    where = f"{variant}, {x.dtype} N = {x.shape[-1]} (seed {seed})"
    share = share_equal(y, x, log)
    assert share >= SHARE_EQUAL, f"{where}: {share:.3%} of the elements equal the result rounded once"
    if not log:
        ours, torchs = worst_sum_error(y), worst_sum_error(torch.softmax(x, dim=-1))
        assert ours <= SUM_SLACK * torchs + 2**-24, f"{where}: worst row sum off by {ours:.3g}, torch's {torchs:.3g}"


def test_the_counter_sees_a_second_rounding():
    """The check fails a result rounded twice (exponentials in fp16, then scaled), which a tolerance passes."""
    x, _ = fresh_randn(ROWS, 4096, dtype=torch.float16, scale=0.1)
    x64 = x.double()
    e = torch.exp(x64 - x64.amax(dim=-1, keepdim=True))
    twice = (e.half().double() / e.sum(dim=-1, keepdim=True)).half()
    assert share_equal(twice, x) < 0.9
    assert share_equal(rounded_once(x, False), x) == 1.0
    torch.testing.assert_close(twice.double(), torch.softmax(x64, dim=-1), atol=1e-5, rtol=2e-3)


@pytest.mark.skipif(not interpreted(), reason="the interpreter's widths; the GPU counts every width below")
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("N", [1000, 4097, 8193])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("variant", runnable_variants(triton_only=True))
def test_rounded_once_in_the_interpreter(variant, dtype, N, log):
    """fp16 and bf16 across two_pass's and online's chunk boundaries."""
    if not softmax_bench.variants()[variant].supports(N, dtype):
        pytest.skip(f"{variant} does not support N={N}")
    if variant == "split" and N > 1000:  # its last step is an element's own, whatever the width: 35 s of the 60
        pytest.skip("split rounds each element alike at every width: N = 1000 shows it")
    x, seed = fresh_randn(CPU_ROWS, N, dtype=dtype, scale=0.1)
    assert_rounded_once(x, variant, log, seed)


@pytest.mark.skipif(DEVICE == "cpu", reason="the grids' widths: the interpreter's are counted above")
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("variant", TRITON_VARIANTS)
def test_rounded_once_at_every_width_of_the_grids(variant, dtype, log):
    """199 rows of 0.1·randn at every N of the default grid and the wide-rows config (the issue's measurement)."""
    widths = [n for n in widths_of_the_grids() if softmax_bench.variants()[variant].supports(n, dtype)]
    assert widths, f"{variant} supports none of the grids' widths"
    for N in widths:
        x, seed = fresh_randn(ROWS, N, dtype=dtype, scale=0.1)
        assert_rounded_once(x, variant, log, seed)
