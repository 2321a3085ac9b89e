"""An additive bias (`bias=`) fused into the softmax, against a float64 reference: broadcast shapes, beside a mask
and a causal mask, rows it masks out, its gradient, the bytes it costs and the input it refuses."""

import pytest
import torch

import softmax_bench
from softmax_bench import SoftmaxInputError
from softmax_bench.dispatch import fusion_for
from softmax_bench.kernels import TOLERANCES, GRAD_TOLERANCES, variants

from .compile_sm90 import printed_without_interpreter
from .conftest import DEVICE, runnable_variants
from .test_fusion import same_bits_switched

BIASED = runnable_variants()  # every variant adds a bias; cluster (wide rows only) in test_cluster
TRITON_BIASED = runnable_variants(triton_only=True)
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def reference(x, bias, scale=1.0, keep=None, log=False):
    """softmax (log_softmax) of where(keep, x · scale + bias, -inf) in float64, a bias at or below its dtype's
    minimum masking its position out; fully masked rows zeros (-inf)."""
    b = bias.double().cpu().masked_fill(bias.cpu() <= torch.finfo(bias.dtype).min, float("-inf"))
    z = x.double().cpu() * scale + b
    if keep is not None:
        z = z.masked_fill(~keep.cpu().expand(z.shape), float("-inf"))
    ref = (torch.log_softmax if log else torch.softmax)(z, dim=-1)
    dead = (z == float("-inf")).all(dim=-1, keepdim=True)
    return ref.masked_fill(dead, float("-inf") if log else 0.0)


def assert_matches(y, ref, dtype):
    assert y.dtype == dtype
    atol, rtol = TOLERANCES[dtype]
    torch.testing.assert_close(y.double().cpu(), ref, atol=atol, rtol=rtol)


# x's shape, then the bias's: full, one row for all, a key-padding row shared by a head's queries ([B, 1, 1, S]),
# one [H, S, S] bias for the batch (ALiBi's shape), a bias per (batch, head) over the queries, and one broadcast in
# the middle ([B, 1, S, S], expanded)
SHAPES = [
    ((6, 300), (6, 300)),
    ((6, 300), (300,)),
    ((2, 3, 4, 136), (2, 1, 1, 136)),
    ((2, 3, 4, 136), (3, 4, 136)),
    ((2, 3, 4, 136), (2, 3, 1, 136)),
    ((2, 3, 4, 136), (2, 1, 4, 136)),
]


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}+{s[1]}")
@pytest.mark.parametrize("variant", BIASED)
def test_a_broadcast_bias_is_added_after_the_scale(variant, shapes, log):
    x_shape, bias_shape = shapes
    x = torch.randn(x_shape, device=DEVICE) * 3
    bias = torch.randn(bias_shape, device=DEVICE)
    op = softmax_bench.log_softmax if log else softmax_bench.softmax
    y = op(x, scale=0.5, bias=bias, variant=variant)
    assert_matches(y, reference(x, bias, 0.5, log=log), torch.float32)


@pytest.mark.parametrize("bias_dtype", DTYPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", BIASED)
def test_a_bias_of_any_float_dtype_beside_x_of_any(variant, dtype, bias_dtype):
    """The output is x's dtype whatever the bias's (eager casts back what x + bias promoted). The Triton variants
    add in fp32; eager and unfused in torch's promoted dtype, as a user's x + bias does (16-bit when both are)."""
    x = torch.randn(5, 1000, device=DEVICE).mul(3).to(dtype)
    bias = torch.randn(5, 1000, device=DEVICE).to(bias_dtype)
    ref = reference(x, bias) if variants()[variant].triton else torch.softmax((x + bias).double().cpu(), dim=-1)
    assert_matches(softmax_bench.softmax(x, bias=bias, variant=variant), ref, dtype)


@pytest.mark.parametrize("queries, keys", [(8, 300), (24, 10)], ids=["M<N", "M>N"])
@pytest.mark.parametrize("variant", BIASED)
def test_a_bias_beside_a_mask_and_a_causal_mask(variant, queries, keys):
    """With more queries than keys the first ones keep nothing (bottom-right aligned): zeros whatever the bias (eager:
    NaN, as torch gives them)."""
    x = torch.randn(2, queries, keys, device=DEVICE)
    bias = torch.randn(queries, keys, device=DEVICE)
    keep = torch.rand(2, 1, keys, device=DEVICE) > 0.3
    y = softmax_bench.softmax(x, scale=0.125, bias=bias, mask=keep, causal=True, variant=variant).cpu()
    kept = (keep.cpu() & (torch.arange(keys)[None, :] <= torch.arange(queries)[:, None] + (keys - queries)))
    ref = reference(x, bias, 0.125, kept)
    kept = kept.expand(y.shape)
    live = kept.any(dim=-1)
    assert bool(live.all()) == (queries < keys)
    if not variants()[variant].masked_rows_zero:
        assert bool(y[~live].isnan().all())
        y, ref, kept = y[live], ref[live], kept[live]
    assert_matches(y, ref, torch.float32)
    assert bool((y[~kept] == 0).all())


@pytest.mark.parametrize("variant", [name for name in TRITON_BIASED])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_bias_at_its_minimum_masks_out_as_minus_infinity_does(variant, dtype):
    """transformers' additive mask (0 kept, the dtype's minimum masked): partly masked rows as a keep-mask gives
    them, and a row masked everywhere, by -inf or the minimum, zeros (log_softmax: -inf) as a fully masked row."""
    x = torch.randn(4, 700, device=DEVICE).to(dtype)
    keep = torch.rand(4, 700, device=DEVICE) > 0.5
    keep[1] = False
    low = torch.finfo(dtype).min
    additive = torch.zeros(4, 700, device=DEVICE, dtype=dtype).masked_fill(~keep, low)
    additive[2] = float("-inf")
    keep[2] = False
    for log in (False, True):
        op = softmax_bench.log_softmax if log else softmax_bench.softmax
        y = op(x, bias=additive, variant=variant)
        masked = op(x, mask=keep, variant=variant)
        assert torch.equal(y, masked), (y - masked).abs().max()
        assert bool((y[1:3] == (float("-inf") if log else 0.0)).all())


@pytest.mark.parametrize("variant", BIASED)
def test_nan_in_a_bias_gives_nan_in_its_row_only(variant):
    x = torch.randn(3, 500, device=DEVICE)
    bias = torch.zeros(3, 500, device=DEVICE)
    bias[1, 17] = float("nan")
    y = softmax_bench.softmax(x, bias=bias, variant=variant).cpu()
    assert bool(y[1].isnan().all()) and not bool(y[[0, 2]].isnan().any())


@pytest.mark.parametrize("variant", BIASED)
def test_a_scale_of_zero_leaves_the_softmax_of_the_bias(variant):
    x = torch.randn(3, 400, device=DEVICE)
    bias = torch.randn(3, 400, device=DEVICE)
    y = softmax_bench.softmax(x, scale=0.0, bias=bias, variant=variant)
    assert_matches(y, torch.softmax(bias.double().cpu(), dim=-1), torch.float32)


@pytest.mark.parametrize("bias_shape", [(3, 2, 2, 8), (3, 1, 1, 8), (1, 2, 2, 1)], ids=str)
def test_the_bias_gradient_is_dx_summed_over_its_broadcast_dims(bias_shape):
    """gradcheck through eager in float64 (x and the bias), and the Triton backward against float64 autograd."""
    x64 = torch.randn(3, 2, 2, 8, dtype=torch.float64, device=DEVICE, requires_grad=True)
    b64 = torch.randn(bias_shape, dtype=torch.float64, device=DEVICE, requires_grad=True)
    for op in (softmax_bench.softmax, softmax_bench.log_softmax):
        assert torch.autograd.gradcheck(lambda x, b: op(x, scale=0.7, bias=b, variant="eager"), (x64, b64))
        torch_op = torch.softmax if op is softmax_bench.softmax else torch.log_softmax
        x, b = x64.detach().float().requires_grad_(), b64.detach().float().requires_grad_()
        y = op(x, scale=0.7, bias=b, variant="auto")
        dy = torch.randn_like(y)
        dx, db = torch.autograd.grad(y, (x, b), dy)
        dx_ref, db_ref = torch.autograd.grad(torch_op(x64 * 0.7 + b64, dim=-1), (x64, b64), dy.double())
        assert db.shape == b.shape and db.dtype == b.dtype
        atol, rtol = GRAD_TOLERANCES[torch.float32]
        torch.testing.assert_close(dx.double(), dx_ref, atol=atol, rtol=rtol)
        torch.testing.assert_close(db.double(), db_ref, atol=atol * 12, rtol=rtol)  # a sum of up to 12 dx


@pytest.mark.parametrize("shapes", [((5, 3, 0), (5, 3, 0)), ((5, 3, 0), (0,)), ((2, 3, 4, 0), (2, 1, 1, 0)),
                                    ((0, 3, 8), (3, 8)), ((5, 0, 0), (1, 0, 0))], ids=lambda s: f"{s[0]}+{s[1]}")
def test_an_empty_x_with_a_bias_gives_empty_results_and_gradients(shapes):
    """As an empty x alone does: x and the bias get gradients of their shapes (zeros). Rows of no columns under a
    bias or a mask raised `cannot reshape tensor of 0 elements into shape [-1, 0]` (torch.masked's own samples)."""
    x = torch.randn(shapes[0], device=DEVICE, requires_grad=True)
    bias = torch.randn(shapes[1], device=DEVICE, requires_grad=True)
    for op in (softmax_bench.softmax, softmax_bench.log_softmax):
        y = op(x, scale=0.5, bias=bias, mask=torch.ones(shapes[1], dtype=torch.bool, device=DEVICE))
        assert y.shape == x.shape
        dx, db = torch.autograd.grad(y.sum(), (x, bias))
        assert dx.shape == x.shape and db.shape == bias.shape and not db.any()


def test_a_bias_that_needs_no_gradient_gets_none_and_x_still_gets_one():
    x = torch.randn(4, 64, device=DEVICE, requires_grad=True)
    bias = torch.randn(4, 64, device=DEVICE)
    y = softmax_bench.softmax(x, scale=2.0, bias=bias)
    dy = torch.randn_like(y)
    (dx,) = torch.autograd.grad(y, x, dy)
    x64 = x.detach().double().requires_grad_()
    (dx_ref,) = torch.autograd.grad(torch.softmax(x64 * 2 + bias.double(), -1), x64, dy.double())
    torch.testing.assert_close(dx.double(), dx_ref, atol=1e-5, rtol=1e-4)
    b = bias.clone().requires_grad_()  # only the bias needs one: the call still goes through autograd
    (db,) = torch.autograd.grad(softmax_bench.softmax(x.detach(), bias=b), b, dy)
    assert db.shape == b.shape and bool(db.abs().sum() > 0)


def test_x_and_a_bias_of_its_shape_get_gradients_of_their_own():
    """With no scale the two gradients are one tensor in the backward: x.grad and bias.grad must still be two, as
    a second backward adds to them in place (autograd copies a gradient it cannot take alone)."""
    x = torch.randn(4, 64, device=DEVICE, requires_grad=True)
    bias = torch.randn(4, 64, device=DEVICE, requires_grad=True)
    softmax_bench.log_softmax(x, bias=bias).sum().backward()
    assert torch.equal(x.grad, bias.grad) and x.grad.data_ptr() != bias.grad.data_ptr()
    softmax_bench.log_softmax(x, bias=bias).sum().backward()
    assert torch.equal(x.grad, bias.grad)


def test_the_kernels_read_the_bias_once_beside_x():
    """Bytes: x, the bias and y once in fused's model; a shared bias row (a [B, 1, 1, S] bias) once for the rows that
    share it, from memory, and again for each other row from the caches (the SMs load it a row of x at a time);
    two_pass reads both twice, the second from L2 for rows that fit there."""
    x = torch.randn(2, 3, 4, 128, dtype=torch.bfloat16)
    full = fusion_for(x, -1, None, None, False, bias=torch.randn(2, 3, 4, 128, dtype=torch.bfloat16))
    shared = fusion_for(x, -1, None, None, False, bias=torch.randn(2, 1, 1, 128))
    assert shared.bias_shared and (shared.bias_group, shared.bias.shape) == (12, (2, 128))
    fused, two_pass = variants()["fused"], variants()["two_pass"]
    assert fused.traffic(24, 128, torch.bfloat16, full).total_bytes == 24 * 128 * 2 * 3
    assert fused.traffic(24, 128, torch.bfloat16, shared).total_bytes == 24 * 128 * 2 * 2 + 2 * 128 * 4
    assert fused.traffic(24, 128, torch.bfloat16, shared).l2_bytes == (24 - 2) * 128 * 4
    assert fused.traffic(24, 128, torch.bfloat16, full).l2_bytes == 0
    two = two_pass.traffic(24, 128, torch.bfloat16, full)
    assert two.total_bytes == 24 * 128 * 2 * 3 and two.l2_bytes == 24 * 128 * 2 * 2
    # a sweep of the biased op asks for the GPU memory of its bias and of the reference's fp32 copy of it too
    from softmax_bench.sweep import memory_needed

    extra = memory_needed(24, 128, torch.bfloat16, op="biased") - memory_needed(24, 128, torch.bfloat16, op="scaled")
    assert extra == 24 * 128 * (2 + 4)


def test_every_triton_kernel_compiles_a_bias_for_sm90_and_fused_reads_it_in_vectors():
    """Compiled, not interpreted (Triton's interpreter runs what its compiler may refuse: Triton 3.6 refused a None
    returned from a function, docs/perf-notes.md, thirteenth session): fused, two_pass, split and online with a
    bias, a shared one, a mask and causal; fused reads a bias on x's 16-byte grid in vectors, as many as x's (N,
    the pointers and the strides divisible by 16, as a launch specializes them for N = 4096), in the warps a biased
    launch takes (launch_config's: two vectors of x a thread)."""
    code = """
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from softmax_bench.kernels import fused, online, split, two_pass
from tests.compile_sm90 import signature_of
import torch
from softmax_bench.ops import OPS
biased = OPS["biased"].fusion_for(torch.empty(2, 4096, device="meta"))
biased_warps = fused.launch_config(1 << 20, 4096, torch.bfloat16, biased)["num_warps"]  # two 16-byte vectors a thread
configs = {fused.fused_rows_kernel: {"BLOCK_N": 4096, "ROWS": 1}, two_pass.two_pass_kernel: {"BLOCK": 4096, "VEC": 8},
           split.split_kernel: {"BLOCK": 4096, "VEC": 8, "K_POW2": 8, "PHASE": 0}, online.online_kernel: {"BLOCK": 4096}}
forms = {"plain": {}, "biased": {"HAS_BIAS": True, "BIAS_MIN": -3.0e38},
         "shared, masked, causal": {"HAS_BIAS": True, "BIAS_MIN": -3.0e38, "BIAS_SHARED": True, "HAS_MASK": True,
                                    "CAUSAL": True}}
for kernel, config in configs.items():
    for form, fusion in forms.items():
        pointers = {"x_ptr": "*bf16", "y_ptr": "*bf16", "mask_ptr": "*u8", "word_ptr": "*i64", "scale": "fp32",
                    "stash_ptr": "*fp32", "chunk_max_ptr": "*fp32", "bias_ptr": "*bf16"}
        constexprs = {"HAS_SCALE": True, "HAS_MASK": False, "CAUSAL": False, "LOG": False, **config, **fusion}
        if not fusion:
            constexprs["bias_ptr"] = None  # as a launch without a bias passes it
        aligned = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
                   for name in ("x_ptr", "y_ptr", "bias_ptr", "N", "stride_x", "stride_y", "bias_stride", "SEG")
                   if name in kernel.arg_names and name not in constexprs}
        source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, pointers), constexprs=constexprs,
                           attrs=aligned)
        warps = biased_warps if kernel is fused.fused_rows_kernel else 8
        ptx = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps}).asm["ptx"]
        print(kernel.fn.__name__, form.replace(" ", ""), len(re.findall(r"ld\\.global[.\\w:]*\\.v4\\.", ptx)))
"""
    lines = [line.split() for line in printed_without_interpreter("-c", code, timeout=300)]
    assert len(lines) == 12, lines
    loads = {(kernel, form): int(count) for kernel, form, count in lines}
    assert loads[("fused_rows_kernel", "biased")] == 2 * loads[("fused_rows_kernel", "plain")] > 0, loads


@pytest.mark.parametrize("bias, error, words", [
    (torch.ones(6, 300, dtype=torch.int32), TypeError, "float32, bfloat16 or float16"),
    (torch.ones(6, 300, dtype=torch.bool), TypeError, "float32, bfloat16 or float16"),
    (torch.ones(6, 300, dtype=torch.float64), TypeError, "float32, bfloat16 or float16"),
    (torch.ones(5, 300), SoftmaxInputError, "does not broadcast"),
    ([0.0] * 300, TypeError, "float tensor"),
], ids=["int", "bool", "float64 beside fp32", "shape", "a list"])
def test_a_bad_bias_says_what_is_accepted(bias, error, words):
    x = torch.randn(6, 300, device=DEVICE)
    if isinstance(bias, torch.Tensor):
        bias = bias.to(DEVICE)
    with pytest.raises(error, match=words) as raised:
        softmax_bench.softmax(x, bias=bias)
    assert "\n" not in str(raised.value)


def test_a_float64_bias_beside_float64_x_runs_torch():
    x = torch.randn(3, 50, dtype=torch.float64, device=DEVICE)
    bias = torch.randn(50, dtype=torch.float64, device=DEVICE)
    y = softmax_bench.softmax(x, bias=bias)
    assert y.dtype == torch.float64
    torch.testing.assert_close(y, torch.softmax(x + bias, -1))


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_a_programs_rows_read_their_shared_bias_row_once_with_the_row_by_row_result(dtype, log, monkeypatch):
    """fused.BIAS_ONCE_ROWS: a program whose rows share a bias row ([B, 1, 1, S] over [B, H, S', S] scores) reads it
    once and broadcasts it, bit for bit the result of reading it a row at a time, beside a keep-mask, with the dtype's
    minimum, NaN and +inf in the bias; only where the program's rows lie in one group (bias_once)."""
    from softmax_bench.kernels import Fusion, fused

    x = (torch.randn(2, 2, 64, 64, device=DEVICE) * 3).to(dtype)
    bias = torch.randn(2, 1, 1, 64, device=DEVICE).to(dtype)
    bias[0, ..., :5] = torch.finfo(dtype).min
    bias[1, ..., 7], bias[1, ..., 9] = float("nan"), float("inf")
    keep = torch.rand(x.shape, device=DEVICE) > 0.3
    op = softmax_bench.log_softmax if log else softmax_bench.softmax
    fusion = fusion_for(x, -1, 0.5, None, False, log, bias=bias)
    rows = fused.launch_config(256, 64, dtype, fusion)["ROWS"]
    monkeypatch.setattr(fused, "BIAS_ONCE_ROWS", True)
    assert fused.bias_once(fusion, rows) and 1 < rows <= fusion.bias_group
    assert not fused.bias_once(fusion, 2 * fusion.bias_group) and not fused.bias_once(fusion, 1)
    assert not fused.bias_once(Fusion(bias=torch.empty(4, 8, device="meta"), bias_group=8, causal_m=3), 4)
    for mask in (None, keep):
        same_bits_switched(monkeypatch, fused, ["BIAS_ONCE_ROWS"],
                           lambda: op(x, scale=0.5, mask=mask, bias=bias, variant="fused"))
