"""torch's own sample inputs for softmax and log_softmax (the OpInfo samples every torch op is tested with) run
through softmax_bench: `softmax(x, dim)` and `softmax(x, dim, dtype=torch.float64)` on 1-D, 2-D and 3-D tensors,
0-d tensors and empty ones, against torch.softmax, torch.nn.functional.softmax and their log forms, values and
input gradients; torch.masked's softmax samples through `mask=`, and torch's `_safe_softmax` samples (a slice
entirely -inf gives 0). Through the interpreter on CPU, the compiled kernels on a GPU."""

import pytest
import torch

import softmax_bench
from softmax_bench.kernels import GRAD_TOLERANCES, TOLERANCES

from .conftest import DEVICE, triton_variants_here
from .test_backward import grad_of_output

OURS = {"softmax": softmax_bench.softmax, "log_softmax": softmax_bench.log_softmax}
THEIRS = {"softmax": (torch.softmax, torch.nn.functional.softmax),
          "log_softmax": (torch.log_softmax, torch.nn.functional.log_softmax)}
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
VARIANTS = ["auto", "two_pass"]  # auto: fused on CPU; two_pass reads rows from their 16-byte boundary
WIDE = [4097, 65536]  # fused's and two_pass's chunks; cluster's rows on a GPU
TRITON_VARIANTS = triton_variants_here()


def samples(dtype: torch.dtype):
    """(id, op name, SampleInput) of every OpInfo sample of softmax and log_softmax, their with_dtype forms too.
    torch's op database is imported here, by the tests that read it: it takes seconds, on every worker that would
    collect it."""
    op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db
    for info in op_db:
        if info.name in OURS:
            for i, sample in enumerate(info.sample_inputs(DEVICE, dtype, requires_grad=True)):
                yield f"{info.name}{'-' + info.variant_test_name if info.variant_test_name else ''}-{i}", \
                    info.name, sample


def tolerances(out_dtype: torch.dtype, grad: bool, expected: torch.Tensor) -> dict:
    """The dtype's tolerances against float64; a gradient's atol scales with its largest element (dx = y·(dy − Σ)
    cancels where y is near 1: its error is the rounding of y times dy, not of dx)."""
    if out_dtype == torch.float64:  # computed by torch from the same input, or in fp32 and widened
        out_dtype = torch.float32
    atol, rtol = (GRAD_TOLERANCES if grad else TOLERANCES)[out_dtype]
    if grad and expected.numel():
        atol = max(atol, rtol * expected.abs().max().item())
    return {"atol": max(atol, 1e-5), "rtol": rtol}


def assert_gradient_of_output(dx, y, dy, dim, log, name, keep=None):
    """dx against the gradient computed in float64 from the forward's own output y, as the backward (ours and torch's)
    computes it: a 16-bit y carries its rounding into dx = y·(dy − Σ y·dy), which a tolerance against the exact
    float64 gradient cannot bound where dy − Σ cancels (on the H100, bf16 (5, 5) dim=0: 0.0035 off, 0.002 allowed).
    `keep`: a mask's kept positions (dx is 0 elsewhere)."""
    expected = grad_of_output(y, dy, log, dim, keep=keep)
    torch.testing.assert_close(dx.double().cpu(), expected, **tolerances(dx.dtype, True, expected),
                               msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opinfo_samples_match_torch(dtype, variant):
    """Values against torch's in float64 (not torch's own 16-bit CPU kernels, which are further from it than ours),
    input gradients against the gradient of our output in float64, dtypes and shapes against torch.softmax's and
    F.softmax's."""
    cases = list(samples(dtype))
    assert len(cases) == 28  # 7 shapes and dims, each with and without dtype=, for each op
    for name, op, sample in cases:
        x = sample.input
        if variant != "auto" and not softmax_bench.variants()[variant].supports(max(x.shape[-1:] or [1]), x.dtype):
            continue
        if variant != "auto" and sample.kwargs.get("dtype") == torch.float64:
            with pytest.raises(TypeError, match="float64 with variant='auto' or 'eager'"):
                OURS[op](x, *sample.args, **sample.kwargs, variant=variant)
            continue  # float64 runs torch's softmax: auto and eager take it, a Triton variant says so
        ours = OURS[op](x, *sample.args, **sample.kwargs, variant=variant)
        for theirs in THEIRS[op]:
            native = theirs(x, *sample.args, **sample.kwargs)
            assert ours.dtype == native.dtype and ours.shape == native.shape, name
        x64 = x.detach().double()
        expected = THEIRS[op][0](x64, *sample.args)
        torch.testing.assert_close(ours.double(), expected, **tolerances(ours.dtype, False, expected),
                                   msg=lambda m, name=name: f"{name}: {m}")
        if ours.numel() == 0:
            continue
        dy = torch.randn_like(ours)
        (dx,) = torch.autograd.grad(ours, x, dy)
        assert dx.dtype == x.dtype, name
        assert_gradient_of_output(dx, ours, dy, sample.args[0], op == "log_softmax", name)


@pytest.mark.parametrize("op_name", OURS)  # one test an op: some 12 s each on CPU, spread over the workers
def test_opinfo_samples_pass_torchs_gradient_checks(op_name):
    """torch's gradient tests of an op (test_ops_gradients: gradcheck with forward-mode AD, batched gradients and
    batched forward gradients; gradgradcheck, forward over reverse too) on every float64 sample of softmax and
    log_softmax through softmax_bench: its autograd formula, torch's kernels inside it (float64)."""
    cases = [case for case in samples(torch.float64) if case[1] == op_name]
    assert len(cases) == 14, len(cases)  # test_opinfo_samples_match_torch's 28, an op's half
    for name, op, sample in cases:
        if sample.input.numel() == 0:
            continue

        def f(x, op=op, sample=sample):
            return OURS[op](x, *sample.args, **sample.kwargs)

        assert torch.autograd.gradcheck(f, (sample.input,), check_forward_ad=True, check_batched_grad=True,
                                        check_batched_forward_grad=True), name
        assert torch.autograd.gradgradcheck(f, (sample.input,), check_fwd_over_rev=True, check_batched_grad=True), name


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torchs_masked_softmax_samples_give_torch_masked_results(dtype):
    """torch.masked.softmax's and log_softmax's OpInfo samples (masks of x's shape and broadcast over any of its dims,
    over the last dim and others, empty and 0-d x) through `mask=`: values against torch.masked's own op in float64,
    except where a slice is masked out entirely: torch.masked gives NaN there, ours zeros (-inf for log_softmax), as
    documented; input gradients against the gradient of our output (assert_gradient_of_output), at every position,
    0 where masked. An empty x with a mask raised `cannot reshape tensor of 0 elements`. `auto`
    alone: every variant's masks are tested in test_fusion; two_pass through the interpreter took 6–9 s here."""
    op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db
    masked_ops = {f"masked.{op}": op for op in OURS}
    cases = [(info, OURS[masked_ops[info.name]], sample) for info in op_db if info.name in masked_ops
             for sample in info.sample_inputs(DEVICE, dtype, requires_grad=True)]
    assert len(cases) == 48 and sum(sample.kwargs.get("mask") is not None for _, _, sample in cases) == 34
    for info, ours, sample in cases:
        x, (dim,), mask = sample.input, sample.args, sample.kwargs.get("mask")
        name = f"{info.name} {tuple(x.shape)} dim={dim} mask={None if mask is None else tuple(mask.shape)}"
        y = ours(x, dim, mask=mask)
        x64 = x.detach().double()
        expected = info.op(x64, dim, mask=mask)
        assert y.shape == x.shape and y.dtype == x.dtype, name
        whole_slice_masked = expected.isnan()
        torch.testing.assert_close(y.double()[~whole_slice_masked], expected[~whole_slice_masked],
                                   **tolerances(y.dtype, False, expected), msg=lambda m, name=name: f"{name}: {m}")
        masked_out_value = float("-inf") if info.name.endswith("log_softmax") else 0.0
        assert (y[whole_slice_masked] == masked_out_value).all(), name
        dy = torch.randn_like(y)
        (dx,) = torch.autograd.grad(y, x, dy)
        assert dx.shape == x.shape and dx.dtype == x.dtype, name
        if x.numel() == 0:
            continue
        assert_gradient_of_output(dx, y, dy, dim, info.name.endswith("log_softmax"), name, mask)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_torchs_safe_softmax_samples_give_its_results(dtype):
    """torch's `_safe_softmax` (what its attention's math path calls) gives 0, not NaN, over a slice that is entirely
    -inf, as every softmax_bench variant does: its OpInfo samples (slices of -inf over dims 0, 1 and 2) through
    `softmax(x, dim)`, values against it in float64, input gradients against the gradient of our output."""
    op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db
    (info,) = [info for info in op_db if info.name == "torch.ops.aten._safe_softmax.default"]
    samples = list(info.sample_inputs(DEVICE, dtype, requires_grad=True))
    assert len(samples) == 8 and sum(bool((s.input == float("-inf")).any()) for s in samples) >= 4
    for sample in samples:
        x, dim = sample.input, sample.kwargs["dim"]
        y = softmax_bench.softmax(x, dim)
        x64 = x.detach().double()
        expected = info.op(x64, dim)
        name = f"{tuple(x.shape)} dim={dim}"
        torch.testing.assert_close(y.double(), expected, **tolerances(y.dtype, False, expected),
                                   msg=lambda m, name=name: f"{name}: {m}")
        dy = torch.randn_like(y)
        (dx,) = torch.autograd.grad(y, x, dy)
        assert_gradient_of_output(dx, y, dy, dim, False, name)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_output_is_contiguous_as_torchs_whatever_the_layout_and_dim(variant):
    """torch's softmax output is contiguous for any input layout and dim (it was a transposed view for a dim other
    than the last, whose .view(-1) failed); the meta tensors' (the registered ops' fake) likewise."""
    x = torch.randn(2, 3, 4, 5, device=DEVICE)
    layouts = {"contiguous": x, "channels_last": x.to(memory_format=torch.channels_last),
               "transposed": x.transpose(2, 3), "sliced": x[..., 1:]}
    for layout, t in layouts.items():
        for dim in range(-1, t.dim() - 1):
            for op, fn in OURS.items():
                y, expected = fn(t, dim, variant=variant), THEIRS[op][0](t, dim)
                assert y.is_contiguous() and y.stride() == expected.stride(), (layout, dim, op)
                torch.testing.assert_close(y, expected, atol=1e-6, rtol=1e-5)
                assert y.view(-1).shape == (t.numel(),)
                assert fn(t.to("meta"), dim, variant=variant).stride() == expected.stride(), (layout, dim, op)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("variant", TRITON_VARIANTS)
def test_16_bit_in_fp32_out_in_one_pass(variant, dtype, log):
    """dtype=torch.float32 on 16-bit x: the kernel reads x in its own dtype and stores fp32 (no cast before, no
    16-bit rounding after): within fp32's tolerance of the float64 result, the traffic of one 16-bit read and one
    fp32 write, and a gradient in x's dtype."""
    run = softmax_bench.log_softmax if log else softmax_bench.softmax
    for N in WIDE if DEVICE == "cuda" else WIDE[:1]:
        if not softmax_bench.variants()[variant].supports(N, dtype):
            continue
        x = (torch.randn(3, N, dtype=torch.float64) * 3).to(dtype).to(DEVICE)
        y = run(x, -1, torch.float32, variant=variant)
        expected = (torch.log_softmax if log else torch.softmax)(x.double(), dim=-1)
        assert y.dtype == torch.float32
        torch.testing.assert_close(y.double(), expected, atol=1e-6, rtol=1e-5)
        xg = x.clone().requires_grad_()
        (dx,) = torch.autograd.grad(run(xg, -1, torch.float32, variant=variant).sum(), xg)
        assert dx.dtype == dtype
    fusion = softmax_bench.kernels.Fusion(out_dtype=torch.float32)
    if variant in ("fused", "cluster"):
        traffic = softmax_bench.variants()[variant].traffic(3, 4097, dtype, fusion)
        assert (traffic.read_bytes, traffic.write_bytes) == (3 * 4097 * 2, 3 * 4097 * 4)
