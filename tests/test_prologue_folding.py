"""A compiled model's softmax_bench.softmax(x * c) runs as softmax(x, scale=c), softmax(x.masked_fill(~keep, -inf))
as softmax(x, mask=keep) and softmax(x.float()) as softmax(x, dtype=torch.float32) (softmax_bench.prologue_folding):
the graph dynamo hands inductor loses the multiply, the masked_fill or the cast, and the values and gradients stay
the model's; two of our calls chained run as torch ops, which inductor fuses (prologue_folding.fuse_chains)."""

import math
import operator

import pytest
import torch

import softmax_bench
from softmax_bench import prologue_folding

from .conftest import DEVICE
from .test_kernels import fresh_randn


def dynamo_graph(fn, *args) -> torch.fx.GraphModule:
    """The graph dynamo traces from fn(*args), before any backend's pass."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=keep, fullgraph=True)(*args)
    (gm,) = graphs
    return gm


def run(gm, **inputs):
    """The graph's output, its inputs given by name (dynamo orders its placeholders as the code first reads them)."""
    return gm(*[inputs[node.target[2:-1]] for node in gm.graph.nodes if node.op == "placeholder"])[0]


def calls(gm, *targets):
    return [node for node in gm.graph.nodes if node.target in targets]


FOLDED = {  # model → the scale its call of ours runs with once folded
    "x * c": (lambda x: softmax_bench.softmax(x * 0.5), 0.5),
    "c * x, given a scale": (lambda x: softmax_bench.softmax(3.0 * x, scale=0.25), 0.75),
    "x / c, log_softmax": (lambda x: softmax_bench.log_softmax(x / 8.0, dim=-1), 0.125),
    "x.mul(c), masked": (lambda x: softmax_bench.softmax(x.mul(2), mask=x > 0), 2.0),
    "torch.mul(x, c), causal": (lambda x: softmax_bench.softmax(torch.mul(x, -1.5), causal=True), -1.5),
}


@pytest.mark.parametrize("model", FOLDED)
def test_a_multiply_by_a_number_goes_into_the_scale(model):
    fn, scale = FOLDED[model]
    x, _ = fresh_randn(4, 16)
    gm = dynamo_graph(fn, x)
    assert prologue_folding.fold_prologues(gm.graph) == 1
    gm.recompile()
    (ours,) = calls(gm, softmax_bench.softmax, softmax_bench.log_softmax)
    assert ours.kwargs["scale"] == scale
    assert not calls(gm, operator.mul, operator.truediv, torch.mul, "mul")  # the multiply is gone
    torch.testing.assert_close(run(gm, x=x), fn(x), rtol=1e-6, atol=1e-6)


def product_used_twice(x):
    p = x * 2.0
    return softmax_bench.softmax(p) + p


KEPT = {  # models whose multiply stays
    "the product used twice": product_used_twice,
    "a tensor factor": lambda x: softmax_bench.softmax(x * x),
    "an int tensor made float": lambda x: softmax_bench.softmax(x.int() * 0.5),
    "floor division": lambda x: softmax_bench.softmax(torch.div(x, 2.0, rounding_mode="floor")),
    "a product broadcast": lambda x: softmax_bench.softmax(x * torch.ones(2, 1, 16, device=DEVICE)),
    "an infinite factor": lambda x: softmax_bench.softmax(x * float("inf")),
}


@pytest.mark.parametrize("model", KEPT)
def test_a_multiply_that_is_not_a_scale_stays(model):
    x, _ = fresh_randn(4, 16)
    gm = dynamo_graph(KEPT[model], x)
    nodes = len(gm.graph.nodes)
    assert prologue_folding.fold_prologues(gm.graph) == 0
    assert len(gm.graph.nodes) == nodes


MINUS_INF = float("-inf")
MASK_FOLDED = {  # model(x, keep) → (how many folds, the mask its call gets: "keep", or "not" a logical_not, scale)
    "x.masked_fill(~keep, -inf)": (lambda x, keep: softmax_bench.softmax(x.masked_fill(~keep, MINUS_INF)), 1,
                                   "keep", None),
    "torch.masked_fill(x, keep == 0, -inf), log": (lambda x, keep: softmax_bench.log_softmax(
        torch.masked_fill(x, keep == 0, MINUS_INF)), 1, "not", None),
    "(x * c).masked_fill(~keep, -inf), causal": (lambda x, keep: softmax_bench.softmax(
        (x * 0.125).masked_fill(~keep, MINUS_INF), causal=True), 2, "keep", 0.125),
    "x.masked_fill(~keep, -inf) * c, a row's keep broadcast": (lambda x, keep: softmax_bench.softmax(
        x.masked_fill(~keep[:1], MINUS_INF) * 4.0), 2, "keep", 4.0),
}


@pytest.mark.parametrize("model", MASK_FOLDED)
def test_a_minus_inf_fill_goes_into_the_mask(model):
    fn, folds, mask, scale = MASK_FOLDED[model]
    x, _ = fresh_randn(4, 16)
    keep = torch.rand(4, 16, device=DEVICE) > 0.3
    keep[1] = False  # a row masked whole: zeros either way
    gm = dynamo_graph(fn, x, keep)
    assert prologue_folding.fold_prologues(gm.graph) == folds
    gm.recompile()
    (ours,) = calls(gm, softmax_bench.softmax, softmax_bench.log_softmax)
    given = ours.kwargs["mask"]
    assert given.target == torch.logical_not if mask == "not" else given.op in ("placeholder", "call_function")
    assert ours.kwargs.get("scale") == scale
    assert not calls(gm, torch.masked_fill, "masked_fill", operator.invert, operator.mul)
    torch.testing.assert_close(run(gm, x=x, keep=keep), fn(x, keep), rtol=1e-6, atol=1e-6)


def used_twice(x, keep):
    filled = x.masked_fill(~keep, MINUS_INF)
    return softmax_bench.softmax(filled) + filled


MASK_KEPT = {  # model(x, keep) → the folds that do happen (a multiply's)
    "a negative scale after": (lambda x, keep: softmax_bench.softmax(x.masked_fill(~keep, MINUS_INF),
                                                                     scale=-1.0), 0),
    "times a negative number after": (lambda x, keep: softmax_bench.softmax(
        x.masked_fill(~keep, MINUS_INF) * -2.0), 1),
    "filled with the dtype's minimum": (lambda x, keep: softmax_bench.softmax(
        x.masked_fill(~keep, torch.finfo(x.dtype).min)), 0),
    "a call with a mask of its own": (lambda x, keep: softmax_bench.softmax(x.masked_fill(~keep, MINUS_INF),
                                                                            mask=keep.flip(0)), 0),
    "a call with a bias": (lambda x, keep: softmax_bench.softmax(x.masked_fill(~keep, MINUS_INF), bias=x * 0), 0),
    "the filled tensor used twice": (used_twice, 0),
}


@pytest.mark.parametrize("model", MASK_KEPT)
def test_a_fill_that_is_not_a_mask_stays(model):
    fn, folds = MASK_KEPT[model]
    x, _ = fresh_randn(4, 16)
    keep = torch.rand(4, 16, device=DEVICE) > 0.3
    gm = dynamo_graph(fn, x, keep)
    assert prologue_folding.fold_prologues(gm.graph) == folds
    gm.recompile()
    assert len(calls(gm, "masked_fill")) == 1
    torch.testing.assert_close(run(gm, x=x, keep=keep), fn(x, keep), rtol=1e-6, atol=1e-6, equal_nan=True)


CAST_FOLDED = {  # model(x) of a bf16 x → how many folds (the cast's and a multiply's)
    "softmax(x.float())": (lambda x: softmax_bench.softmax(x.float()), 1),
    "log_softmax(x.to(torch.float32), -1, None)": (lambda x: softmax_bench.log_softmax(x.to(torch.float32), -1, None),
                                                   1),
    "softmax(x.float() * c, mask)": (lambda x: softmax_bench.softmax(x.float() * 0.5, mask=x > 0), 2),
}
CAST_KEPT = {
    "a dtype given to the call": lambda x: softmax_bench.softmax(x.float(), dtype=torch.float32),
    "a cast to fp16": lambda x: softmax_bench.softmax(x.to(torch.float16)),
    "a cast with a device": lambda x: softmax_bench.softmax(x.to(DEVICE, torch.float32)),
    "a cast of fp32": lambda x: softmax_bench.softmax(x.float().float()),
}


@pytest.mark.parametrize("model", [*CAST_FOLDED, *CAST_KEPT])
def test_a_16_bit_tensor_cast_to_fp32_becomes_the_calls_dtype(model):
    fn, folds = CAST_FOLDED.get(model, (CAST_KEPT.get(model), 0))
    x, _ = fresh_randn(4, 16, dtype=torch.bfloat16)
    gm = dynamo_graph(fn, x)
    assert prologue_folding.fold_prologues(gm.graph) == folds
    gm.recompile()
    (ours,) = calls(gm, softmax_bench.softmax, softmax_bench.log_softmax)
    if folds:
        assert ours.kwargs["dtype"] == torch.float32 and ours.args[0].op == "placeholder"
    y = run(gm, x=x)
    assert y.dtype == fn(x).dtype
    torch.testing.assert_close(y, fn(x), rtol=1e-6, atol=1e-6)


def two_layers_written_as_torch(x, keep):  # step-host.py's torch model, with softmax_bench's functions
    return softmax_bench.log_softmax(softmax_bench.softmax((x * 0.125).masked_fill(~keep, MINUS_INF)) * 4.0)


def torchs_two_layers(x, keep):  # step-host.py's torch model
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, MINUS_INF), -1) * 4.0, -1)


@pytest.mark.skipif(DEVICE != "cpu", reason="inductor on CPU: the GPU's compile tests run inductor throughout")
def test_inductor_folds_it_and_the_model_keeps_its_values_and_gradients(monkeypatch):
    """Through inductor (on CPU here): the pass installed at the first trace, the model's forward and x's gradient
    those of the eager model in float64, with the products rounded nowhere."""
    from torch._inductor import config

    monkeypatch.setattr(config, "pre_grad_custom_pass", None)
    prologue_folding.install.cache_clear()
    folded = []
    monkeypatch.setattr(prologue_folding, "fold_prologues", lambda graph, fold=prologue_folding.fold_prologues:
                        folded.append(fold(graph)) or folded[-1])

    x, _ = fresh_randn(6, 40)
    keep = torch.rand(6, 40) > 0.2
    x.requires_grad_()
    torch._dynamo.reset()
    y = torch.compile(two_layers_written_as_torch, fullgraph=True)(x, keep)
    assert isinstance(config.pre_grad_custom_pass, torch._inductor.custom_graph_pass.CustomGraphPass)
    assert folded == [3]  # the multiply and the fill into the softmax, the multiply into log_softmax
    dy, _ = fresh_randn(6, 40)
    (dx,) = torch.autograd.grad(y, x, dy)
    x64 = x.detach().double().requires_grad_()
    y64 = torchs_two_layers(x64, keep)
    (dx64,) = torch.autograd.grad(y64, x64, dy.double())
    torch.testing.assert_close(y.double(), y64, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dx.double(), dx64, rtol=1e-5, atol=1e-5)
    prologue_folding.install.cache_clear()


def test_a_pass_the_user_set_is_left_alone(monkeypatch):
    from torch._inductor import config

    theirs = object()
    monkeypatch.setattr(config, "pre_grad_custom_pass", theirs)
    prologue_folding.install.cache_clear()
    assert not prologue_folding.install() and config.pre_grad_custom_pass is theirs
    prologue_folding.install.cache_clear()


CHAINS = {  # model(x, keep) → how many of its calls become unfused (a chain's: both; else none)
    "log_softmax(softmax(x, mask) * c)": (lambda x, keep: softmax_bench.log_softmax(
        softmax_bench.softmax(x, scale=0.5, mask=keep) * 4.0), 2),
    "softmax(softmax(x))": (lambda x, keep: softmax_bench.softmax(softmax_bench.softmax(x, causal=True)), 2),
    "one call": (lambda x, keep: softmax_bench.softmax(x * 2.0, mask=keep), 0),
    "a variant given": (lambda x, keep: softmax_bench.log_softmax(softmax_bench.softmax(x, mask=keep),
                                                                  variant="fused"), 0),
    "a pointwise op between them": (lambda x, keep: softmax_bench.log_softmax(softmax_bench.softmax(x) * x), 0),
    "softmax(x + b)": (lambda x, keep: softmax_bench.softmax(x + torch.where(keep, 0.0, -1e4), mask=keep), 1),
    "log_softmax(x.sub(b)), causal": (lambda x, keep: softmax_bench.log_softmax(x.sub(x.flip(0)), causal=True), 1),
    "softmax(x + b), the sum used twice": (lambda x, keep: (lambda s: softmax_bench.softmax(s) + s)(x + x.flip(0)),
                                           0),
    "softmax(x + 1.0)": (lambda x, keep: softmax_bench.softmax(x + 1.0), 0),
}


@pytest.mark.parametrize("large", [False, True], ids=["a small x", "a large x of narrow rows"])
@pytest.mark.parametrize("model", CHAINS)
def test_a_chain_of_our_calls_runs_as_torch_ops(monkeypatch, model, large):
    """fuse_chains: a call of ours whose x is another's, both auto, on CHAIN_DEVICES within the CHAIN_ rules (here
    4 × 16 fp32: 256 bytes, rows of 16), gets the unfused variant (torch ops inductor fuses); nothing else changes,
    values included."""
    fn, chained = CHAINS[model]
    monkeypatch.setattr(prologue_folding, "CHAIN_DEVICES", (torch.device(DEVICE).type,))
    if large:
        monkeypatch.setattr(prologue_folding, "CHAIN_HOST_BOUND_BYTES", 255)
        monkeypatch.setattr(prologue_folding, "CHAIN_GPU_FASTER_N", {4: 16})
        monkeypatch.setattr(prologue_folding, "SUM_GPU_FASTER_N", {4: 16})
    x, _ = fresh_randn(4, 16)
    keep = torch.rand(4, 16, device=DEVICE) > 0.3
    keep[2] = False  # a row masked whole: zeros, as the Triton variants give, not torch's NaN
    gm = dynamo_graph(fn, x, keep)
    prologue_folding.fold_and_fuse(gm.graph)
    gm.recompile()
    ours = calls(gm, softmax_bench.softmax, softmax_bench.log_softmax)
    assert sum(node.kwargs.get("variant") == "unfused" for node in ours) == chained
    torch.testing.assert_close(run(gm, x=x, keep=keep), fn(x, keep), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("why", ["rows wider than CHAIN_MAX_N", "a large x of rows wider than the GPU's rule",
                                 "another device", "switched off"])
def test_a_chain_stays_our_kernels_past_the_rule(monkeypatch, why):
    monkeypatch.setattr(prologue_folding, "CHAIN_DEVICES", ("meta",) if why == "another device" else
                        (torch.device(DEVICE).type,))
    monkeypatch.setattr(prologue_folding, "CHAIN_MAX_N", 15 if why.startswith("rows") else 16)
    if why.startswith("a large x"):  # 4 × 16 fp32: over 255 bytes, rows wider than 15
        monkeypatch.setattr(prologue_folding, "CHAIN_HOST_BOUND_BYTES", 255)
        monkeypatch.setattr(prologue_folding, "CHAIN_GPU_FASTER_N", {4: 15, 2: 15})
        monkeypatch.setattr(prologue_folding, "SUM_GPU_FASTER_N", {4: 15, 2: 15})
    monkeypatch.setattr(prologue_folding, "FUSE_CHAINS", why != "switched off")
    x, _ = fresh_randn(4, 16)
    for fn, n in ((two_layers_written_as_torch, 2), (lambda x, keep: softmax_bench.softmax(x + x.flip(0)), 1)):
        gm = dynamo_graph(fn, x, torch.rand(4, 16, device=DEVICE) > 0.3)
        prologue_folding.fold_and_fuse(gm.graph)
        ours = calls(gm, softmax_bench.softmax, softmax_bench.log_softmax)
        assert len(ours) == n and not any(node.kwargs.get("variant") for node in ours)


def generated_kernels(code: str) -> list[str]:
    """The kernels inductor's output code defines: its C++ ones on a CPU, its Triton ones on a GPU, and ours."""
    import re

    return re.findall(r"^(cpp_fused_\w+|triton_\w+) = ", code, re.M) + re.findall(r"fused_rows_kernel|"
                                                                                 r"fused_backward_kernel", code)


def test_inductor_fuses_a_chain_into_one_kernel_each_way_as_it_fuses_torchs(monkeypatch):
    """step-host.py's model written as torch's with our functions, through inductor: as many kernels a direction
    as torch's own model (one), none of ours; the values and x's gradient float64 torch's, and a row masked whole
    softmax_bench's (the log of a uniform row: zeros times 4), not NaN."""
    from torch._inductor import config
    from torch._inductor.utils import run_and_get_code

    monkeypatch.setattr(config, "pre_grad_custom_pass", None)
    monkeypatch.setattr(prologue_folding, "CHAIN_DEVICES", (torch.device(DEVICE).type,))
    prologue_folding.install.cache_clear()
    x, _ = fresh_randn(6, 40)
    keep = torch.rand(6, 40, device=DEVICE) > 0.2
    keep[3] = False
    dy, _ = fresh_randn(6, 40)
    x.requires_grad_()
    kernels, results = {}, {}
    for name, fn in (("ours", two_layers_written_as_torch), ("torch's", torchs_two_layers)):
        torch._dynamo.reset()
        model = torch.compile(fn, fullgraph=True)
        results[name], codes = run_and_get_code(lambda: (y := model(x, keep), *torch.autograd.grad(y, x, dy)))
        kernels[name] = [generated_kernels(code) for code in codes]
    y, dx = results["ours"]
    assert [len(each) for each in kernels["ours"]] == [len(each) for each in kernels["torch's"]] == [1, 1], kernels
    x64 = x.detach().double().requires_grad_()
    y64 = torchs_two_layers(x64, keep)
    (dx64,) = torch.autograd.grad(y64, x64, dy.double())
    torch.testing.assert_close(y[[0, 1, 2, 4, 5]].double(), y64[[0, 1, 2, 4, 5]], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dx.double(), dx64.nan_to_num(0.0), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(y[3], torch.full_like(y[3], -math.log(40)))
    prologue_folding.install.cache_clear()


def test_inductor_fuses_a_sum_before_our_call_and_keeps_torchs_values(monkeypatch):
    """softmax(scores + bias) through inductor: as many kernels a direction as torch.softmax(scores + bias)'s (one),
    none of ours, the values and both gradients float64 torch's, and a row whose bias is the dtype's minimum
    everywhere uniform, as torch's sum gives it (bias= would mask it out: zeros)."""
    from torch._inductor import config
    from torch._inductor.utils import run_and_get_code

    monkeypatch.setattr(config, "pre_grad_custom_pass", None)
    monkeypatch.setattr(prologue_folding, "CHAIN_DEVICES", (torch.device(DEVICE).type,))
    prologue_folding.install.cache_clear()
    x, _ = fresh_randn(6, 40)
    bias, _ = fresh_randn(6, 40)
    bias[2] = torch.finfo(bias.dtype).min
    dy, _ = fresh_randn(6, 40)
    x.requires_grad_()
    bias.requires_grad_()
    kernels, results = {}, {}
    for name, fn in (("ours", lambda x, b: softmax_bench.softmax(x + b)),
                     ("torch's", lambda x, b: torch.softmax(x + b, -1))):
        torch._dynamo.reset()
        model = torch.compile(fn, fullgraph=True)
        results[name], codes = run_and_get_code(lambda: (y := model(x, bias), *torch.autograd.grad(y, (x, bias), dy)))
        kernels[name] = [generated_kernels(code) for code in codes]
    assert [len(each) for each in kernels["ours"]] == [len(each) for each in kernels["torch's"]] == [1, 1], kernels
    x64, bias64 = (t.detach().double().requires_grad_() for t in (x, bias))
    y64 = torch.softmax(x64 + bias64, -1)
    expected = (y64, *torch.autograd.grad(y64, (x64, bias64), dy.double()))
    for got, want in zip(results["ours"], expected):
        torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(results["ours"][0][2], torch.full_like(x[2], 1 / 40))
    prologue_folding.install.cache_clear()
