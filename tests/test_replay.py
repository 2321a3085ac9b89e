"""Calls replayed (softmax_bench.replay): what a recorded launch becomes, when a call is not replayed, and on a GPU
that a replayed call gives what the long way gives, fusions and any rank included."""

from functools import partial

import pytest
import torch

import softmax_bench
from softmax_bench import dispatch, kernels, replay
from softmax_bench.kernels import TOLERANCES, launch_kernel

from .conftest import DEVICE

GPU = pytest.mark.skipif(DEVICE != "cuda", reason="replay records compiled GPU launches only")


class Param:
    def __init__(self, name, default=None):
        self.name, self.default = name, default


class FakeKernel:
    """A JIT kernel as Triton shows it: its parameters, and `kernel[grid](...)` returning the compiled kernel."""

    arg_names = ["x_ptr", "y_ptr", "mask_ptr", "N", "scale", "BLOCK", "FLAG"]
    params = [Param(n) for n in arg_names[:-1]] + [Param("FLAG", default=True)]

    def __init__(self):
        self.compiled = FakeCompiled()

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.compiled


class FakeCompiled:
    function, packed_metadata = "fn", "meta"

    def __init__(self):
        self.calls = []

    def run(self, *args):
        self.calls.append(args)

    def launch_metadata(self, grid, stream, *args):
        return None


def record(kernel, rows, y_rows, mask_rows, *extra):
    with replay.recording() as launches:
        launch_kernel(kernel, (5,), rows, y_rows, mask_rows if mask_rows is not None else rows, 40, *extra,
                      scale=0.5, BLOCK=64, num_warps=4)
    return launches


def test_a_recorded_launch_replays_with_the_new_tensors_in_their_places(monkeypatch):
    kernel = FakeKernel()
    x, mask = torch.randn(5, 40), torch.rand(5, 40) > 0.5
    y = torch.empty_like(x)
    plan = replay.make_plan(record(kernel, x, y, mask), x, y, mask, x, mask, stream_of=lambda device: "stream")
    assert plan is not None
    x2, mask2 = torch.randn(5, 40), torch.rand(5, 40) > 0.5
    y2 = plan(x2, mask2)
    assert y2.shape == x2.shape and y2.dtype == x2.dtype and y2.is_contiguous() and y2.data_ptr() != x2.data_ptr()
    (call,) = kernel.compiled.calls
    grid, (stream, fn, meta), args = call[:3], call[3:6], call[9:]
    assert grid == (5, 1, 1) and stream == "stream" and (fn, meta) == ("fn", "meta")
    assert args[0] is x2 and args[1] is y2 and args[2] is mask2  # the tensors of this call
    assert args[3:] == (40, 0.5, 64, True)  # every parameter in order, the default included; num_warps is no parameter


def test_a_tensor_given_in_two_places_replays_as_x_in_both():
    """With no mask the variants pass x's rows in the mask's place too: both places take the new call's x."""
    kernel, x = FakeKernel(), torch.randn(5, 40)
    y = torch.empty_like(x)
    plan = replay.make_plan(record(kernel, x, y, None), x, y, None, x, None, stream_of=lambda device: "stream")
    x2 = torch.randn(5, 40)
    y2 = plan(x2, None)
    (call,) = kernel.compiled.calls
    assert call[9] is x2 and call[10] is y2 and call[11] is x2


def test_a_launch_with_a_key_is_kept_as_its_plan_at_its_second_call_and_one_without_is_not(monkeypatch):
    """replay.launched_and_kept, as softmax_forward and softmax_backward call it: the output of the launch either
    way; the plan of its recorded launches kept under the key where one is given, from the key's second call (a
    kind called once, a decoding step's new width, makes no plan)."""
    monkeypatch.setattr(replay, "PLANS", {})
    monkeypatch.setattr(replay, "CALLED_ONCE", set())
    monkeypatch.setattr(replay, "make_plan", partial(replay.make_plan, stream_of=lambda device: "stream"))  # no GPU
    # on a GPU the plan kept would switch the look-up to replayed.cpp, configured (once a process) with this dict:
    # every later test's plans would then be looked up where none are kept (a GPU run of the suite failed so)
    monkeypatch.setattr(replay, "cxx_wanted", lambda: False)
    kernel, x = FakeKernel(), torch.randn(5, 40)
    y = torch.empty_like(x)

    def launch():
        launch_kernel(kernel, (5,), x, y, x, 40, scale=0.5, BLOCK=64, num_warps=4)
        return y

    assert replay.launched_and_kept(None, launch, x, None, x, None) is y and not replay.PLANS
    assert replay.launched_and_kept(None, launch, x, None, x, None) is y and not replay.PLANS
    assert replay.launched_and_kept(("a key",), launch, x, None, x, None) is y and not replay.PLANS  # called once
    assert replay.launched_and_kept(("a key",), launch, x, None, x, None) is y
    plan = replay.PLANS[("a key",)]
    x2 = torch.randn(5, 40)
    plan(x2, None)
    assert kernel.compiled.calls[-1][9] is x2  # the kept plan launches the recorded kernel with the new x


def test_no_plan_for_a_buffer_of_the_variants_own_or_rows_that_are_a_copy():
    kernel, x = FakeKernel(), torch.randn(5, 40)
    y, scratch = torch.empty_like(x), torch.empty(5, 1)
    launches = record(kernel, x, y, None)
    launches[0] = (*launches[0][:2], (x, y, scratch, 40), *launches[0][3:])
    assert replay.make_plan(launches, x, y, None, x, None, stream_of=str) is None  # scratch: not x, y or the mask
    copy = x.clone()
    assert replay.make_plan(record(kernel, copy, y, None), copy, y, None, x, None) is None
    assert replay.make_plan([], x, y, None, x, None) is None  # nothing compiled (the interpreter)
    # x given as the bias too: a later call's bias is not its x, so no plan takes the one for the other
    launches = record(kernel, x, y, None, x.view(5, 40))
    assert replay.make_plan(launches, x, y, None, x, None, bias_rows=x.view(5, 40), bias=x, stream_of=str) is None


def test_a_call_with_scratch_named_replays_with_a_fresh_buffer_and_views_of_its_tensors_as_the_new_ones():
    """A call that lays a shared mask out in phase copies (masking.phased_rows: kernels.scratch) launches the copies'
    kernel on a view of the mask and the copies, then the softmax on x, y and the copies: replayed, each call
    allocates copies of its own, of the recorded shape and dtype, and the view's place takes the new mask."""
    kernel, x, mask = FakeKernel(), torch.randn(5, 40), torch.rand(5, 40) > 0.5
    y = torch.empty_like(x)
    with replay.recording() as launches:
        copies = kernels.scratch(torch.empty(10, 48, dtype=torch.bool))
        launch_kernel(kernel, (10,), mask.view(torch.uint8), copies, copies, 40, scale=1.0, BLOCK=64)
        launch_kernel(kernel, (5,), x, y, copies, 40, scale=0.5, BLOCK=64)
    plan = replay.make_plan(launches, x, y, mask, x, mask, stream_of=lambda device: "stream")
    assert type(plan) is replay.Plan  # (FakeCompiled is no kernel launcher.c takes)
    x2, mask2 = torch.randn(5, 40), torch.rand(5, 40) > 0.5
    y2 = plan(x2, mask2)
    copy_call, softmax_call = (call[9:12] for call in kernel.compiled.calls)
    assert copy_call[0] is mask2 and softmax_call[:2] == (x2, y2)
    fresh = copy_call[1]
    assert fresh is copy_call[2] is softmax_call[2] and fresh is not copies
    assert fresh.shape == (10, 48) and fresh.dtype == torch.bool
    plan(x2, mask2)
    assert kernel.compiled.calls[-1][11] is not fresh  # each call its own copies
    with replay.recording() as launches:  # the same buffer, not named scratch: no plan
        launch_kernel(kernel, (5,), x, y, torch.empty(10, 48, dtype=torch.bool), 40, scale=0.5, BLOCK=64)
    assert replay.make_plan(launches, x, y, mask, x, mask, stream_of=str) is None


def test_the_interpreter_records_nothing_and_clear_caches_forgets_the_plans():
    x = torch.randn(3, 40, device=DEVICE)
    dispatch.clear_caches()
    softmax_bench.softmax(x, variant="fused")
    softmax_bench.softmax(x, variant="fused")
    assert bool(replay.PLANS) == (DEVICE == "cuda")
    dispatch.clear_caches()
    assert not replay.PLANS


class KeptPlan:
    """A plan as replay keeps one, that answers with a tensor of its own and records its calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, x, mask, bias=None):
        self.calls.append((x, mask, bias))
        return torch.full_like(x, 7.0)


@pytest.mark.parametrize("op, log", [(softmax_bench.softmax, False), (softmax_bench.log_softmax, True)],
                         ids=["softmax", "log_softmax"])
def test_a_call_of_a_recorded_kind_goes_to_its_plan_first(op, log, monkeypatch):
    """softmax and log_softmax ask for the recorded plan before anything else (replay.replayed): a call of the kind
    a plan was kept for is served by it, with its own tensors; a call it does not fit goes the long way: another
    op, scale, mask layout or dim, a dtype= (its cast decided the long way), a dim left to torch's choice (whose
    warning the long way gives), x needing a gradient (the registered op)."""
    dispatch.clear_caches()
    x, mask = torch.randn(4, 40, device=DEVICE), torch.rand(4, 40, device=DEVICE) > 0.5
    plan = KeptPlan()
    replay.keep(replay.plan_key(x, -1, 0.5, mask, False, "auto", log), plan)
    try:
        x2, mask2 = torch.randn(4, 40, device=DEVICE), torch.rand(4, 40, device=DEVICE) > 0.5
        with monkeypatch.context() as patched:  # served before any of the long way
            patched.setattr(dispatch, "replayed_or_forward", None)
            patched.setattr(dispatch, "through_op", None)
            assert torch.equal(op(x2, scale=0.5, mask=mask2), torch.full_like(x2, 7.0))
            assert len(plan.calls) == 1 and plan.calls[0][0] is x2 and plan.calls[0][1] is mask2
            with torch.no_grad():  # a gradient not taken: the plan
                op(x2.clone().requires_grad_(), scale=0.5, mask=mask2)
            assert len(plan.calls) == 2
        other = softmax_bench.log_softmax if op is softmax_bench.softmax else softmax_bench.softmax
        misses = [lambda: other(x2, scale=0.5, mask=mask2), lambda: op(x2, scale=0.25, mask=mask2),
                  lambda: op(x2, scale=0.5, mask=mask2[:1].expand(4, 40)), lambda: op(x2, 1, scale=0.5, mask=mask2),
                  lambda: op(x2, scale=0.5, mask=mask2, dtype=torch.float64)]
        for miss in misses:
            miss()
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            op(x2, None, scale=0.5, mask=mask2)
        assert len(plan.calls) == 2
        # x needing a gradient: the registered op, with its autograd; its implementation replays the plan
        assert op(x2.clone().requires_grad_(), scale=0.5, mask=mask2).requires_grad and len(plan.calls) == 3
        # a 16-bit x written in fp32 (dtype=, a cast fused into the store) has a plan of its own, asked first too
        half, fp32_plan = x.to(torch.bfloat16), KeptPlan()
        replay.keep(replay.plan_key(half, -1, None, None, False, "auto", log, torch.float32), fp32_plan)
        with monkeypatch.context() as patched:
            patched.setattr(dispatch, "replayed_or_forward", None)
            op(half.clone(), dtype=torch.float32)
        assert len(fp32_plan.calls) == 1
    finally:
        dispatch.clear_caches()


@pytest.mark.parametrize("op, log", [(softmax_bench.softmax, False), (softmax_bench.log_softmax, True)],
                         ids=["softmax", "log_softmax"])
def test_a_backward_of_a_recorded_kind_goes_to_its_plan(op, log):
    """An eager backward asks for a plan kept under its own key (replay.backward_key: y's and dy's layouts and the
    forward's arguments) and, where there is one, replays it with y, the mask and dy: x's gradient is what the plan
    gives. Another dy layout, mask or op is another key."""
    dispatch.clear_caches()
    x, mask = torch.randn(4, 40, device=DEVICE), torch.rand(4, 40, device=DEVICE) > 0.5
    dy = torch.randn(4, 40, device=DEVICE)
    y = op(x, scale=0.5, mask=mask)
    plan = KeptPlan()
    replay.keep(replay.backward_key(y, dy, -1, 0.5, mask, False, "auto", log), plan)
    try:
        xg = x.clone().requires_grad_()
        y = op(xg, scale=0.5, mask=mask)
        y.backward(dy)
        assert torch.equal(xg.grad, torch.full_like(x, 7.0))
        ((given_y, given_mask, given_dy),) = plan.calls
        assert given_mask is mask and torch.equal(given_y, y) and torch.equal(given_dy, dy)
        for other_dy, other_mask in ((dy.t().contiguous().t(), mask), (dy, mask[:1].expand(4, 40))):
            xg = x.clone().requires_grad_()
            op(xg, scale=0.5, mask=other_mask).backward(other_dy)
            assert not torch.equal(xg.grad, torch.full_like(x, 7.0))
        assert len(plan.calls) == 1
    finally:
        dispatch.clear_caches()


def test_a_plan_allocates_y_as_x_only_where_that_is_ys_layout():
    """make_plan's like_x: y is torch.empty_like(x) as it is only for a contiguous x and y of x's dtype; else
    contiguous and of y's dtype, as the kernels write it."""
    kernel = FakeKernel()
    cases = [(torch.randn(5, 40), torch.float32, True),
             (torch.randn(5, 40, dtype=torch.bfloat16), torch.float32, False),  # bf16 x, fp32 y (dtype=)
             (torch.randn(5, 48)[:, :40], torch.float32, False)]  # rows with a stride of their own
    for x, y_dtype, like_x in cases:
        y = torch.empty(x.shape, dtype=y_dtype)
        plan = replay.make_plan(record(kernel, x, y, None), x, y, None, x, None, stream_of=str)
        assert plan.like_x == like_x
        new = torch.randn(x.shape[0], x.shape[1] + 8, dtype=x.dtype)[:, :40] if not x.is_contiguous() else \
            torch.randn_like(x)
        out = plan(new, None)
        assert out.dtype == y_dtype and out.is_contiguous() and out.shape == x.shape


def test_arguments_that_cannot_be_keyed_are_refused_the_long_way():
    with pytest.raises(TypeError, match="torch.Tensor"):
        softmax_bench.softmax([1.0, 2.0])
    with pytest.raises(TypeError, match="scale must be a number"):
        softmax_bench.softmax(torch.randn(2, 8, device=DEVICE), scale=[0.5])


@GPU
@pytest.mark.parametrize("op", [softmax_bench.softmax, softmax_bench.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("variant", ["auto", "fused", "two_pass", "cluster"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_replayed_call_gives_what_the_long_way_gives(op, variant, dtype):
    if not softmax_bench.variants()[variant if variant != "auto" else "fused"].supports(16384, dtype):
        pytest.skip(f"{variant} does not run here")
    dispatch.clear_caches()

    def alike(shape, **kwargs):  # a fresh input of the case's kind
        x = torch.randn(*shape, device="cuda", dtype=dtype)
        if "mask" in kwargs:
            kwargs["mask"] = torch.rand(kwargs["mask"], device="cuda") > 0.3
        if "bias" in kwargs:
            kwargs["bias"] = torch.randn(kwargs["bias"], device="cuda", dtype=dtype)
        return x, kwargs

    cases = [  # 2-D, 4-D with a scale, a broadcast mask, causal, a bias of x's shape and one shared by a head's
        # queries; rows at an odd offset (a copy for some: no plan)
        lambda: alike((64, 16384)),
        lambda: alike((2, 3, 7, 16384), scale=0.25),
        lambda: alike((8, 16384), mask=(1, 16384)),
        lambda: alike((8, 16384), causal=True, scale=0.5),
        lambda: alike((8, 16384), bias=(8, 16384), scale=0.5),
        lambda: alike((2, 3, 7, 16384), bias=(2, 1, 1, 16384), mask=(2, 3, 7, 16384)),
        lambda: (torch.randn(9, 16387, device="cuda", dtype=dtype)[1:, 3:], {}),
    ]
    for number, case in enumerate(cases):
        x, kwargs = case()
        for _ in range(2):  # called once, then recorded
            op(x, variant=variant, **kwargs)
        recorded = len(replay.PLANS)
        assert recorded == 1 or number == len(cases) - 1
        x.copy_(torch.randn_like(x))  # new values in the same memory; then a new input alike
        again = op(x, variant=variant, **kwargs)
        other, other_kwargs = case()
        fresh = op(other, variant=variant, **other_kwargs)
        assert len(replay.PLANS) == recorded  # replayed: no new plan
        dispatch.clear_caches()
        for inp, args, out in ((x, kwargs, again), (other, other_kwargs, fresh)):
            expected = op(inp, variant=variant, **args)  # the long way (caches cleared)
            dispatch.clear_caches()
            atol, rtol = TOLERANCES[dtype]
            assert out.shape == inp.shape and out.dtype == dtype
            torch.testing.assert_close(out.float(), expected.float(), atol=atol, rtol=rtol)


@GPU
@pytest.mark.parametrize("op", [softmax_bench.softmax, softmax_bench.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("variant, N", [("auto", 4000), ("fused", 16384), ("two_pass", 50257), ("cluster", 131072)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_replayed_backward_gives_what_the_long_way_gives(op, variant, N, dtype):
    """An eager backward like a recorded one replays its launches (dispatch.replayed_or_backward): x's gradient bit
    for bit what the recorded, long-way backward gave, plain, masked and scaled, causal; a dy that is not dense
    (as .sum()'s) is not replayed."""
    if not softmax_bench.variants()[variant if variant != "auto" else "fused"].supports(N, dtype):
        pytest.skip(f"{variant} does not run here")
    cases = [{}, {"mask": True, "scale": 0.125}, {"causal": True, "scale": 0.5}]
    for kwargs in cases:
        x = torch.randn(8, N, device="cuda", dtype=dtype, requires_grad=True)
        if kwargs.get("mask"):
            kwargs = {**kwargs, "mask": torch.rand(8, N, device="cuda") > 0.3}
        dy = torch.randn(8, N, device="cuda", dtype=dtype)
        dispatch.clear_caches()
        grads = []
        for _ in range(3):  # called once, recorded, then replayed
            x.grad = None
            op(x, variant=variant, **kwargs).backward(dy)
            grads.append(x.grad.clone())
        backward_plans = [key for key in replay.PLANS if key[0] == "backward"]
        assert len(backward_plans) == 1, kwargs
        assert torch.equal(grads[0], grads[2]) and torch.equal(grads[1], grads[2]), kwargs
        op(x, variant=variant, **kwargs).sum().backward()  # dy expanded from one element: a key of its own, no plan
        assert [key for key in replay.PLANS if key[0] == "backward"] == backward_plans
    dispatch.clear_caches()


@GPU
def test_softmax_and_log_softmax_of_one_input_keep_plans_of_their_own():
    dispatch.clear_caches()
    x = torch.randn(64, 4000, device="cuda")
    for _ in range(3):  # called once, recorded, then replayed
        y, log_y = softmax_bench.softmax(x), softmax_bench.log_softmax(x)
    assert len(replay.PLANS) == 2
    torch.testing.assert_close(y, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(log_y, torch.log_softmax(x, -1), atol=1e-5, rtol=1e-5)


@GPU
def test_a_dim_that_is_not_last_is_not_replayed():
    dispatch.clear_caches()
    x = torch.randn(4096, 8, device="cuda")
    for _ in range(2):
        softmax_bench.softmax(x, dim=0, variant="fused")
    assert not replay.PLANS


@GPU
def test_the_registered_op_replays_eager_with_a_gradient_and_compiled():
    """The op softmax_bench::softmax (torch.compile's graphs go through it), and an eager call with a gradient (its
    autograd formula), replay a recorded call as an eager call does: one forward plan for alike inputs, the same
    result as the long way; the backward keeps a plan of its own."""
    dispatch.clear_caches()
    x = torch.randn(64, 4000, device="cuda")
    expected = torch.softmax(x, -1)

    def forward_plans():
        return [key for key in replay.PLANS if key[0] != "backward"]

    for _ in range(2):
        torch.testing.assert_close(torch.ops.softmax_bench.softmax(x, -1, None, None, False, "auto"), expected,
                                   atol=1e-6, rtol=1e-5)
    assert len(replay.PLANS) == 1
    xg = x.clone().requires_grad_()
    for _ in range(2):
        y = softmax_bench.softmax(xg)
    for _ in range(2):  # the backward called once, then recorded
        (dx,) = torch.autograd.grad(y, xg, torch.ones_like(y), retain_graph=True)
    assert len(forward_plans()) == 1 and float(dx.abs().max()) < 1e-5  # softmax's rows sum to 1: no gradient
    assert len(replay.PLANS) == 2  # and the backward's
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: softmax_bench.softmax(t * 2.0), fullgraph=True)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), torch.softmax(x * 2.0, -1), atol=1e-6, rtol=1e-5)
    assert len(forward_plans()) == 1  # x · 2, the compiled graph's input to the op, is of x's kind: the same plan



class ConstexprParam(Param):
    def __init__(self, name, default=None, is_constexpr=False):
        super().__init__(name, default)
        self.is_constexpr = is_constexpr


class FakeKernelWithConstexprs(FakeKernel):
    """FakeKernel whose last two parameters are constexprs (a float one among them), as @triton.jit marks them."""

    arg_names = ["x_ptr", "y_ptr", "N", "scale", "FACTOR", "FLAG"]
    params = [ConstexprParam(n) for n in arg_names[:4]] + [ConstexprParam("FACTOR", is_constexpr=True),
                                                             ConstexprParam("FLAG", default=True, is_constexpr=True)]


def fast(monkeypatch):
    """replay.FAST_LAUNCHES on, as on a GPU: the kernels compiled (not the interpreter), device 0's stream."""
    monkeypatch.setattr(replay, "FAST_LAUNCHES", True)
    monkeypatch.setattr(replay.kernels, "interpreted", lambda: False)
    monkeypatch.setattr(replay, "current_device", lambda: (0, lambda device: f"stream {device}"))
    replay.LAUNCHES.clear()


def test_a_launch_that_specializes_as_an_earlier_one_goes_to_its_compiled_kernel(monkeypatch):
    """FAST_LAUNCHES: the first launch goes through kernel[grid], the next alike straight to its compiled kernel
    with its own tensors and numbers in parameter order; whatever Triton specializes on starts a launch of its own
    (an integer's width, whether it is 1 or 16 divides it, a tensor's dtype or 16-byte alignment, bool against int, a
    constexpr, a launch option), a float's value and an integer's otherwise do not."""
    fast(monkeypatch)
    kernel = FakeKernelWithConstexprs()
    x, y = torch.randn(64), torch.empty(64)

    def go(x=x, y=y, N=64, scale=0.5, FACTOR=2.0, **options):
        return launch_kernel(kernel, (4,), x, y, N, scale, FACTOR=FACTOR, num_warps=options.get("num_warps", 4))

    assert go() is kernel.compiled and not kernel.compiled.calls and len(replay.LAUNCHES) == 1
    x2, y2 = torch.randn(64), torch.empty(64)
    assert go(x2, y2, scale=0.25) is kernel.compiled  # a float's value: the same kernel
    (call,) = kernel.compiled.calls
    assert call[:4] == (4, 1, 1, "stream 0") and call[4:6] == ("fn", "meta")
    args = call[9:]
    assert args[0] is x2 and args[1] is y2 and args[2:] == (64, 0.25, 2.0, True)
    assert len(replay.LAUNCHES) == 1
    assert go(N=4000) is kernel.compiled and len(kernel.compiled.calls) == 2  # 16 divides it, as it does 64
    assert kernel.compiled.calls[1][9:][2] == 4000 and len(replay.LAUNCHES) == 1
    for other in ({"N": 65}, {"N": 1}, {"N": True}, {"N": 1 << 31}, {"x": torch.randn(65)[1:]},
                  {"x": torch.randn(64, dtype=torch.float64)},
                  {"FACTOR": 3.0}, {"num_warps": 8}):
        before = len(replay.LAUNCHES)
        go(**other)
        assert len(replay.LAUNCHES) == before + 1, other
    assert len(kernel.compiled.calls) == 2  # none of those went to an earlier launch's kernel


def test_a_recorded_call_launches_fast_and_the_interpreter_alone(monkeypatch):
    """A call recorded for replay (a call of a new kind) launches fast too, and its launch is recorded with the
    compiled kernel it ran: a row width not seen before, 16 not dividing it as it does not 40, pays no binding."""
    kernel = FakeKernel()
    x, y = torch.randn(5, 40), torch.empty(5, 40)
    fast(monkeypatch)
    assert len(record(kernel, x, y, None)) == 1 and len(replay.LAUNCHES) == 1  # through Triton's launch, kept
    with replay.recording() as launches:
        launch_kernel(kernel, (5,), x, y, x, 41, scale=0.5, BLOCK=64, num_warps=4)
    [(_, _, args, _, compiled)] = launches
    assert compiled is kernel.compiled and args[3] == 41
    assert len(kernel.compiled.calls) == 1 and kernel.compiled.calls[0][9:][3] == 41  # run from the kept launch
    monkeypatch.setattr(replay, "LAUNCHES", {})
    monkeypatch.setattr(replay.kernels, "interpreted", lambda: True)
    launch_kernel(kernel, (5,), x, y, x, 40, scale=0.5, BLOCK=64)
    assert not replay.LAUNCHES
    launch_kernel(kernel, lambda meta: (5,), x, y, x, 40, scale=0.5, BLOCK=64)  # a grid Triton computes
    assert not replay.LAUNCHES


def test_a_launch_bound_without_triton_binds_as_python_does():
    """replay.bound_arguments (a replayed call's and a fast launch's): every parameter in order, positional,
    named, then default, as Python binds the kernel's own function."""
    import inspect

    from softmax_bench.kernels import cross_entropy, fused

    for fn in (fused.fused_rows_kernel.fn, cross_entropy.targets_kernel.fn):
        names = list(inspect.signature(fn).parameters)
        kernel = type("K", (), {"params": [Param(n, p.default) for n, p in inspect.signature(fn).parameters.items()]})
        args, kwargs = tuple(range(3)), {names[-1]: "last", names[4]: "fifth"}
        expected = inspect.signature(fn).bind_partial(*args, **kwargs)
        expected.apply_defaults()
        got = replay.bound_arguments(kernel, args, kwargs)
        assert got == [expected.arguments.get(n, inspect.Parameter.empty) for n in names]


@GPU
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fast_launches_give_what_triton_launches_give(dtype, monkeypatch):
    """On the GPU, FAST_LAUNCHES: softmax's variants (not replayed: a dim that is not last), their backward and the
    loss's forward and step, bit for bit what Triton's own launches give, with launches gone fast; rows at an odd
    offset after aligned ones are launches of their own."""
    from softmax_bench import cross_entropy

    def calls():
        x = torch.randn(6000, 64, device="cuda", dtype=dtype)  # dim 0: each call launches the long way
        logits = torch.randn(256, 50257, device="cuda", dtype=dtype, requires_grad=True)
        target = torch.randint(0, 50257, (256,), device="cuda")
        out = [softmax_bench.softmax(x, dim=0, variant=v) for v in ("fused", "two_pass", "online")]
        out.append(softmax_bench.log_softmax(x[1:], dim=0, scale=0.5))
        loss = cross_entropy(logits, target)
        out += [loss, torch.autograd.grad(loss, logits)[0]]
        with torch.no_grad():
            out.append(cross_entropy(logits[:, 1:], target.clamp(max=50255)))
        return out

    torch.manual_seed(0)
    dispatch.clear_caches()
    monkeypatch.setattr(replay, "FAST_LAUNCHES", False)  # (on by default) Triton's own launches give the reference
    expected = calls()
    monkeypatch.setattr(replay, "FAST_LAUNCHES", True)
    for round_ in range(2):  # launched by Triton and kept, then fast
        torch.manual_seed(0)
        got = calls()
        for g, e in zip(got, expected):
            assert torch.equal(g, e), round_
    kept = len(replay.LAUNCHES)
    assert kept >= 8
    calls()
    assert len(replay.LAUNCHES) == kept  # every launch of a third round went fast
    dispatch.clear_caches()


@GPU
@pytest.mark.parametrize("variant", ["fused", "two_pass", "auto"])  # auto: fused, by the H200's table or the rule
def test_calls_of_new_widths_launch_fast_and_give_what_triton_launches_give(variant, monkeypatch):
    """FAST_LAUNCHES on the GPU: calls each of a row width not seen before (a decoding step's keys) launch through
    the kernel an earlier width's launch compiled where 16 divides neither width (or both), bit for bit what
    Triton's own launches give, and keep no plan; a second call of each width is recorded so, a third replayed."""
    widths = [4001 + k for k in range(5)] + [4016, 4032]  # one power of two: the kernels' constexprs the same
    xs = [torch.randn(64, width, device="cuda", dtype=torch.bfloat16) for width in widths]
    dispatch.clear_caches()
    monkeypatch.setattr(replay, "FAST_LAUNCHES", False)  # (on by default) Triton's own launches give the reference
    expected = [softmax_bench.softmax(x, variant=variant) for x in xs]
    dispatch.clear_caches()
    monkeypatch.setattr(replay, "FAST_LAUNCHES", True)
    for call in ("called once", "recorded", "replayed"):
        got = [softmax_bench.softmax(x, variant=variant) for x in xs]
        for width, g, e in zip(widths, got, expected):
            assert torch.equal(g, e), (call, width)
        assert len(replay.PLANS) == (0 if call == "called once" else len(widths)), call
        assert len(replay.LAUNCHES) == 2  # the variant's one kernel launched by Triton twice: 16 divides N or not
    dispatch.clear_caches()
