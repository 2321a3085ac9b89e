"""softmax_bench::softmax and ::log_softmax as registered torch ops: torch.compile traces them with no graph break
(static and dynamic shapes, scale, mask, causal, the backward), opcheck passes, and a plain eager call stays off
the dispatcher. On CPU through aot_eager and the interpreter; on a GPU through inductor and CUDA graphs."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import softmax_bench
from softmax_bench.kernels import TOLERANCES

from .conftest import DEVICE
from .test_kernels import fresh_randn

BACKEND = "inductor" if DEVICE == "cuda" else "aot_eager"
FUNCTIONS = [softmax_bench.softmax, softmax_bench.log_softmax]


def attention_scores(fn):
    return lambda x, keep, bias: fn(x, scale=0.125, mask=keep, causal=True, bias=bias)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_forward_and_backward_match_eager_in_one_graph(fn, dynamic):
    torch._dynamo.reset()
    scores = attention_scores(fn)
    compiled = torch.compile(scores, fullgraph=True, backend=BACKEND, dynamic=dynamic)
    for M, N in ((8, 40), (16, 72)):  # a second shape: dynamic reuses the graph, static traces again
        x, _ = fresh_randn(2, M, N)
        keep = torch.rand(N, device=DEVICE) > 0.2
        bias = torch.randn(M, N, device=DEVICE, requires_grad=True)  # a bias for each query, shared by the batch
        x.requires_grad_()
        y = compiled(x, keep, bias)
        expected = scores(x, keep, bias)
        torch.testing.assert_close(y, expected, equal_nan=True)
        dy, _ = fresh_randn(2, M, N)
        dx, dbias = torch.autograd.grad(y, (x, bias), dy)
        expected_dx, expected_dbias = torch.autograd.grad(expected, (x, bias), dy)
        torch.testing.assert_close(dx, expected_dx)
        torch.testing.assert_close(dbias, expected_dbias)
    explained = torch._dynamo.explain(scores)(x, keep, bias)
    assert explained.graph_count == 1 and explained.graph_break_count == 0


def test_compiled_model_with_any_dim_and_a_variant():
    torch._dynamo.reset()

    def two_layers(x):
        return softmax_bench.log_softmax(softmax_bench.softmax(x, dim=0, variant="two_pass") * 3.0, dim=-1)

    x, _ = fresh_randn(6, 33)
    torch.testing.assert_close(torch.compile(two_layers, fullgraph=True, backend=BACKEND)(x), two_layers(x))


@pytest.mark.skipif(DEVICE != "cuda", reason="the default grid's 2^27-element shapes: a GPU's")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_a_compiled_two_layer_model_with_a_mask_at_every_shape_of_the_default_grid(dtype):
    """The model a user compiles (softmax with a scale and a keep-mask, then log_softmax of it), one graph, the
    same results as eager at each shape of `--preset default` (rows of 32 to 262144, the vocabulary widths)."""
    from softmax_bench.config import load_config, preset_path, shapes_from

    def two_layers(x, keep):
        return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1)

    torch._dynamo.reset()
    compiled = torch.compile(two_layers, fullgraph=True, dynamic=True)
    shapes = shapes_from(load_config(preset_path("default")), "default")
    assert len(shapes) == 16
    for M, N in shapes:
        x = torch.randn(M, N, device="cuda", dtype=dtype)
        keep = torch.rand(N, device="cuda") > 0.2
        y, expected = compiled(x, keep), two_layers(x, keep)
        atol, rtol = TOLERANCES[dtype]
        torch.testing.assert_close(y, expected, atol=atol, rtol=rtol, msg=lambda m: f"{M}×{N}: {m}")
        del x, y, expected
    explained = torch._dynamo.explain(two_layers)(torch.randn(8, 64, device="cuda", dtype=dtype),
                                                  torch.rand(64, device="cuda") > 0.2)
    assert explained.graph_count == 1 and explained.graph_break_count == 0


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_opcheck(op):
    x, _ = fresh_randn(3, 5, 8)
    keep = torch.rand(5, 8, device=DEVICE) > 0.3
    packet = getattr(torch.ops.softmax_bench, op)
    for args in ((x, -1, None, None, False, "auto"), (x.requires_grad_(), 1, 0.5, None, False, "fused"),
                 (x, -1, 2.0, keep, True, "auto"), (x[0], 0, None, None, False, "eager"),
                 (torch.empty(0, 4, device=DEVICE), -1, None, None, False, "auto"),
                 (x, -1, 0.5, keep, False, "auto", None, torch.randn(8, device=DEVICE, requires_grad=True))):
        torch.library.opcheck(packet.default, args)


class OpsSeen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.name())
        return func(*args, **(kwargs or {}))


def test_a_plain_eager_call_does_not_go_through_the_dispatcher():
    x, _ = fresh_randn(4, 16)
    with OpsSeen() as seen:
        softmax_bench.softmax(x)
        softmax_bench.log_softmax(x)
    assert not any(name.startswith("softmax_bench::") for name in seen.names)
    with OpsSeen() as seen:
        softmax_bench.softmax(x.requires_grad_())
    assert "softmax_bench::softmax" in seen.names


def test_bad_input_says_what_to_do_under_compile_too():
    compiled = torch.compile(lambda x: softmax_bench.softmax(x, dim=3), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"use a dim in \[-2, 1\]"):
        compiled(torch.ones(2, 3, device=DEVICE))


@pytest.mark.skipif(DEVICE != "cuda", reason="CUDA graphs need a GPU")
@pytest.mark.parametrize("N", [4096, 262144])
def test_cuda_graph_of_a_compiled_model(N):
    """auto passes over split while a graph is captured; the compiled model replays with new inputs."""
    torch._dynamo.reset()
    model = torch.compile(lambda x: softmax_bench.softmax(x * 2.0, scale=0.5), fullgraph=True)
    x = torch.randn(64, N, device="cuda", dtype=torch.bfloat16)
    model(x)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = model(x)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.testing.assert_close(y, torch.softmax(x.float(), dim=-1).to(y.dtype), atol=1e-3, rtol=1.6e-2)
