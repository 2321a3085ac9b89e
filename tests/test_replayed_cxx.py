"""replayed.cpp (replay.CXX_REPLAYED): its replayed serves exactly the calls replay.replayed serves, with the same
plan and tensors, over calls of every kind an argument can make differ; its empty_like gives torch.empty_like's
layout; kept plans switch softmax to it and the Replays' allocation with it; a build that fails is said once and
leaves the Python look-up; on a GPU, calls served by it give the outputs served by the Python, bit for bit."""

import os
import shutil
import warnings

import pytest
import torch

import softmax_bench
from softmax_bench import replay

from .conftest import DEVICE
from .test_launcher import module, recording  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def cxx():
    from triton.runtime.build import compile_module_from_src

    if not replay.builds_cxx(compile_module_from_src):
        pytest.skip("this Triton's build helper builds C alone: replayed.cpp is not built")
    built = replay.cxx_built()
    if built is None:
        if any(map(shutil.which, [os.environ.get("CXX", "g++"), "g++", "clang++"])):
            pytest.fail("replayed.cpp was not built, with a C++ compiler here")
        pytest.skip("no C++ compiler here: replayed.cpp cannot be built")
    yield built
    built.configure(replay.PLANS, replay.FUSED_CASTS)  # the tests' own tables given back


def helper_building_cxx(src, name, library_dirs=None, include_dirs=None, libraries=None, ccflags=None, language="c"):
    raise AssertionError("not called")  # Triton 3.8's build helper: it takes a language


def helper_building_c_alone(src, name, library_dirs=None, include_dirs=None, libraries=None, ccflags=None):
    raise AssertionError("not called")  # Triton 3.6's


class Served:
    """A kept plan that answers with its name and the tensors it was given."""

    def __init__(self, name):
        self.name = name

    def __call__(self, x, mask, bias=None):
        return (self.name, x, mask, bias)


class Sub(torch.Tensor):
    pass


def calls():
    """(name, replayed's nine arguments) of calls that differ from one another in one thing each."""
    x = torch.randn(4, 8, dtype=torch.bfloat16)
    x32 = x.float()
    mask, row_mask = torch.rand(4, 8) > 0.5, torch.rand(1, 8) > 0.5
    bias, bias_grad = torch.randn(4, 8), torch.randn(4, 8, requires_grad=True)
    wide = torch.randn(4, 9, dtype=torch.bfloat16)
    base = dict(x=x, dim=-1, dtype=None, scale=None, mask=None, causal=False, variant="auto", log=False, bias=None)
    changes = {
        "plain": {}, "fp32": dict(x=x32), "wider": dict(x=wide[:, :8]), "offset": dict(x=wide[:, 1:]),
        "transposed": dict(x=torch.randn(8, 4, dtype=torch.bfloat16).t()), "3-D": dict(x=x.view(2, 2, 8)),
        "dim 1": dict(dim=1), "dim 0": dict(dim=0), "dim None": dict(dim=None), "dim True": dict(dim=True),
        "scale 0.5": dict(scale=0.5), "scale 2": dict(scale=2), "scale 2.0": dict(scale=2.0),
        "scale unhashable": dict(scale=[2.0]), "mask": dict(mask=mask), "row mask": dict(mask=row_mask),
        "mask a list": dict(mask=[[True] * 8] * 4), "causal": dict(causal=True), "variant fused": dict(variant="fused"),
        "log": dict(log=True), "bias": dict(bias=bias), "bias with a gradient": dict(bias=bias_grad),
        "mask and bias": dict(mask=mask, bias=bias), "dtype fp32 (fused)": dict(dtype=torch.float32),
        "dtype fp16 (not fused)": dict(dtype=torch.float16), "dtype its own": dict(dtype=torch.bfloat16),
        "dtype a string": dict(dtype="float32"), "x with a gradient": dict(x=x.clone().requires_grad_()),
        "x a Parameter": dict(x=torch.nn.Parameter(x32, requires_grad=False)),
        "x a list": dict(x=[[1.0] * 8] * 4),
    }
    return [(name, tuple({**base, **change}.values())) for name, change in changes.items()]


def recorded_key(args) -> tuple | None:
    """The key the long way keeps a call's plan under (dispatch.softmax_forward's replay_key), None where it raises."""
    x, dim, dtype, scale, mask, causal, variant, log, bias = args
    out_dtype = dtype if dtype is not None and (getattr(x, "dtype", None), dtype) in replay.FUSED_CASTS else None
    try:
        key = replay.plan_key(x, dim, scale, mask, causal, variant, log, out_dtype, bias)
        hash(key)
    except (AttributeError, TypeError):
        return None
    return key


def with_plans(cxx, monkeypatch, plans):
    """plans as replay.PLANS and replayed.cpp's (which gives a PlanTable its forget)."""
    monkeypatch.setattr(replay, "PLANS", plans)
    cxx.configure(plans, replay.FUSED_CASTS)
    return plans


@pytest.mark.parametrize("memo", [False, True], ids=["a dict", "a PlanTable (the memo)"])
@pytest.mark.parametrize("grad", [True, False], ids=["grad mode", "no_grad"])
def test_it_serves_the_calls_the_python_serves_with_the_same_plan(cxx, monkeypatch, grad, memo):
    """Each call twice in turn (kinds whose x's sizes share a memo entry displace one another): a PlanTable's memo
    serves what the key would."""
    plans = with_plans(cxx, monkeypatch, replay.PlanTable() if memo else {})
    cases = calls()
    for name, args in cases:
        if (key := recorded_key(args)) is not None:
            plans[key] = Served(name)
    assert len(plans) >= 15  # the calls' kinds, of which some share a key (dim True and 1, scale 2 and 2.0)
    served = 0
    with torch.set_grad_enabled(grad):
        for name, args in cases * 2:
            expected, got = replay.python_replayed(*args), cxx.replayed(*args)
            assert (got is None) == (expected is None), name
            if got is not None:
                served += 1
                assert got[0] == expected[0] and all(a is b for a, b in zip(got[1:], expected[1:])), name
    served //= 2
    # not served: x and the mask lists, the unhashable scale, fp16 and a string for dtype; with grad mode on, the
    # gradients x's and the bias's
    assert served == len(cases) - (7 if grad else 5)


def test_its_memo_serves_no_plan_plans_no_longer_holds(cxx, monkeypatch):
    """replayed.cpp remembers the calls whose plans it found (a PlanTable's), and forgets them at every change of
    PLANS: a plan replaced, deleted, cleared, popped, updated; a float scale is matched by value, as the key's tuple
    matches it, and a NaN never, as the tuple never finds a NaN equal to another."""
    plans = with_plans(cxx, monkeypatch, replay.PlanTable())
    x = torch.randn(4, 8)
    key = replay.plan_key(x, -1, 0.5, None, False, "auto")

    def served(scale=0.5):
        got = [cxx.replayed(x, -1, None, scale, None, False, "auto", False, None) for _ in range(2)]
        assert got[0] == got[1]  # the first found by its key, the second by the memo
        return got[0] and got[0][0]

    plans[key] = Served("first")
    assert served() == "first" and served(float("0.25") * 2) == "first"  # another float of that value
    plans[key] = Served("replaced")
    assert served() == "replaced"
    del plans[key]
    assert served() is None
    for change in (lambda: plans.clear(), lambda: plans.pop(key), lambda: plans.popitem(),
                   lambda: plans.update({key: Served("updated")}), lambda: plans.__ior__({key: Served("or")})):
        plans[key] = Served("kept")
        assert served() == "kept"
        change()
        assert served() == (plans[key].name if key in plans else None)
    plans.clear()
    assert plans.setdefault(key, Served("set")) is plans[key] and served() == "set"
    nan = float("nan")
    plans[replay.plan_key(x, -1, nan, None, False, "auto")] = Served("nan")
    assert served(nan) == "nan" and served(float("nan")) is None


def test_a_tensor_subclass_or_one_without_storage_goes_the_long_way(cxx, monkeypatch):
    """A subclass of Tensor (its accessors may be its own) and torch.func's tensors (no storage): None, for the long
    way to check; the Python serves a subclass from the same key (replayed_or_forward then does)."""
    x = torch.randn(4, 8)
    plans = {replay.plan_key(x, -1, None, None, False, "auto"): Served("plain")}
    monkeypatch.setattr(replay, "PLANS", plans)
    cxx.configure(plans, replay.FUSED_CASTS)
    args = (-1, None, None, None, False, "auto", False, None)
    assert cxx.replayed(x, *args)[0] == "plain"
    assert cxx.replayed(x.as_subclass(Sub), *args) is None
    seen = []
    torch.func.vmap(lambda row: seen.append(cxx.replayed(row, *args)) or row)(torch.randn(3, 4, 8))
    assert seen == [None]


def test_its_empty_like_gives_torchs_layout(cxx):
    """Its own at::empty where y is contiguous, at::empty_like elsewhere: either way torch.empty_like's layout, for
    a size-1 dim's stride that is not a contiguous tensor's (x contiguous all the same) and an empty x too."""
    x = torch.randn(6, 5, dtype=torch.bfloat16)
    odd_unit_stride = torch.randn(6, 5).as_strided((6, 1, 5), (5, 7, 1))
    for given, kwargs in [(x, {}), (x.t(), {}), (torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last), {}),
                          (x.t(), dict(dtype=torch.float32, memory_format=torch.contiguous_format)),
                          (x, dict(dtype=torch.float16)), (x.t(), dict(memory_format=torch.contiguous_format)),
                          (odd_unit_stride, {}), (odd_unit_stride, dict(dtype=torch.float16)),
                          (torch.randn(2, 3, 1, 1).to(memory_format=torch.channels_last), {}), (x[:0], {}),
                          (torch.randn(4, 0, 3), {}), (torch.tensor(2.0), {}), (x[:, :4], {})]:
        expected, got = torch.empty_like(given, **kwargs), cxx.empty_like(given, **kwargs)
        assert (got.shape, got.stride(), got.dtype, got.device, got.requires_grad) == \
            (expected.shape, expected.stride(), expected.dtype, expected.device, expected.requires_grad), kwargs
        assert got.data_ptr() != given.data_ptr() or given.numel() == 0
    # what it does not take itself is torch.empty_like's, with torch's own errors
    assert cxx.empty_like(x, requires_grad=True).requires_grad
    with pytest.raises(TypeError):
        cxx.empty_like(x, dtype="float32")


def test_a_kept_plan_switches_softmax_and_the_replays_allocation_to_it(cxx, module, recording, monkeypatch):
    from .test_launcher import fake_kernel_compiled
    from .test_replay import FakeKernel, record

    monkeypatch.setattr(replay, "OWN_LAUNCHER", True)
    monkeypatch.setattr(replay, "CXX_REPLAYED", True)
    monkeypatch.setattr(replay, "PLANS", {})
    monkeypatch.setattr(replay, "replayed", replay.python_replayed)
    replay.replayed_from_cxx.cache_clear()
    try:
        kernel, x = FakeKernel(), torch.randn(5, 40)
        kernel.compiled, recording.parameters = fake_kernel_compiled(), 7
        y = torch.empty_like(x)
        own = replay.make_plan(record(kernel, x, y, None), x, y, None, x, None, stream_of=lambda device: 0x5)
        replay.keep(replay.plan_key(x, -1, None, None, False, "fused"), own)
        glue = replay.replay_glue()
        assert replay.replayed is cxx.replayed and [glue[0], glue[3]] == [cxx.empty_like, cxx.address_of]
        x2 = torch.randn(5, 40)
        y2 = softmax_bench.softmax(x2, variant="fused")
        x3 = torch.randn(5, 40).as_subclass(Sub)  # the Replay's own: allocated and read as before, by torch
        y3 = own(x3, None, None)
        assert type(y3) is Sub
        ((_, _, _, stream, params, _), (*_, params3, _)) = recording.launches
        assert stream == 0x5 and params[:3] == [x2.data_ptr(), y2.data_ptr(), x2.data_ptr()] and y2.shape == x2.shape
        assert params3[:3] == [x3.data_ptr(), y3.data_ptr(), x3.data_ptr()]
        with pytest.raises(ValueError):  # an address_of that is not replayed.cpp's
            module.configure(*replay.replay_glue()[:3], object())
    finally:
        module.configure(torch.empty_like, torch.contiguous_format, replay._runtime_knobs())
        replay.replayed_from_cxx.cache_clear()


def test_a_build_that_fails_is_said_once_and_the_python_look_up_stays(monkeypatch):
    import triton.runtime.build

    def no_compiler(src, name, library_dirs=None, include_dirs=None, libraries=None, ccflags=None, language="c"):
        raise RuntimeError("Failed to find C++ compiler")  # as Triton 3.8's says it

    monkeypatch.setattr(triton.runtime.build, "compile_module_from_src", no_compiler)
    monkeypatch.setattr(replay, "replayed", replay.python_replayed)
    replay.cxx_built.cache_clear()
    replay.replayed_from_cxx.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            assert replay.replayed_from_cxx() is False and replay.replayed_from_cxx() is False
        assert [str(w.message) for w in said] == [
            "softmax_bench: replayed.cpp could not be built (RuntimeError: Failed to find C++ compiler); replayed "
            "calls are looked up in Python"]
        assert replay.replayed is replay.python_replayed
    finally:
        replay.cxx_built.cache_clear()
        replay.replayed_from_cxx.cache_clear()


def test_a_triton_whose_build_helper_builds_c_alone_is_said_so(monkeypatch):
    import triton.runtime.build

    monkeypatch.setattr(triton.runtime.build, "compile_module_from_src", helper_building_c_alone)
    replay.cxx_built.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match=r"replayed.cpp could not be built \(RuntimeError: Triton .*'s build "
                                                r"helper builds C alone\)"):
            assert replay.cxx_built() is None
    finally:
        replay.cxx_built.cache_clear()


@pytest.mark.parametrize("setting, interpreted, helper_builds_cxx, switched", [
    (None, False, True, True),  # unset, on a GPU, Triton 3.8's helper: on
    (None, True, True, False),  # unset, the interpreter: off
    (None, False, False, False),  # unset, Triton 3.6's helper (C alone): off, and nothing said
    (True, True, False, True),  # =1: on wherever it is asked (cxx_built says why it cannot be)
    (False, False, True, False),  # =0: off
], ids=["unset-gpu", "unset-interpreter", "unset-c-alone", "on", "off"])
def test_a_kept_plan_switches_to_it_where_the_setting_says(monkeypatch, setting, interpreted, helper_builds_cxx,
                                                           switched):
    import triton.runtime.build

    switches = []
    monkeypatch.setattr(replay, "CXX_REPLAYED", setting)
    monkeypatch.setattr(replay, "PLANS", {})
    monkeypatch.setattr(replay, "replayed_from_cxx", lambda: switches.append(True) or True)
    monkeypatch.setattr(replay.kernels, "interpreted", lambda: interpreted)
    monkeypatch.setattr(triton.runtime.build, "compile_module_from_src",
                        helper_building_cxx if helper_builds_cxx else helper_building_c_alone)
    replay.cxx_by_default.cache_clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            replay.keep(("a key",), object())
        assert bool(switches) is switched and list(replay.PLANS) == [("a key",)]
    finally:
        replay.cxx_by_default.cache_clear()


def test_env_says_how_a_replayed_call_runs_here_without_building_it(monkeypatch):
    import triton

    cxx = "looked up in C++ (replayed.cpp, built at the first replayed call)"
    monkeypatch.setattr(replay.kernels, "interpreted", lambda: False)
    monkeypatch.setattr(replay, "OWN_LAUNCHER", True)
    monkeypatch.setattr(triton.runtime.build, "compile_module_from_src", helper_building_cxx)
    replay.cxx_by_default.cache_clear()
    try:
        python = "looked up in Python (SOFTMAX_BENCH_CXX_REPLAYED=0)"
        for setting, look_up in [(None, cxx), (True, cxx), (False, python)]:
            monkeypatch.setattr(replay, "CXX_REPLAYED", setting)
            assert replay.replay_path() == f"{look_up}, launched by launcher.c (built at first use)"
        monkeypatch.setattr(replay, "CXX_REPLAYED", None)
        monkeypatch.setattr(triton.runtime.build, "compile_module_from_src", helper_building_c_alone)
        monkeypatch.setattr(replay, "OWN_LAUNCHER", False)
        replay.cxx_by_default.cache_clear()
        assert replay.replay_path() == (f"looked up in Python (Triton {triton.__version__}'s build helper builds C "
                                        "alone), launched by Triton's launcher (SOFTMAX_BENCH_OWN_LAUNCHER=0)")
        monkeypatch.setattr(replay.kernels, "interpreted", lambda: True)
        assert replay.replay_path().startswith("not replayed")
    finally:
        replay.cxx_by_default.cache_clear()


def test_torchs_headers_are_built_as_the_c_plus_plus_they_require():
    assert replay.cxx_standard("2.14.1+cu130") == replay.cxx_standard("2.13.0") == ["-std=c++20"]
    assert replay.cxx_standard("2.11.0+cu128") == replay.cxx_standard("2.12.0a0+git1234") == []


@pytest.mark.skipif(DEVICE != "cuda", reason="launches on a GPU")
@pytest.mark.parametrize("op", [softmax_bench.softmax, softmax_bench.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("form", ["plain", "scaled-masked", "biased", "fp32 out"])
def test_calls_it_serves_give_the_python_served_outputs_bit_for_bit(cxx, monkeypatch, op, form):
    x = torch.randn(64, 4000, dtype=torch.bfloat16, device="cuda")
    kwargs = {"plain": {}, "scaled-masked": dict(scale=0.5, mask=torch.rand(64, 4000, device="cuda") > 0.3),
              "biased": dict(bias=torch.randn(1, 4000, device="cuda")), "fp32 out": dict(dtype=torch.float32)}[form]
    monkeypatch.setattr(replay, "replayed", replay.python_replayed)
    expected = [op(x, **kwargs) for _ in range(3)]  # the third replayed by the Python
    cxx.configure(replay.PLANS, replay.FUSED_CASTS)
    assert cxx.replayed(x, -1, kwargs.get("dtype"), kwargs.get("scale"), kwargs.get("mask"), False, "auto",
                        op is softmax_bench.log_softmax, kwargs.get("bias")) is not None  # a plan it finds
    monkeypatch.setattr(replay, "replayed", cxx.replayed)
    from softmax_bench import launcher

    if launcher.driver_bound() is not None:
        launcher.driver_bound().configure(cxx.empty_like, torch.contiguous_format, replay._runtime_knobs(),
                                          cxx.address_of)
    try:
        got = op(x, **kwargs)
    finally:
        if launcher.driver_bound() is not None:
            launcher.driver_bound().configure(torch.empty_like, torch.contiguous_format, replay._runtime_knobs())
    assert got.dtype == expected[0].dtype and torch.equal(got, expected[0])


def test_a_forward_mode_level_goes_the_long_way(cxx, monkeypatch):
    """Inside torch.autograd.forward_ad's dual level, where x may carry a tangent that a replayed launch would drop,
    neither replayed serves a call (dispatch.through_op sends it through the formula, whose jvp gives the tangent);
    outside it, the same call is served."""
    import torch.autograd.forward_ad as fwAD

    x = torch.randn(4, 8)
    plans = {replay.plan_key(x, -1, None, None, False, "auto"): Served("plain")}
    monkeypatch.setattr(replay, "PLANS", plans)
    cxx.configure(plans, replay.FUSED_CASTS)
    args = (-1, None, None, None, False, "auto", False, None)
    assert cxx.replayed(x, *args)[0] == replay.python_replayed(x, *args)[0] == "plain"
    with fwAD.dual_level():
        for t in (x, fwAD.make_dual(x, torch.ones_like(x))):
            assert cxx.replayed(t, *args) is None and replay.python_replayed(t, *args) is None
    assert cxx.replayed(x, *args)[0] == "plain"
