"""softmax_bench::softmax and ::log_softmax as registered torch ops: torch.compile traces them with no graph break
(static and dynamic shapes, scale, mask, causal, the backward), opcheck passes, and a plain eager call stays off
the dispatcher. On CPU through aot_eager and the interpreter; on a GPU through inductor and CUDA graphs."""

import json
import re
from pathlib import Path

import pytest
import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

import softmax_bench
from softmax_bench import library
from softmax_bench.dispatch import fusion_for
from softmax_bench.kernels import TOLERANCES, eager, eager_backward

from .compile_sm90 import printed_without_interpreter
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


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_compiled_causal_rows_taken_unshifted_match_eager(fn, dynamic):
    """Causal 16-bit rows of a 4096-wide tile (fused.SHIFTLESS_TILES): inductor copies fused's kernel and what it
    calls into its own code (the unshifted pass, its fallback, their constants) and gives the eager call's y, bit for
    bit where the width is static (a traced width launches the shifted form: within rounding)."""
    torch._dynamo.reset()
    causal = lambda x: fn(x, scale=0.125, causal=True)  # noqa: E731
    x, _ = fresh_randn(2, 8, 4000, dtype=torch.bfloat16)
    x[0, 3] -= 2000  # a row whose sum leaves the unshifted range: its fallback
    y = torch.compile(causal, fullgraph=True, backend=BACKEND, dynamic=dynamic)(x)
    torch.testing.assert_close(y, causal(x), equal_nan=True, **({} if dynamic else {"atol": 0, "rtol": 0}))


def test_compiled_model_with_any_dim_and_a_variant():
    torch._dynamo.reset()

    def two_layers(x):
        return softmax_bench.log_softmax(softmax_bench.softmax(x, dim=0, variant="two_pass") * 3.0, dim=-1)

    x, _ = fresh_randn(6, 33)
    torch.testing.assert_close(torch.compile(two_layers, fullgraph=True, backend=BACKEND)(x), two_layers(x))


def guards_of(fn, *args) -> str:
    """The guards dynamo checks before each call of torch.compile(fn), as text (a line each)."""
    torch._dynamo.reset()
    torch.compile(fn, backend=BACKEND, dynamic=False)(*args)
    entry, = _debug_get_cache_entry_list(fn.__code__)
    return str(entry.guard_manager)


def test_a_compiled_call_checks_the_guards_of_a_torch_softmax_call_and_none_on_softmax_bench_s_python():
    """Dynamo writes a call of softmax_bench.softmax into its graph without tracing its Python (allow_in_graph), so
    a compiled call checks no guard on softmax_bench's helpers: 68 guard lines before, 4.1 µs a check on a CPU. One
    line more than torch.softmax's call: a Python function is matched by its __code__, a builtin by itself."""
    x, _ = fresh_randn(4, 40)
    ours = guards_of(lambda x: softmax_bench.softmax(x, scale=0.5), x)
    theirs = guards_of(lambda x: torch.softmax(x * 0.5, -1), x)
    ours_files = [str(path) for path in Path(softmax_bench.__file__).parent.rglob("*.py")]
    sources = re.findall(r"# .*  # (\S+\.py):\d+ in \S+$", ours, re.M)  # each guard's line of code, by file
    assert sources and not [f for f in sources if any(path.endswith(f) for path in ours_files)], ours
    assert ours.count("\n") <= theirs.count("\n") + 1, ours


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_a_compiled_model_follows_the_arguments_it_passes_from_call_to_call(dynamic):
    """What softmax decides from its arguments, untraced by dynamo, is still guarded: a scale, a mask or none, a dim
    and a variant that change between calls of one compiled model give each call its own result."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, s, m, d, v: softmax_bench.log_softmax(x, d, scale=s, mask=m, variant=v),
                             backend=BACKEND, dynamic=dynamic)
    x, _ = fresh_randn(3, 8, 40)
    keep = torch.rand(40, device=DEVICE) > 0.3
    for s, m, d, v in ((0.5, None, -1, "auto"), (2.0, keep, -1, "auto"), (2.0, None, 1, "auto"),
                       (0.5, keep, -1, "eager"), (3.0, keep, -1, "two_pass")):
        expected = softmax_bench.log_softmax(x, d, scale=s, mask=m, variant=v)
        torch.testing.assert_close(compiled(x, s, m, d, v), expected,
                                   msg=f"scale {s}, mask {m is not None}, dim {d}, {v}")


def test_a_compiled_call_reaches_the_op_where_is_compiling_is_false_while_aotautograd_traces(monkeypatch):
    """AOTAutograd runs softmax's Python on fake and functional tensors. Under torch 2.11 (the device's)
    torch.compiler.is_compiling() is False there: the call is known as traced by its tensor, reaches the registered
    op, and launches nothing on a fake tensor. is_compiling made False throughout stands in for 2.11."""
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: False)
    torch._dynamo.reset()
    x, _ = fresh_randn(4, 40)
    compiled = torch.compile(lambda x: softmax_bench.softmax(x, scale=0.5), backend=BACKEND, fullgraph=True)
    torch.testing.assert_close(compiled(x), softmax_bench.softmax(x, scale=0.5))


def test_a_causal_mask_built_on_fake_tensors_is_not_kept_for_the_next_eager_call(monkeypatch):
    """AOTAutograd traces the eager variant's in-graph ops (forward and backward) on fake tensors, where torch 2.11's
    is_compiling() is False. The causal mask built there is not kept, so the next eager call on those rows, forward
    and backward, gets a real one (it had been handed the fake one)."""
    monkeypatch.setattr(torch.compiler, "is_compiling", lambda: False)  # as while torch 2.11's AOTAutograd traces
    eager.kept_causal_mask.cache_clear()
    x, _ = fresh_randn(16, 16)
    fusion = fusion_for(x, -1, None, None, True)
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(x)
        eager.prologue(fake, fusion)
        eager_backward.launch(fake, fake, fusion)
    monkeypatch.undo()
    x.requires_grad_()
    future = torch.ones(16, 16, dtype=torch.bool, device=DEVICE).triu(1)
    y = softmax_bench.softmax(x, causal=True, variant="eager")
    expected = torch.softmax(x.masked_fill(future, float("-inf")), -1)
    torch.testing.assert_close(y, expected)
    dy, _ = fresh_randn(16, 16)
    torch.testing.assert_close(torch.autograd.grad(y, x, dy)[0], torch.autograd.grad(expected, x, dy)[0])


def test_a_launch_put_in_the_graph_hands_triton_none_for_a_pointer_left_at_its_default(monkeypatch):
    """A plain call's launch in a compiled graph gets None for the bias pointer, as an eager launch does, not a
    stand-in tensor: Triton's launcher pays for each tensor it is handed at every call (issue 29). A biased call's
    gets its bias."""
    from softmax_bench.kernels import fused, launches_traced

    handed = []

    class Recorded:  # torch.library.wrap_triton(kernel)[grid](**arguments), recorded rather than traced
        def __init__(self, kernel):
            pass

        def __getitem__(self, grid):
            return lambda **arguments: handed.append(arguments)

    monkeypatch.setattr(torch.library, "wrap_triton", Recorded)
    x, _ = fresh_randn(4, 64)
    bias, _ = fresh_randn(4, 64)
    biased = fusion_for(x, -1, None, None, False, bias=bias)
    with launches_traced():
        fused.launch(x, fusion_for(x, -1, None, None, False))
        fused.launch(x, biased)
    plain, with_bias = handed
    assert plain["bias_ptr"] is None and not plain["HAS_BIAS"]
    assert with_bias["bias_ptr"] is biased.bias and with_bias["HAS_BIAS"]


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


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_opcheck_of_the_opaque_ops_a_graph_calls(op):
    """The opaque ops (library.opaque_op: defined on a Library, not as custom ops, for their call's cost) pass
    opcheck as the ops do: schema, fake tensor, no aliasing of an input."""
    x, _ = fresh_randn(3, 5, 8)
    keep = torch.rand(5, 8, device=DEVICE) > 0.3
    forward = getattr(torch.ops.softmax_bench, f"{op}_opaque").default
    for args in ((x, -1, None, None, False, "auto"), (x, -1, 2.0, keep, True, "auto"),
                 (x, -1, 0.5, keep, False, "fused", None, torch.randn(8, device=DEVICE))):
        torch.library.opcheck(forward, args)
    y = getattr(softmax_bench, op)(x)
    backward = getattr(torch.ops.softmax_bench, f"{op}_backward_opaque").default
    torch.library.opcheck(backward, (y, torch.randn_like(y), -1, 0.5, keep, False, "auto"))


class OpsSeen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.name())
        return func(*args, **(kwargs or {}))


def test_an_eager_call_does_not_go_through_the_dispatcher_with_a_gradient_or_without():
    """An eager call runs the kernels without the registered ops, its backward too (library.EagerAutograd: the ops'
    autograd formula as a torch.autograd.Function), and its gradient is the op's."""
    x, _ = fresh_randn(4, 16)
    with OpsSeen() as seen:
        softmax_bench.softmax(x)
        softmax_bench.log_softmax(x)
    assert not any(name.startswith("softmax_bench::") for name in seen.names)
    dy = torch.randn_like(x)
    for fn, op in ((softmax_bench.softmax, torch.ops.softmax_bench.softmax),
                   (softmax_bench.log_softmax, torch.ops.softmax_bench.log_softmax)):
        eager, through_op = x.clone().requires_grad_(), x.clone().requires_grad_()
        with OpsSeen() as seen:
            fn(eager, scale=0.5).backward(dy)
        assert not any(name.startswith("softmax_bench::") for name in seen.names)
        with OpsSeen() as seen:
            op(through_op, -1, 0.5, None, False, "auto", None, None).backward(dy)
        assert "softmax_bench::softmax_backward" in seen.names or "softmax_bench::log_softmax_backward" in seen.names
        assert torch.equal(eager.grad, through_op.grad)
    # a bias that needs a gradient, a mask, and a 16-bit x written in fp32: the gradients the op gives, bit for bit
    bias, keep, half = torch.randn(1, 16, device=DEVICE), torch.rand(4, 16, device=DEVICE) > 0.3, x.to(torch.bfloat16)
    for fn, op in ((softmax_bench.softmax, torch.ops.softmax_bench.softmax),
                   (softmax_bench.log_softmax, torch.ops.softmax_bench.log_softmax)):
        grads = []
        for run in (lambda t, b: fn(t, scale=0.5, mask=keep, bias=b),
                    lambda t, b: op(t, -1, 0.5, keep, False, "auto", None, b)):
            t, b = x.clone().requires_grad_(), bias.clone().requires_grad_()
            run(t, b).backward(dy)
            grads.append((t.grad, b.grad))
        assert all(torch.equal(ours, theirs) for ours, theirs in zip(*grads))
        grads = []
        for run in (lambda t: fn(t, dtype=torch.float32), lambda t: op(t, -1, None, None, False, "auto",
                                                                        torch.float32, None)):
            t = half.clone().requires_grad_()
            run(t).backward(dy)
            grads.append(t.grad)
        assert grads[0].dtype == torch.bfloat16 and torch.equal(*grads)
    # differentiated twice: the eager formula's backward runs torch's ops then, whose derivatives are torch's; the
    # op's backward has none, and says so (torch.compile traces no double backward)
    second = []
    for run in (softmax_bench.softmax, lambda t: torch.softmax(t, -1)):
        x_again, dy_again = x.clone().requires_grad_(), dy.clone().requires_grad_()
        (dx,) = torch.autograd.grad(run(x_again), x_again, dy_again, create_graph=True)
        dx.pow(2).sum().backward()
        second.append((x_again.grad, dy_again.grad))
    torch.testing.assert_close(second[0], second[1], atol=1e-5, rtol=1e-5)
    x_again = x.clone().requires_grad_()
    (dx,) = torch.autograd.grad(torch.ops.softmax_bench.softmax(x_again, -1, None, None, False, "auto", None, None),
                                x_again, dy, create_graph=True)
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        dx.sum().backward()


def test_bad_input_says_what_to_do_under_compile_too():
    compiled = torch.compile(lambda x: softmax_bench.softmax(x, dim=3), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"use a dim in \[-2, 1\]"):
        compiled(torch.ones(2, 3, device=DEVICE))


@pytest.mark.skipif(DEVICE != "cuda", reason="inductor's generated code and the GPU's memory")
def test_a_computed_input_is_written_once_for_the_kernel_in_the_graph():
    """fused's kernel in a graph, its x computed there (x + 1): inductor writes x + 1 once, our y once, and nothing
    more. A call with no mask hands the kernel no mask pointer (given x for it, unread, inductor wrote x + 1 twice:
    docs/perf-notes.md, sixtieth session)."""
    torch._dynamo.reset()
    x = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)
    model = torch.compile(lambda t: softmax_bench.softmax(t + 1.0, variant="fused"), fullgraph=True)
    torch.testing.assert_close(model(x), torch.softmax(x.float() + 1.0, -1).to(x.dtype), atol=1e-3, rtol=1.6e-2)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    model(x)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() - before <= 2 * x.nbytes + (1 << 20)


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


TRACED_GRAPHS = """
import json, re, torch
from functorch.compile import aot_function, make_boxed_func
from torch._dynamo.source import ConstantSource
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
import softmax_bench
from softmax_bench import library

def traced(fn, *args):
    graphs = []
    aot_function(fn, fw_compiler=lambda gm, _: graphs.append(gm.code) or make_boxed_func(gm.forward))(*args)
    return graphs[0]

env = ShapeEnv()
with FakeTensorMode(shape_env=env):  # CUDA tensors as torch.compile traces them, with no GPU
    rows = env.create_symintnode(env.create_symbol(64, ConstantSource("M")), hint=64)
    width = env.create_symintnode(env.create_symbol(4000, ConstantSource("N")), hint=4000)
    x = torch.empty(rows, 4000, device="cuda", dtype=torch.bfloat16)
    x_any_width = torch.empty(rows, width, device="cuda", dtype=torch.bfloat16)
    keep = torch.empty(64, 4000, device="cuda", dtype=torch.bool)
    x64 = torch.empty(64, 4000, device="cuda", dtype=torch.bfloat16)
    ops = torch.ops.softmax_bench
    cases = {
        "fused": lambda: traced(lambda t, m: ops.softmax(t, -1, 0.5, m, False, "fused"), x64, keep),
        "fused, dynamic rows": lambda: traced(lambda t: ops.log_softmax(t, -1, None, None, True, "fused"), x),
        "fused backward": lambda: traced(lambda y: ops.softmax_backward(y, y, -1, 0.5, None, True, "fused"), x64),
        "two_pass": lambda: traced(lambda t: ops.softmax(t, -1, None, None, False, "two_pass"), x64),
        "fused, dynamic width": lambda: traced(lambda t: ops.softmax(t, -1, None, None, False, "fused"), x_any_width),
    }
    for name, case in cases.items():
        for in_graph in (True, False):
            library.IN_GRAPH = in_graph
            graph = case()
            print(json.dumps({"case": name, "in_graph": in_graph, "kernel": "triton_kernel_wrapper" in graph,
                              "opaque": "_opaque" in graph, "block": "'BLOCK_N': 4096" in graph,
                              "copied": re.findall(r"tensors_to_clone = \\[([^]]*)\\]", graph),
                              "uint8": "uint8" in graph, "guards": [str(g.expr) for g in env.guards]}))
"""


def test_traced_calls_put_fused_kernels_in_the_graph_and_the_others_behind_the_opaque_op():
    """What torch.compile's tracing (AOTAutograd) makes of the ops, on fake CUDA tensors with no GPU: fused's
    kernel, its backward's, as graph nodes (library.IN_GRAPH; off: the opaque op), two_pass's behind the opaque op
    (its launch reads x's pointer alignment); dynamic rows are guarded only as more than one program's (a new batch
    size traces nothing again); a dynamic row width is not specialized, and its call is the opaque op (a graph for
    every width would pass dynamo's recompile limit). The graph copies only what the kernel writes (a fresh y or
    dx, which inductor then writes in place), never x (library.KERNEL_WRITES), and takes the keep-mask as the bool
    tensor it is (inductor lowers no view of a bool as uint8)."""
    lines = [json.loads(line) for line in printed_without_interpreter("-c", TRACED_GRAPHS, timeout=300)]
    seen = {(line["case"], line["in_graph"]): line for line in lines}
    for case in ("fused", "fused, dynamic rows", "fused backward"):
        assert seen[case, True]["kernel"] and not seen[case, True]["opaque"] and seen[case, True]["block"], case
        assert seen[case, False]["opaque"] and not seen[case, False]["kernel"], case
        assert seen[case, True]["copied"] == (["'dx_ptr'"] if "backward" in case else ["'y_ptr'"]), case
    assert not seen["fused", True]["uint8"]
    for case in ("two_pass", "fused, dynamic width"):
        assert all(seen[case, in_graph]["opaque"] and not seen[case, in_graph]["kernel"] for in_graph in (True, False))
    rows_guards = seen["fused, dynamic rows", True]["guards"]
    assert not any(re.fullmatch(r"Eq\(\w+, 64\)", g) for g in rows_guards), rows_guards
    guards = seen["fused, dynamic width", True]["guards"]
    assert not any(re.fullmatch(r"Eq\(\w+, (64|4000)\)", g) for g in guards), guards


@pytest.mark.skipif(DEVICE != "cuda", reason="the code inductor generates for a GPU")
@pytest.mark.parametrize("in_graph", [True, False], ids=["in-graph", "opaque"])
def test_a_compiled_call_launches_fused_itself_and_cluster_through_the_opaque_op(monkeypatch, in_graph):
    """With library.IN_GRAPH, the code inductor generates launches fused's kernel itself at a row fused holds (no
    Python of softmax_bench's at run time), and calls the opaque op at a row cluster holds; without it, the opaque
    op everywhere. Either way the result is the eager call's, bit for bit, and the backward's is eager's."""
    from torch._inductor.utils import run_and_get_code

    monkeypatch.setattr(library, "IN_GRAPH", in_graph)
    # AOTAutograd's cache keys a graph by what dynamo traced, which is the same either way: off, one setting's
    # compiled graph would serve the other
    monkeypatch.setattr(torch._functorch.config, "enable_autograd_cache", False)

    def scores(t, keep):
        return softmax_bench.softmax(t, scale=0.5, mask=keep)

    for N, fused_holds in ((4000, True), (65536, False)):
        torch._dynamo.reset()
        x = torch.randn(64, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        keep = torch.rand(64, N, device="cuda") > 0.1
        y, code = run_and_get_code(torch.compile(scores, fullgraph=True), x, keep)
        code = "\n".join(code)
        expected = scores(x, keep)
        assert torch.equal(y, expected)
        in_code = in_graph and fused_holds
        opaque = [line.strip() for line in code.splitlines() if "_opaque" in line][:4]
        assert ("softmax_opaque" in code) != in_code and ("fused_rows_kernel" in code) == in_code, (N, opaque)
        dy = torch.randn_like(y)
        assert torch.equal(torch.autograd.grad(y, x, dy)[0], torch.autograd.grad(expected, x, dy)[0])


@pytest.mark.skipif(DEVICE != "cuda", reason="inductor's graphs for a GPU")
def test_a_compiled_call_with_its_kernel_in_the_graph_keeps_the_rows_dynamic(monkeypatch):
    """A graph traced with dynamic shapes serves every number of rows (the row width is specialized and guarded):
    one compile for M = 3, 64, 100 and 4096, each right."""
    from torch._dynamo.testing import CompileCounterWithBackend

    monkeypatch.setattr(library, "IN_GRAPH", True)
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(lambda t: softmax_bench.log_softmax(t, scale=0.5), fullgraph=True, dynamic=True,
                             backend=counter)
    for M in (3, 64, 100, 4096):
        x = torch.randn(M, 4000, device="cuda")
        torch.testing.assert_close(compiled(x), torch.log_softmax(x * 0.5, -1), atol=1e-5, rtol=1e-5)
    assert counter.frame_count == 1


def test_the_ops_register_under_a_triton_op_that_infers_the_schema_from_what_it_is_given(monkeypatch):
    """torch 2.11's triton_op infers the schema from the function it is given, whatever schema it gets: the
    partial that spares later torches the source walk has no globals to infer from (the H200's torch 2.11 failed
    to import softmax_bench at cb689f7). library.triton_op then gives it the function itself."""
    given = []

    def triton_op_2_11(name, fn, mutates_args, schema=None):
        torch.library.infer_schema(fn, mutates_args=mutates_args)  # what 2.11 does with any schema
        given.append(fn)
        return fn

    monkeypatch.setattr(torch.library, "triton_op", triton_op_2_11)

    def forward(x: torch.Tensor, dim: int) -> torch.Tensor:
        return x

    assert library.triton_op("softmax_bench_test::forward", forward) is forward
    assert given == [forward]


def test_every_triton_function_of_the_kernels_is_bound_under_its_own_name():
    """Inductor copies a kernel in a graph, and each Triton function it calls, into its code by their def names: a
    function bound under another name (log_of_sum, once an alias of _fast_log) is not defined there (the H200's
    compiled log_softmax failed so)."""
    import importlib
    import pkgutil

    from triton import JITFunction
    from triton.runtime.interpreter import InterpretedFunction

    import softmax_bench.kernels as package

    for module in pkgutil.iter_modules(package.__path__):
        names = vars(importlib.import_module(f"softmax_bench.kernels.{module.name}"))
        for name, value in names.items():
            if isinstance(value, (JITFunction, InterpretedFunction)):  # (TRITON_INTERPRET=1: the latter)
                assert value.fn.__name__ == name, f"{module.name}.{name} is {value.fn.__name__}"


def test_the_declared_writes_are_every_store_of_each_kernel_in_a_graph():
    """library.KERNEL_WRITES tells torch.compile what each kernel it puts in a graph writes (what it would copy
    first), in place of torch's reading of the TTIR: it must name every pointer the kernel's module stores to, and
    only those, and the kernel must take them."""
    import inspect

    from softmax_bench.kernels import fused, fused_backward

    for module in (fused, fused_backward):
        source = inspect.getsource(module)
        kernels_here = [name for name in library.KERNEL_WRITES if f"def {name}(" in source]
        assert len(kernels_here) == 1, module.__name__
        name = kernels_here[0]
        stored = set(re.findall(r"tl\.store\(\s*(\w+)", source))
        assert stored == set(library.KERNEL_WRITES[name]), (name, stored)
        assert stored <= set(inspect.signature(getattr(module, name).fn).parameters), name


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_torch_func_transforms_under_torch_compile_give_torchs_results(name):
    """torch.compile(fullgraph=True) of torch.func's transforms of a scaled, masked call gives what torch's own ops
    give: under the transforms the call takes their autograd formula (library.TransformedAutograd) while traced too,
    not the op, whose autograd torch.func cannot apply (grad, jacrev and hessian raised; jvp's tangent was wrong),
    and a traced mask stays bool (torch 2.11's inductor could not lower its view as uint8)."""
    x = torch.randn(4, 16, device=DEVICE)
    tangent = torch.randn_like(x)
    keep = torch.rand(4, 16, device=DEVICE) > 0.2
    keep[:, 0] = True
    ours, torchs = getattr(softmax_bench, name), getattr(torch, name)

    def transforms(f):
        loss = lambda x: f(x).exp().pow(2).sum()  # noqa: E731  (exp: log_softmax's -inf where masked, finite)
        return {"grad": torch.func.grad(loss), "jacrev": torch.func.jacrev(f),
                "vmap": lambda x: torch.func.vmap(f)(torch.stack([x, -2 * x])),
                "jvp": lambda x: torch.func.jvp(f, (x,), (tangent,))[1], "hessian": torch.func.hessian(loss)}

    got = transforms(lambda x: ours(x, scale=0.5, mask=keep))
    expected = transforms(lambda x: torchs((x * 0.5).masked_fill(~keep, float("-inf")), -1))
    for transform, fn in got.items():
        torch._dynamo.reset()
        value, reference = torch.compile(fn, backend=BACKEND, fullgraph=True)(x), expected[transform](x)
        finite = reference.isfinite()
        assert torch.equal(finite, value.isfinite()), transform
        torch.testing.assert_close(value[finite], reference[finite], atol=2e-5, rtol=2e-5, msg=transform)


def test_our_kernels_in_a_graph_are_launched_statically_where_inductor_allows_it_and_no_other(monkeypatch):
    """library.static_results: the compile results of one of our kernels in a graph become inductor's static ones
    where inductor's own check passes with its setting for user kernels on (that setting is off here, as by
    default); a result the check refuses or fails on keeps Triton's launcher, and another kernel's are left alone;
    where the static launchers fail to load, static_first makes Triton's (inductor's check and launchers are
    stood in for: on a CPU there is no cubin to launch)."""
    from types import SimpleNamespace

    from torch._inductor import config
    from torch._inductor.runtime import triton_heuristics as heuristics
    from triton import Config

    from softmax_bench.kernels import fused, fused_backward

    checked = []

    def can_statically_launch(kernel, inductor_meta, triton_meta, heuristic_type):
        checked.append(kernel)
        if kernel == "fails":
            raise RuntimeError("a kernel inductor's check cannot read")
        allowed = heuristic_type != heuristics.HeuristicType.USER_AUTOTUNE or \
            config.static_launch_user_defined_triton_kernels
        return f"static {kernel}" if allowed and kernel != "refused" else None

    monkeypatch.setattr(heuristics.StaticTritonCompileResult, "can_statically_launch",
                        staticmethod(can_statically_launch))
    assert not config.static_launch_user_defined_triton_kernels

    def autotuner(fn, *kernels):
        results = [heuristics.TritonCompileResult(kernel, Config({}), {"device": 0}, {"kernel_name": "k"})
                   for kernel in kernels]
        return SimpleNamespace(fn=fn, compile_results=results, inductor_meta={}, triton_meta={},
                               heuristic_type=heuristics.HeuristicType.USER_AUTOTUNE)

    ours = autotuner(fused.fused_rows_kernel, "a", "refused", "fails")
    made = library.static_results(ours)
    assert isinstance(made[0], heuristics.StaticTritonCompileResult) and made[0].kernel == "static a"
    assert made[0].config is ours.compile_results[0].config and made[0].compile_meta == {"device": 0}
    assert made[1:] == ours.compile_results[1:]  # refused, failed: Triton's launcher, as before
    named_apart = SimpleNamespace(fn=SimpleNamespace(__name__="fused_backward_kernel_3"))  # unique_user_kernel_names
    assert library.kernel_name(named_apart.fn) == "fused_backward_kernel"
    assert library.kernel_name(fused_backward.fused_backward_kernel) in library.KERNEL_WRITES
    checked.clear()
    theirs = autotuner(SimpleNamespace(__name__="their_rows_kernel"), "b")
    assert library.static_results(theirs) is theirs.compile_results and checked == []
    assert not config.static_launch_user_defined_triton_kernels

    def make_launchers(tuner):  # inductor's, where a static launcher fails to load
        if any(isinstance(result, heuristics.StaticTritonCompileResult) for result in tuner.compile_results):
            tuner.launchers.append("half made")
            raise RuntimeError("the static launcher would not load")
        tuner.launchers = [f"Triton's {result.kernel}" for result in tuner.compile_results]

    tuner = autotuner(fused.fused_rows_kernel, "a")
    tuner.launchers = []
    library.static_first(make_launchers)(tuner)
    assert tuner.launchers == ["Triton's a"] and not isinstance(tuner.compile_results[0],
                                                                 heuristics.StaticTritonCompileResult)


def test_inductors_own_check_makes_fuseds_kernel_compiled_for_sm90_static():
    """Inductor's real StaticTritonCompileResult.can_statically_launch (this torch's), given fused's kernel compiled
    for sm_90 without a GPU as a compile result of a user kernel: static_results makes it static, where inductor
    alone (its setting for user kernels off) keeps Triton's launcher."""
    code = """
import os, tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()  # where inductor compiles a kernel and looks for its cubin
import types, triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from torch._inductor.runtime import triton_heuristics as heuristics
from torch._inductor.runtime.hints import HeuristicType
from softmax_bench import library
from softmax_bench.kernels import fused
from tests.compile_sm90 import signature_of
kernel = fused.fused_rows_kernel
constexprs = {"BLOCK_N": 4096, "ROWS": 1, "HAS_SCALE": True, "HAS_MASK": False, "CAUSAL": False, "LOG": False,
              "bias_ptr": None}
types_ = {"x_ptr": "*bf16", "y_ptr": "*bf16", "mask_ptr": "*u8", "scale": "fp32"}
source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types_), constexprs=constexprs)
compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
meta = {"device": 0, "device_type": "cuda"}
result = heuristics.TritonCompileResult(compiled, triton.Config({}), meta, {})
alone = heuristics.StaticTritonCompileResult.can_statically_launch(compiled, {}, meta, HeuristicType.USER_AUTOTUNE)
tuner = types.SimpleNamespace(fn=kernel, compile_results=[result], inductor_meta={}, triton_meta=meta,
                              heuristic_type=HeuristicType.USER_AUTOTUNE)
print(alone is None, *(type(made).__name__ for made in library.static_results(tuner)))
import shutil; shutil.rmtree(os.environ["TRITON_CACHE_DIR"])
"""
    assert printed_without_interpreter("-c", code, timeout=300) == ["True StaticTritonCompileResult"]


@pytest.mark.skipif(DEVICE != "cuda", reason="inductor's launchers of a GPU kernel")
@pytest.mark.parametrize("static", [True, False], ids=["static", "SOFTMAX_BENCH_STATIC_LAUNCH=0"])
def test_a_graph_launches_our_kernels_as_inductor_launches_its_own(monkeypatch, static):
    """The launchers inductor makes for our kernels in a compiled forward and backward are its static ones (with
    SOFTMAX_BENCH_STATIC_LAUNCH=0, Triton's), and the results are the eager call's, bit for bit."""
    from torch._inductor.utils import fresh_inductor_cache

    monkeypatch.setattr(library, "IN_GRAPH", True)
    monkeypatch.setattr(library, "STATIC_LAUNCH", static)
    monkeypatch.setattr(torch._functorch.config, "enable_autograd_cache", False)
    torch._dynamo.reset()
    x = torch.randn(64, 4000, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    keep = torch.rand(4000, device="cuda") > 0.2
    dy = torch.randn_like(x)

    def scores(t, keep):
        return softmax_bench.softmax(t, scale=0.125, mask=keep)

    earlier = set(map(id, library.our_autotuners()))  # (kept alive by the graphs of tests before this one)
    with fresh_inductor_cache():
        y = torch.compile(scores, fullgraph=True)(x, keep)
        dx = torch.autograd.grad(y, x, dy)[0]
    expected = scores(x, keep)
    assert torch.equal(y, expected) and torch.equal(dx, torch.autograd.grad(expected, x, dy)[0])
    ours = [tuner for tuner in library.our_autotuners() if id(tuner) not in earlier]
    assert {library.kernel_name(tuner.fn) for tuner in ours} == set(library.KERNEL_WRITES)
    launchers = [launcher for tuner in ours for launcher in tuner.launchers]
    assert all(getattr(launcher, "_is_static", False) == static for launcher in launchers), launchers


@pytest.mark.parametrize("form", ["softmax", "scaled-masked", "biased"])
def test_the_compiled_peers_are_compiled_and_called_alike(form, monkeypatch):
    """compiled_op and torch_compile differ in the softmax inside, not in how the harness compiles and calls them:
    the same torch.compile options (no fullgraph, whose Python costs a call ~3 µs) and no keyword arguments at a
    call (the masks go as torch_compile's do, with no functools.partial to merge)."""
    from softmax_bench.ops import OPS
    from softmax_bench.peers import PEERS

    options, keywords = {}, {}

    def recording_compile(fn, **kwargs):
        def compiled(*args, **call_kwargs):
            keywords[name] = sorted(call_kwargs)
            return args[0]
        options[name] = kwargs
        return compiled

    monkeypatch.setattr(torch, "compile", recording_compile)
    x = torch.randn(4, 64)
    fusion = OPS[form].fusion_for(x)
    for name in ("torch_compile", "compiled_op"):
        PEERS[name].make(fusion)(x)
    assert options["compiled_op"] == options["torch_compile"] == {"dynamic": False}
    assert keywords == {"torch_compile": [], "compiled_op": []}
