"""Gradients: gradcheck in float64 through the eager path, and the backward kernels against float64 autograd."""

import pytest
import torch

import softmax_bench
from softmax_bench.dispatch import backward_for
from softmax_bench.kernels import Fusion, backward_traffic, backwards, fused_backward, two_pass_backward

from .compile_sm90 import printed_without_interpreter
from .conftest import DEVICE, SM90_CODE_OF_TRITON_38
from .test_fusion import causal_keep
from .test_kernels import fresh_randn

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
# rtol of dx against the float64 gradient of the forward's own y: one rounding to store dx (fp32: its sums);
# atol is this much of the largest |dx|, for what cancels in dy − Σ.
GRAD_RTOL = {torch.float32: 1e-5, torch.bfloat16: 1.6e-2, torch.float16: 2e-3}
GRAD_ATOL = 1e-5
TRITON_BACKWARDS = [name for name, b in backwards().items() if b.triton]
FUNCTIONS = {"softmax": (softmax_bench.softmax, torch.softmax), "log_softmax": (softmax_bench.log_softmax,
                                                                                torch.log_softmax)}


def reference_grad(x, dy, log, dim=-1, scale=1.0, keep=None):
    """dx by float64 autograd of the eager code (scale, masked_fill, softmax), on CPU; NaN (torch's fully masked
    rows) as 0, softmax_bench's gradient there."""
    x64 = x.detach().double().cpu().requires_grad_()
    z = x64 * scale
    if keep is not None:
        z = z.masked_fill(~keep.cpu().expand(z.shape), float("-inf"))
    y = (torch.log_softmax if log else torch.softmax)(z, dim=dim)
    (dx,) = torch.autograd.grad(y, x64, dy.double().cpu())
    return dx.nan_to_num(nan=0.0)


def grad_of_output(y, dy, log, dim=-1, scale=1.0, keep=None):
    """dx in float64 from the forward's own output y (in its dtype): what the backward computes, rounded once."""
    y64, dy64 = y.detach().double().cpu(), dy.double().cpu()
    if log:
        dx = dy64 - y64.exp() * dy64.sum(dim, keepdim=True)
    else:
        dx = y64 * (dy64 - (dy64 * y64).sum(dim, keepdim=True))
    if keep is not None:
        dx = dx.masked_fill(~keep.cpu().expand(dx.shape), 0.0)
    return dx * scale


def sum_rounding(y, dy, log, dim) -> float:
    """The most the backward's fp32 row sum (Σ dy·y, or Σ dy for log_softmax) can be off, times its factor y (or
    e^y): N·eps₃₂·Σ|terms|. A dy equal along the row makes dy − Σ cancel to ~0, so that this, not the size of dx,
    sets the error (on the H200 under Triton 3.6: 5e-8 against a dx of ~1e-3 at its largest)."""
    y64, dy64 = y.detach().double().cpu(), dy.double().cpu()
    terms = dy64.abs() if log else (dy64 * y64).abs()
    factor = y64.exp() if log else y64.abs()
    bound = y.shape[dim] * torch.finfo(torch.float32).eps * terms.sum(dim, keepdim=True) * factor
    return float(bound.max())


def assert_grad_matches(dx, expected, dtype, slack=0.0):
    subnormal_step = torch.finfo(dtype).tiny * torch.finfo(dtype).eps  # fp16's 6e-8: a tiny dx rounds to it
    atol = max(GRAD_ATOL * (float(expected.abs().max()) or 1.0), subnormal_step, slack)
    torch.testing.assert_close(dx.double().cpu(), expected, atol=atol, rtol=GRAD_RTOL[dtype])


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_gradcheck_float64_through_eager(log):
    fn = softmax_bench.log_softmax if log else softmax_bench.softmax
    x = fresh_randn(2, 3, 6, dtype=torch.float64)[0].requires_grad_()
    keep = torch.rand(2, 1, 6, device=DEVICE) > 0.3
    keep[..., 0] = True
    assert torch.autograd.gradcheck(lambda x: fn(x, dim=1, scale=0.7, variant="eager"), (x,))
    if not log:  # log_softmax is -inf where masked: no finite difference there
        assert torch.autograd.gradcheck(lambda x: fn(x, variant="eager", causal=True), (x,))
        assert torch.autograd.gradcheck(lambda x: fn(x, mask=keep, scale=-2.0, variant="eager"), (x,))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("variant", ["auto", "two_pass", "unfused"])
def test_gradients_match_float64_autograd(variant, name, dtype):
    fn, _ = FUNCTIONS[name]
    x, seed = fresh_randn(5, 300, dtype=dtype)
    x.requires_grad_()
    y = fn(x, scale=0.5, variant=variant)
    dy = fresh_randn(*y.shape, dtype=dtype)[0]
    (dx,) = torch.autograd.grad(y, x, dy)
    assert dx.dtype == dtype and dx.shape == x.shape
    slack = 0.0
    if variant == "unfused" and dtype != torch.float32:
        # unfused's backward is torch's, whose 16-bit CUDA kernel keeps a term in the dtype (seen on the H200: 4 %
        # off a small dx, where dy − Σ cancels): up to an eps of |y|·|Σ| more
        y64, dy64 = y.detach().double().cpu(), dy.double().cpu()
        total = dy64.sum(-1) if name == "log_softmax" else (y64 * dy64).sum(-1)
        y_part = y64.exp() if name == "log_softmax" else y64
        slack = torch.finfo(dtype).eps * float(y_part.abs().max() * total.abs().max())
    assert_grad_matches(dx, grad_of_output(y, dy, name == "log_softmax", scale=0.5), dtype, slack)
    if dtype == torch.float32:  # y one fp32 rounding from the truth: the gradient of x itself
        torch.testing.assert_close(dx.double().cpu(), reference_grad(x, dy, name == "log_softmax", scale=0.5),
                                   atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("backward", TRITON_BACKWARDS)
def test_backward_kernels_over_chunks_with_masks(backward, log, dtype):
    """Each Triton backward directly: rows of several two_pass chunks, a keep-mask, a causal mask, a scale."""
    M, N = 3, 2 * two_pass_backward.launch_config(4096, dtype)["BLOCK"] + 37  # rows start off 16-byte boundaries
    reason = backwards()[backward].unsupported(N, dtype)
    if reason is not None:  # cluster's: tests/test_cluster_backward.py
        pytest.skip(reason)
    x, _ = fresh_randn(M, N, dtype=dtype)
    keep = torch.rand(M, N, device=DEVICE) > 0.2
    fusion = Fusion(scale=0.25, mask=keep.view(torch.uint8), causal_m=M, log=log)
    y = softmax_bench.dispatch.softmax_forward(x, -1, 0.25, keep, True, "auto", log)
    dy, _ = fresh_randn(M, N, dtype=dtype)
    dx, _ = backwards()[backward].launch(y, dy, fusion)
    assert_grad_matches(dx, grad_of_output(y, dy, log, scale=0.25, keep=keep & causal_keep(M, N).to(DEVICE)), dtype)
    assert bool((dx[~keep] == 0).all()), "masked positions get no gradient"


@pytest.mark.parametrize("backward", TRITON_BACKWARDS)
def test_backward_row_offsets_past_2_31_elements(backward):
    """Each Triton backward directly, y's and dy's three rows 2^30 elements apart: row 2 starts at element 2^31,
    which int32 offsets would wrap (Liger's suite checks its softmax's backward past 2^31 elements)."""
    reason = backwards()[backward].unsupported(256, torch.float16)
    if reason is not None:  # cluster's rows are wider
        pytest.skip(reason)
    x, _ = fresh_randn(3, 256, dtype=torch.float16)
    dy_rows, _ = fresh_randn(3, 256, dtype=torch.float16)
    far_apart = []
    for rows in (softmax_bench.softmax(x), dy_rows):
        storage = torch.empty(2 * 2**30 + 256, dtype=torch.float16, device=DEVICE)
        far_apart.append(storage.as_strided((3, 256), (2**30, 1)))
        far_apart[-1].copy_(rows)
    y, dy = far_apart
    dx, _ = backwards()[backward].launch(y, dy, Fusion())
    assert_grad_matches(dx, grad_of_output(y, dy, False), torch.float16)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("N", [1, 7, 64, 1000, 1021])
def test_two_pass_backward_rows_of_any_alignment(N, dtype):
    """Rows starting off 16-byte boundaries (odd N), a dy whose rows start elsewhere than y's (copied first) and
    one whose row stride keeps them aligned alike (read in place)."""
    x, _ = fresh_randn(5, N, dtype=dtype)
    base, _ = fresh_randn(5, N + 16, dtype=dtype)
    for log in (False, True):
        y = softmax_bench.dispatch.softmax_forward(x, -1, None, None, False, "auto", log)
        for dy in (base[:, 1:N + 1], base[:, 8:N + 8]):
            dx, _ = backwards()["two_pass"].launch(y, dy, Fusion(log=log))
            assert_grad_matches(dx, grad_of_output(y, dy, log), dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_fully_masked_rows_minus_inf_rows_and_nan(name):
    fn, _ = FUNCTIONS[name]
    x, _ = fresh_randn(4, 50)
    x[1] = float("-inf")
    x[2, 7] = float("nan")
    keep = torch.ones(4, 50, dtype=torch.bool, device=DEVICE)
    keep[3] = False
    x.requires_grad_()
    dy, _ = fresh_randn(4, 50)
    y = fn(x, mask=keep)
    (dx,) = torch.autograd.grad(y, x, dy)
    assert bool((dx[3] == 0).all()), "a fully masked row gets no gradient"
    assert bool(dx[2].isnan().all()) and not bool(dx[[0, 1, 3]].isnan().any())
    # an all -inf input row: softmax's y is 0 there, so is dx; log_softmax's dx is dy (e^y = 0), as torch's
    assert torch.equal(dx[1], torch.zeros_like(dx[1]) if name == "softmax" else dy[1])
    # against the gradient of y's own fp32 rounding, with the row sum's: against the exact gradient, where dy − Σ
    # cancels, dx was 3e-5 off relatively at about one seed in 400 (6.7e-8 against 2.8e-8 allowed)
    log = name == "log_softmax"
    assert_grad_matches(dx[0], grad_of_output(y[0], dy[0], log), torch.float32, sum_rounding(y[0], dy[0], log, -1))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_any_dim_causal_and_non_contiguous_gradients(name):
    fn, _ = FUNCTIONS[name]
    x, _ = fresh_randn(2, 6, 9, dtype=torch.bfloat16)
    x.requires_grad_()
    big, _ = fresh_randn(2, 6, 18, dtype=torch.bfloat16)
    for dim, causal, dy in ((1, False, big[..., ::2]), (-1, True, big[..., 3:12].transpose(0, 1).transpose(0, 1)),
                            (0, False, torch.ones(1, 1, 1, dtype=torch.bfloat16, device=DEVICE).expand(2, 6, 9))):
        y = fn(x, dim=dim, causal=causal)
        (dx,) = torch.autograd.grad(y, x, dy)
        keep = causal_keep(6, 9).to(DEVICE) if causal else None
        assert_grad_matches(dx, grad_of_output(y, dy, name == "log_softmax", dim=dim, keep=keep), torch.bfloat16,
                            sum_rounding(y, dy, name == "log_softmax", dim))
    # a loss: y.sum() hands the backward a dy of stride 0
    x32 = x.detach().float().requires_grad_()
    fn(x32, dim=2).sum().backward()
    expected = reference_grad(x32, torch.ones(2, 6, 9), name == "log_softmax", dim=2)  # softmax's: 0
    torch.testing.assert_close(x32.grad.double().cpu(), expected, atol=1e-6, rtol=1e-5)


def test_no_gradient_asked_no_graph():
    x, _ = fresh_randn(2, 8)
    x.requires_grad_()
    with torch.no_grad():
        assert not softmax_bench.softmax(x).requires_grad
    assert softmax_bench.softmax(x).requires_grad and softmax_bench.log_softmax(x).requires_grad


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_torch_func_transforms_give_torchs_results(name):
    """Under torch.func's transforms (library.TransformedAutograd: a setup_context and a vmap rule) a scaled, masked
    call gives what torch's own ops give: a gradient, a batch (x's batch dim anywhere; the mask and a bias batched
    too, or shared), a Jacobian, a batch of gradients, a gradient of a gradient (the backward in torch's ops)."""
    x = torch.randn(3, 16, device=DEVICE, dtype=torch.float64).float()
    keep = torch.rand(3, 16, device=DEVICE) > 0.3
    weights = torch.randn(16, device=DEVICE)
    ours = getattr(softmax_bench, name)
    torchs = getattr(torch, name)

    def cases(f):
        loss = lambda x: (f(x) * weights).sum()  # noqa: E731
        batch = torch.stack([x, 2 * x, -x])
        return {"grad": torch.func.grad(loss)(x), "vmap": torch.func.vmap(f)(batch),
                "vmap on dim 1": torch.func.vmap(f, in_dims=1)(batch.transpose(0, 1).contiguous()),
                "jacrev": torch.func.jacrev(f)(x), "vmap(grad)": torch.func.vmap(torch.func.grad(loss))(batch),
                "grad(grad)": torch.func.grad(lambda x: torch.func.grad(loss)(x).pow(2).sum())(x)}

    got = cases(lambda x: ours(x, scale=0.5, mask=keep))
    expected = cases(lambda x: torchs((x * 0.5).masked_fill(~keep, float("-inf")), -1))
    for transform, value in got.items():
        reference = expected[transform]
        finite = reference.isfinite()  # masked log_softmax: -inf where torch's is
        assert torch.equal(finite, value.isfinite()), transform
        torch.testing.assert_close(value[finite], reference[finite], atol=2e-5, rtol=2e-5, msg=transform)
    batch = torch.stack([x, 2 * x])
    keeps = torch.stack([keep, ~keep]).transpose(0, 1)  # batched at dim 1
    biases = torch.randn(2, 1, 16, device=DEVICE)  # each a row shared by x's rows
    got = torch.func.vmap(lambda x, keep, bias: ours(x, mask=keep, bias=bias), in_dims=(0, 1, 0))(batch, keeps, biases)
    for i in range(2):
        expected = torchs((batch[i] + biases[i]).masked_fill(~keeps[:, i], float("-inf")), -1)
        finite = expected.isfinite()
        torch.testing.assert_close(got[i][finite], expected[finite], atol=2e-5, rtol=2e-5)
    bias = torch.randn(16, device=DEVICE)  # the bias's gradient: dx summed over the rows it is shared by
    bias_grads = [torch.func.grad(lambda b: (f(b) * weights).sum())(bias)
                  for f in (lambda b: ours(x, bias=b), lambda b: torchs(x + b, -1))]
    torch.testing.assert_close(*bias_grads, atol=2e-5, rtol=2e-5)
    rows = torch.func.vmap(lambda keep_row: ours(x, mask=keep_row))(keep)  # a mask row a batch, x shared
    torch.testing.assert_close(rows, torch.stack([ours(x, mask=k) for k in keep]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_gradcheck_twice_and_in_forward_mode(name):
    """The autograd formula's other derivatives, checked by gradcheck in float64 (auto runs float64 through torch's
    kernels, inside softmax_bench's formula): forward mode (jvp), batched gradients (the backward under vmap),
    batched forward gradients, and gradgradcheck's second derivatives, reverse over reverse and forward over reverse;
    for x alone (scaled, masked), and for x and a bias, each with a gradient."""
    fn = getattr(softmax_bench, name)
    x = fresh_randn(3, 6, dtype=torch.float64)[0].requires_grad_()
    bias = fresh_randn(6, dtype=torch.float64)[0].requires_grad_()
    keep = torch.rand(3, 6, device=DEVICE) > 0.3
    keep[:, 0] = True
    checks = dict(check_forward_ad=True, check_batched_grad=True, check_batched_forward_grad=True)
    cases = [(lambda x: fn(x, scale=0.7), (x,)), (lambda x, b: fn(x, bias=b), (x, bias))]
    if name == "softmax":  # log_softmax is -inf where masked: no finite difference there
        cases.append((lambda x: fn(x, mask=keep, scale=-2.0), (x,)))
    for f, inputs in cases:
        assert torch.autograd.gradcheck(f, inputs, **checks)
        assert torch.autograd.gradgradcheck(f, inputs, check_fwd_over_rev=True, check_batched_grad=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_the_kernels_derivatives_of_every_order_are_torchs(name):
    """Through the Triton kernels (fp32, auto): the tangent of a forward-mode dual tensor (torch.autograd.forward_ad,
    of x and of a bias), torch.func.jvp and jacfwd, and a gradient penalty (the gradient of a gradient taken with
    create_graph=True, which the backward had given as a constant: its second derivative silently lost) against
    torch's own on the same scaled and masked code."""
    import torch.autograd.forward_ad as fwAD

    x = torch.randn(4, 16, device=DEVICE)
    tangent = torch.randn_like(x)
    keep = torch.rand(4, 16, device=DEVICE) > 0.3
    keep[:, 0] = True
    bias = torch.randn(16, device=DEVICE)
    ours, torchs = getattr(softmax_bench, name), getattr(torch, name)

    def dual_tangent(f, primal, tangent):
        with fwAD.dual_level():
            return fwAD.unpack_dual(f(fwAD.make_dual(primal, tangent))).tangent

    def penalty_gradient(f):
        x_ = x.clone().requires_grad_()
        (grad,) = torch.autograd.grad((f(x_) * tangent).masked_fill(~keep, 0).sum(), x_, create_graph=True)
        return torch.autograd.grad((grad * grad).sum() + x_.sum(), x_)[0]

    def cases(f, with_bias):
        return {"forward_ad": dual_tangent(f, x, tangent), "jvp": torch.func.jvp(f, (x,), (tangent,))[1],
                "jacfwd": torch.func.jacfwd(f)(x), "penalty": penalty_gradient(f),
                "bias tangent": dual_tangent(lambda b: with_bias(x, b), bias, torch.ones_like(bias))}

    got = cases(lambda x: ours(x, scale=0.5, mask=keep), lambda x, b: ours(x, bias=b))
    expected = cases(lambda x: torchs((x * 0.5).masked_fill(~keep, float("-inf")), -1), lambda x, b: torchs(x + b, -1))
    for case, value in got.items():
        assert value is not None, case
        torch.testing.assert_close(value, expected[case], atol=2e-5, rtol=2e-5, msg=case)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(0, 10), (10, 0), (0,), (2, 0, 3)], ids=str)
def test_an_empty_gradient_is_differentiable_again(name, shape):
    """torch's test_softmax_results: an empty x's gradient taken with create_graph=True is part of the graph (its
    .sum().backward() runs), as torch's is; it came back detached."""
    ours, torchs = getattr(softmax_bench, name), getattr(torch, name)
    dim = 0 if len(shape) == 1 else 1
    for f in (ours, torchs):
        x = torch.rand(shape, device=DEVICE, requires_grad=True)
        (grad,) = torch.autograd.grad(f(x, dim), x, torch.rand(shape, device=DEVICE), create_graph=True)
        assert grad.shape == shape and grad.requires_grad, f
        grad.sum().backward()


def test_which_backward_runs():
    registry, forward = backwards(), softmax_bench.variants()
    wide = "cluster" if registry["cluster"].supports(fused_backward.MAX_N, torch.bfloat16) else None
    assert backward_for(forward["fused"], 4096, torch.bfloat16) is registry["fused"]
    assert backward_for(forward["fused"], fused_backward.MAX_N, torch.bfloat16) is registry[wide or "fused"]
    assert backward_for(forward["cluster"], fused_backward.MAX_N + 1, torch.bfloat16) is registry[wide or "two_pass"]
    assert backward_for(forward["unfused"], 64, torch.float32) is registry["eager"]


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("batch, S, N", [(1, 300, 37), (2, 40, 70), (3, 70, 40), (2, 33, 33)], ids=str)
def test_fused_causal_backward_reads_nothing_past_a_rows_diagonal_but_log_softmaxs_dy(batch, S, N, dtype, log):
    """fused's causal backward: y past a row's diagonal (beyond its last kept 16-byte vector) is not read, nor dy
    for softmax, and programs of rows that keep nothing (SKIP_MASKED_PROGRAMS) read neither: NaN put there changes
    no bit of dx, which is the one the same rows give as an explicit keep-mask (every position read). log_softmax's
    row sum is every dy of the row (torch's masked log_softmax backward): NaN in dy there reaches the row."""
    from softmax_bench.kernels import fused

    torch.manual_seed(0)
    causal = Fusion(scale=0.5, causal_m=S, log=log)
    y = fused.launch(torch.randn(batch * S, N, device=DEVICE).to(dtype), causal)[0]
    dy = torch.randn_like(y)
    keep = causal_keep(S, N).repeat(batch, 1).to(DEVICE)
    vec = 16 // y.element_size()
    last_kept = (torch.arange(batch * S, device=DEVICE) % S + (N - S))[:, None]
    unread = (torch.arange(N, device=DEVICE)[None, :] // vec) * vec > last_kept  # past each row's last kept vector
    assert bool(unread.any())
    expected, _ = fused_backward.launch(y, dy, Fusion(scale=0.5, log=log, mask=keep.view(torch.uint8)))
    poisoned_dy = dy if log else dy.masked_fill(unread, float("nan"))
    dx, _ = fused_backward.launch(y.masked_fill(unread, float("nan")), poisoned_dy, causal)
    assert torch.equal(dx, expected)
    if log:  # every dy of a row is read: NaN past the diagonal reaches the row's kept positions
        dx, _ = fused_backward.launch(y, dy.masked_fill(unread, float("nan")), causal)
        reached = unread.any(dim=1) & keep.any(dim=1)
        assert bool(dx[reached].masked_select(keep[reached]).isnan().all())


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("batch, S, N", [(1, 300, 37), (3, 70, 40), (2, 33, 33), (1, 5, 64)], ids=str)
def test_fused_causal_backward_runs_rows_last_to_first_bit_for_bit(batch, S, N, log, monkeypatch):
    """fused_backward.HEAVIEST_FIRST: causal rows that read what they keep, in programs from the last row to the
    first where their kept shares differ by more than N / 4 (rows_differ: all but 5×64 here, whose rows keep 60 to
    64 columns), give, bit for bit, the dx of programs in row order, which is the dx of the same rows as an explicit
    keep-mask: every row written once, none twice."""
    from softmax_bench.kernels import fused

    torch.manual_seed(0)
    causal = Fusion(scale=0.5, causal_m=S, log=log)
    y = fused.launch(torch.randn(batch * S, N, device=DEVICE), causal)[0]
    dy = torch.randn_like(y)
    launched = []
    launch_kernel = fused_backward.launch_kernel
    monkeypatch.setattr(fused_backward, "launch_kernel",
                        lambda *args, **kwargs: launched.append(kwargs) or launch_kernel(*args, **kwargs))
    outputs = []
    for heaviest_first in (True, False):
        monkeypatch.setattr(fused_backward, "HEAVIEST_FIRST", heaviest_first)
        outputs.append(fused_backward.launch(y, dy, causal)[0])
    assert [kwargs.get("REVERSED", False) for kwargs in launched] == [4 * S > N, False]
    assert torch.equal(outputs[0], outputs[1])
    keep = causal_keep(S, N).repeat(batch, 1).to(DEVICE)
    assert torch.equal(outputs[0], fused_backward.launch(y, dy, Fusion(scale=0.5, log=log,
                                                                       mask=keep.view(torch.uint8)))[0])


def test_the_causal_backwards_floor_counts_what_a_causal_row_keeps():
    """backward_traffic of causal rows: y read where kept (and dy too for softmax; all of it for log_softmax), dx
    written whole; fused's backward skips the rest, cluster's and two_pass's read whole rows."""
    from softmax_bench.kernels import causal_kept

    M, N, causal_m = 4096, 4000, 4096
    nbytes, kept = M * N * 2, causal_kept(M, N, causal_m) * 2
    assert 0 < kept < nbytes / 2
    registry = backwards()
    for log, read in ((False, 2 * kept), (True, kept + 4000 * N * 2)):  # log: dy of the 4000 rows keeping any
        causal = Fusion(causal_m=causal_m, log=log)
        assert backward_traffic(M, N, torch.bfloat16, causal).total_bytes == read + nbytes
        assert registry["fused"].traffic(M, N, torch.bfloat16, causal).total_bytes == read + nbytes
        for whole in ("cluster", "two_pass"):
            assert registry[whole].traffic(M, N, torch.bfloat16, causal).total_bytes >= 3 * nbytes
    narrow = backward_traffic(262144, 512, torch.bfloat16, Fusion(causal_m=262144))  # all but 512 rows keep none
    assert narrow.total_bytes == 262144 * 512 * 2 + 2 * causal_kept(262144, 512, 262144) * 2
    narrow_log = backward_traffic(262144, 512, torch.bfloat16, Fusion(causal_m=262144, log=True))
    assert narrow_log.total_bytes == 262144 * 512 * 2 + causal_kept(262144, 512, 262144) * 2 + 512 * 512 * 2


def test_backward_traffic_models():
    M, N, nbytes = 1024, 4096, 1024 * 4096 * 2
    registry = backwards()
    # read y and dy, write dx: three row passes
    assert registry["fused"].traffic(M, N, torch.bfloat16).total_bytes == 3 * nbytes
    assert backward_traffic(M, N, torch.bfloat16, Fusion(mask=torch.empty(M, N, dtype=torch.uint8, device="meta"),
                                                         log=True)).total_bytes == 3 * nbytes + M * N
    narrow = registry["two_pass"].traffic(M, N, torch.bfloat16)  # 16 KB of y and dy a row: read again from L2
    assert narrow.total_bytes == 3 * nbytes and narrow.l2_bytes == 2 * nbytes
    wide = registry["two_pass"].traffic(M, 65536, torch.bfloat16)
    assert wide.total_bytes == 5 * M * 65536 * 2 and wide.l2_bytes == 0
    assert registry["eager"].traffic(M, N, torch.bfloat16, Fusion(scale=0.5)).total_bytes == 5 * nbytes
    assert registry["fused"].max_n == fused_backward.MAX_N and registry["two_pass"].max_n is None


@pytest.mark.skipif(DEVICE != "cuda", reason="wide rows through the interpreter are too slow")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("N", [32, 4096, 16384, 16385, 32768, 50257, 262144])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_gpu_gradients_match_torch(name, N, dtype):
    fn, torch_fn = FUNCTIONS[name]
    x, _ = fresh_randn(16, N, dtype=dtype)
    x.requires_grad_()
    dy, _ = fresh_randn(16, N, dtype=dtype)
    y = fn(x, scale=0.5)
    (dx,) = torch.autograd.grad(y, x, dy)
    assert_grad_matches(dx, grad_of_output(y, dy, name == "log_softmax", scale=0.5), dtype)
    # torch's own gradient, computed in fp32 from x: within a rounding of y (softmax: ≤ 1, log_softmax: its size)
    (torch_dx,) = torch.autograd.grad(torch_fn(x.float() * 0.5, dim=-1), x, dy.float())
    y_rounding = 2 * GRAD_RTOL[dtype] * (1 if name == "softmax" else float(y.detach().abs().max()))
    torch.testing.assert_close(dx.float(), torch_dx.to(dx.dtype).float(), rtol=GRAD_RTOL[dtype],
                               atol=y_rounding * float(dy.abs().max()))


@pytest.mark.skipif(DEVICE != "cuda", reason="registers are known only for compiled kernels")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fused_backward_does_not_spill_up_to_its_declared_limit(dtype):
    y = torch.softmax(torch.randn(64, fused_backward.MAX_N, device="cuda"), dim=-1).to(dtype)
    for fusion in (Fusion(), Fusion(scale=0.5, causal_m=64, log=True)):
        _, launch = fused_backward.launch(y, torch.randn_like(y), fusion)
        assert launch.n_regs is not None and launch.n_regs <= 255
        assert launch.n_spills == 0


def test_fused_backward_tiles_give_a_thread_one_16_byte_vector_of_short_rows():
    """Short rows share a program of 4096 values, in 32 warps for fp32 and 16 for 16-bit dtypes: a thread holds 16
    bytes of y and 16 of dy; a masked or causal log_softmax's rows up to 1024 wide, half the warps and 32 bytes of
    each (not the plain or scaled log's). A row a program: 16 warps, 32 past 8192 values (at most 16 of each a
    thread). A few short rows: a program no bigger than they are, 4 warps at least. Every load evict_last."""
    for dtype, warps in ((torch.float32, 32), (torch.bfloat16, 16), (torch.float16, 16)):
        for N in (32, 100, 128, 512, 2048):
            config = fused_backward.launch_config(1 << 20, N, dtype)
            assert config["BLOCK_N"] * config["ROWS"] == 4096 and config["num_warps"] == warps, (dtype, N, config)
        for N in (32, 512, 1024):  # a masked or causal log_softmax's: two vectors of each a thread, half the warps
            config = fused_backward.launch_config(1 << 20, N, dtype, masked_log=True)
            assert config["BLOCK_N"] * config["ROWS"] == 4096 and config["num_warps"] == warps // 2, (dtype, N, config)
        assert fused_backward.launch_config(1 << 20, 2048, dtype, masked_log=True)["num_warps"] == warps
        rows = [fused_backward.launch_config(1 << 20, N, dtype) for N in (4000, 8192, 16384)]
        assert [(c["ROWS"], c["num_warps"]) for c in rows] == [(1, 16), (1, 16), (1, 32)], (dtype, rows)
        assert {c["EVICT"] for N in (32, 4000, 16384) for c in [fused_backward.launch_config(64, N, dtype)]} == \
            {"evict_last"}
    assert fused_backward.launch_config(3, 37, torch.float32) == {"BLOCK_N": 64, "ROWS": 4, "num_warps": 4,
                                                                  "EVICT": "evict_last"}
    y, dy = torch.softmax(fresh_randn(3, 37)[0], -1), fresh_randn(3, 37)[0]
    dx, launch = fused_backward.launch(y, dy)
    assert launch.config == fused_backward.launch_config(3, 37, torch.float32)
    assert_grad_matches(dx, grad_of_output(y, dy, False), torch.float32)
    log_y = torch.log_softmax(fresh_randn(64, 512)[0], -1)
    for fusion, halved in ((Fusion(log=True, causal_m=64), True), (Fusion(log=True, mask=log_y > -7), True),
                           (Fusion(log=True), False), (Fusion(log=True, scale=0.5), False), (Fusion(), False)):
        _, launch = fused_backward.launch(log_y, torch.randn_like(log_y), fusion)
        assert launch.config == fused_backward.launch_config(64, 512, torch.float32, masked_log=halved), fusion


def test_fused_backward_compiled_for_sm90_loads_evict_last():
    """Compiled for the H200 without a GPU, as launch_config configures it: y and dy each in one 16-byte vector a
    thread, marked evict_last for L1 and L2, and no spills (bf16 4096, fp32 128); a causal or masked log's rows of
    1024 and 512 in two vectors of each a thread, no spills either (the causal rows' y read only up to their
    diagonal, whole vectors still)."""
    code = """
import os, re, tempfile
from tests.compile_sm90 import compiled_for_sm90, fused_backward_source
for dtype, name, N, form in (("bf16", "bf16", 4096, {}), ("fp32", "fp32", 128, {}),
                             ("bf16", "bf16-causal-log", 1024, {"CAUSAL": True, "LOG": True, "READ_KEPT": True,
                                                                "SKIP_MASKED": True, "REVERSED": True}),
                             ("fp32", "fp32-masked-log", 512, {"HAS_MASK": True, "LOG": True})):
    source, warps = fused_backward_source(N, dtype, form, masked_log=bool(form))
    with tempfile.TemporaryDirectory() as out:
        ptx, _, spill_bytes, _ = compiled_for_sm90(source, {"num_warps": warps}, os.path.join(out, "k.ptx"))
    print(name, len(re.findall(r"ld\\.global\\.L1::evict_last\\.L2::cache_hint\\.v4\\.b32", ptx)),
          len(re.findall(r"ld\\.global", ptx)), spill_bytes)
"""
    lines = printed_without_interpreter("-c", code, timeout=300)
    assert [line.split()[0] for line in lines] == ["bf16", "fp32", "bf16-causal-log", "fp32-masked-log"], lines
    vectors = {"bf16": 2, "fp32": 2, "bf16-causal-log": 4, "fp32-masked-log": 4}  # y's and dy's, one or two each
    for line in lines:
        name, evict_last_v4, loads, spill_bytes = line.split()
        assert int(evict_last_v4) == vectors[name] and int(spill_bytes) == 0, line
        assert int(loads) == vectors[name] or name == "fp32-masked-log", line  # (the mask's bytes besides)


def test_the_causal_backwards_skipping_forms_compile_for_sm90_with_a_mask_beside():
    """fused's backward with SKIP_MASKED and READ_KEPT (causal rows) and a keep-mask beside, shared or not, softmax
    and log: compiled for sm_90 without spills. Triton's interpreter does not check what its compiler does: a name
    set before the skip's branch keeps its type in both (a shared mask's rows, a block of pointers, failed there on
    the GPU)."""
    code = """
import os, tempfile
from tests.compile_sm90 import compiled_for_sm90, fused_backward_source
skipping = {"CAUSAL": True, "HAS_MASK": True, "SKIP_MASKED": True, "READ_KEPT": True, "REVERSED": True}
for name, form in (("shared", {"MASK_SHARED": True}), ("shared-log", {"MASK_SHARED": True, "LOG": True}),
                   ("log", {"LOG": True}), ("mask", {})):
    source, warps = fused_backward_source(1024, "bf16", {**skipping, **form}, masked_log=bool(form.get("LOG")))
    with tempfile.TemporaryDirectory() as out:
        _, _, spill_bytes, _ = compiled_for_sm90(source, {"num_warps": warps}, os.path.join(out, "k.ptx"))
    print(name, spill_bytes)
"""
    assert printed_without_interpreter("-c", code, timeout=300) == ["shared 0", "shared-log 0", "log 0", "mask 0"]


@SM90_CODE_OF_TRITON_38
def test_the_scaled_backward_compiles_to_no_more_instructions_than_the_plain_one():
    """A scale fused into the backward costs no instruction an element: dx = y · (dy · scale − Σ · scale) is an
    fma and a multiply, as the plain y · (dy − Σ) is a subtraction and a multiply (with the scale applied last, bf16
    16384×8192's kernel had 240 SASS instructions against the plain one's 224, and its H200 grid ran 2.3 points
    under the plain backward's). Compiled for sm_90 as launch_config configures bf16 rows of 8192, and of 4000 (N
    not a multiple of 16)."""
    code = """
import os, re, subprocess, tempfile
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, fused_backward_source, sass_instructions
for N in (8192, 4000):
    for scaled in (False, True):
        source, warps = fused_backward_source(N, "bf16", {"HAS_SCALE": scaled})
        with tempfile.TemporaryDirectory() as out:
            path = os.path.join(out, "k.ptx")
            _, report, spill_bytes, _ = compiled_for_sm90(source, {"num_warps": warps}, path)
            sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
        print(N, int(scaled), len(sass_instructions(sass)), re.search(r"Used (\\d+) registers", report)[1], spill_bytes)
"""
    lines = [line.split() for line in printed_without_interpreter("-c", code, timeout=300)]
    assert [(N, scaled) for N, scaled, *_ in lines] == [("8192", "0"), ("8192", "1"), ("4000", "0"), ("4000", "1")]
    for (_, _, plain, plain_registers, _), (_, _, scaled, registers, spill_bytes) in zip(lines[::2], lines[1::2]):
        assert int(plain) > 100 and int(scaled) <= int(plain), lines
        assert int(registers) <= int(plain_registers) and spill_bytes == "0", lines


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA's synchronization debug mode")
@pytest.mark.parametrize("variant", ["auto", "fused", "two_pass"])
def test_a_training_step_waits_for_the_gpu_nowhere(variant):
    """A masked, scaled softmax's forward and backward with torch's synchronization debug mode set to fail on any
    host wait (a .item(), a bool of a GPU value, a blocking copy), after a first step that compiles the kernels:
    inside a model, the host must keep its lead over the GPU."""
    x, _ = fresh_randn(64, 4000, dtype=torch.bfloat16)
    keep = torch.rand(64, 4000, device=DEVICE) > 0.2
    dy = torch.randn_like(x)
    xg = x.clone().requires_grad_()
    softmax_bench.softmax(xg, scale=0.125, mask=keep, variant=variant).backward(dy)  # the kernels compiled
    xg.grad = None
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        y = softmax_bench.softmax(xg, scale=0.125, mask=keep, variant=variant)
        y.backward(dy)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert_grad_matches(xg.grad, grad_of_output(y, dy, False, scale=0.125, keep=keep), torch.bfloat16)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_a_meta_x_gets_a_meta_gradient(log, monkeypatch):
    """A model run on the meta device (shapes only: torch.device("meta") initialisation, shape checks) takes the
    backward too, as torch's softmax does, with every fusion: x's and the bias's gradients are meta tensors of their
    shapes. The backward ran its kernel on meta tensors (the interpreter: `Cannot copy out of meta tensor`), then,
    on a GPU, refused them (`the Triton variant 'fused' needs a CUDA tensor`): the interpreter is turned off here as a
    GPU has it, which the CPU suite's interpreter let through."""
    monkeypatch.setattr(softmax_bench.dispatch, "interpreted", lambda: False)
    softmax_bench.dispatch.clear_caches()
    x = torch.randn(2, 3, 4, 6, device="meta", requires_grad=True)
    bias = torch.randn(3, 4, 6, device="meta", requires_grad=True)
    mask = torch.ones(2, 1, 1, 6, dtype=torch.bool, device="meta")
    for fusions in ({}, {"scale": 0.5, "mask": mask}, {"causal": True, "bias": bias}):
        y = FUNCTIONS["log_softmax" if log else "softmax"][0](x, -1, **fusions)
        grads = torch.autograd.grad(y, (x, bias) if "bias" in fusions else (x,), torch.ones_like(y))
        assert [(g.device.type, g.shape) for g in grads] == [("meta", t.shape) for t in (x, bias)][:len(grads)]
