"""log_softmax: every variant that runs here against a float64 reference, with softmax's semantics (-inf for what
softmax gives zeros, NaN kept in its row)."""

import inspect

import pytest
import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.auto_table import AutoTable
from softmax_bench.kernels import TOLERANCES, cluster, interpreted, masking

from .compile_sm90 import printed_without_interpreter
from .conftest import DEVICE, runnable_variants
from .test_fusion import causal_keep
from .test_kernels import fresh_randn

VARIANTS = runnable_variants()
ZERO_MASKED = runnable_variants(zero_masked_only=True)  # their log_softmax gives -inf on a fully masked row
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def reference(x, dim=-1, scale=1.0, keep=None):
    """float64 log_softmax on CPU; a fully masked (or all -inf) slice is -inf."""
    z = x.double().cpu() * scale
    if keep is not None:
        z = z.masked_fill(~keep.cpu().expand(z.shape), float("-inf"))
    ref = torch.log_softmax(z, dim=dim)
    return ref.masked_fill((z == float("-inf")).all(dim=dim, keepdim=True), float("-inf"))


def assert_matches(y, x, dim=-1, scale=1.0, keep=None, atol=None):
    assert y.dtype == x.dtype and y.shape == x.shape
    atol, rtol = atol or TOLERANCES[x.dtype][0], TOLERANCES[x.dtype][1]
    # -inf where the reference is -inf (inf − inf is NaN to assert_close's arithmetic, so compare those apart)
    ref, y64 = reference(x, dim, scale, keep), y.double().cpu()
    minus_inf = ref == float("-inf")
    assert bool((y64[minus_inf] == float("-inf")).all())
    torch.testing.assert_close(y64[~minus_inf], ref[~minus_inf], atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_rows_with_minus_inf_and_huge_values(variant, dtype):
    x, _ = fresh_randn(4, 300, dtype=dtype)
    x[0, 17] = 1000.0
    x[1, ::2] = float("-inf")
    x[2, :-1] = float("-inf")  # one finite value: log 1 = 0 there
    y = softmax_bench.log_softmax(x, variant=variant)
    # torch.log_softmax rounds x − max and the log-sum to a 16-bit input's dtype: off by up to a rounding of them
    atol = 1e-2 if variant == "eager" and dtype != torch.float32 else None
    assert_matches(y, x, atol=atol)
    assert float(y[2, -1]) == 0.0
    assert_matches(softmax_bench.log_softmax(x[:, :20], dim=0, variant=variant), x[:, :20], dim=0, atol=atol)


@pytest.mark.parametrize("N", [1, 33, 5000])
@pytest.mark.parametrize("variant", ZERO_MASKED)
def test_all_minus_inf_rows_give_minus_inf_and_nan_stays_in_its_row(variant, N):
    x, _ = fresh_randn(4, N)
    x[1] = float("-inf")
    x[2, N // 2] = float("nan")
    y = softmax_bench.log_softmax(x, variant=variant)
    assert bool((y[1] == float("-inf")).all()), "a fully masked row gives -inf, not NaN"
    assert bool(y[2].isnan().all())
    assert_matches(y[[0, 3]], x[[0, 3]])


@pytest.mark.parametrize("variant", ZERO_MASKED)
def test_scale_mask_and_causal(variant):
    x, _ = fresh_randn(2, 24, 40)
    keep = torch.rand(2, 24, 40, device=DEVICE) > 0.3
    keep[0, 3] = False  # a fully masked row
    y = softmax_bench.log_softmax(x, scale=0.5, mask=keep, causal=True, variant=variant)
    assert_matches(y, x, scale=0.5, keep=keep & causal_keep(24, 40).to(DEVICE))
    assert bool((y[~keep] == float("-inf")).all())


def test_chunked_variants_walk_several_chunks():
    x, _ = fresh_randn(2, 3 * 4096 + 5, dtype=torch.bfloat16)
    for variant in ("two_pass", "online"):
        assert_matches(softmax_bench.log_softmax(x, variant=variant), x)


def test_auto_picks_cluster_for_log_softmax_as_for_softmax(monkeypatch):
    # cluster made to run here: the table's choice, and the rule's, are softmax's
    monkeypatch.setattr(cluster, "why_not_here", lambda: None)
    table = AutoTable("Test GPU", [{"dtype": "bf16", "M": 512, "N": 65536, "variant": "cluster", "ms": {}}])
    monkeypatch.setattr(dispatch, "_table_of", lambda device: table)
    gpu = torch.device("cuda", 0)
    assert dispatch.auto_choice(65536, torch.bfloat16, gpu, capturing=False, log=True)[0] == "cluster"
    monkeypatch.setattr(dispatch, "_table_of", lambda device: None)  # the rule
    assert dispatch.auto_choice(65536, torch.bfloat16, gpu, capturing=False, log=True)[0] == "cluster"


@pytest.mark.skipif(DEVICE != "cuda", reason="wide rows through the interpreter are too slow")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("N", [4096, 32768, 50257, 262144])
def test_log_softmax_wide_rows_on_the_gpu(dtype, N):
    x, _ = fresh_randn(8, N, dtype=dtype)
    for variant in ["auto"] + [v for v in VARIANTS if softmax_bench.variants()[v].supports(N, dtype)]:
        assert_matches(softmax_bench.log_softmax(x, variant=variant), x)


def test_the_gpu_takes_log_s_from_its_approximate_log2():
    """Compiled for the H200 without a GPU, fused's and two_pass's log_softmax take log s as lg2.approx · ln 2 (tl.log
    is some 30 instructions a row, 3.8 % of fused's time at bf16 262144×512); the interpreter, which runs no
    libdevice, keeps tl.log (this file's other tests check its numbers on CPU, and the fast log's on the GPU)."""
    code = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from softmax_bench.kernels import fused, two_pass
from tests.compile_sm90 import signature_of
for kernel, block in ((fused.fused_rows_kernel, {"BLOCK_N": 512, "ROWS": 4, "EVICT": ""}),
                      (two_pass.two_pass_kernel, {"BLOCK": 4096, "VEC": 8})):
    constexprs = {**block, "HAS_SCALE": False, "HAS_MASK": False, "CAUSAL": False, "LOG": True}
    types = {"x_ptr": "*bf16", "y_ptr": "*bf16", "mask_ptr": "*u8", "scale": "fp32"}
    source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs)
    ptx = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    print(kernel.__name__, ptx.count("lg2.approx"), ptx.count("fma.rn.ftz"))
"""
    lines = printed_without_interpreter("-c", code, timeout=300)
    assert len(lines) == 2, lines
    for line in lines:
        name, approx_logs, polynomial_steps = line.split()
        assert int(approx_logs) >= 1 and int(polynomial_steps) == 0, line
    if interpreted():
        assert "tl.log(s)" in inspect.getsource(masking.log_of_sum.fn)  # the interpreter runs no libdevice
