"""softmax_bench.launcher, the replayed calls' own C launch: what it passes the CUDA driver, checked on any machine
with a driver made of ctypes functions that record their calls; that a launcher that cannot be built is said once
and leaves replays to Triton's; and on a GPU, that a plan launched by it gives what Triton's launch gives, bit for
bit."""

import ctypes
import re
import struct
import warnings
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
import torch

import softmax_bench
from softmax_bench import dispatch, launcher, replay

from .conftest import DEVICE

# fused_rows_kernel's parameters as Triton 3.8 compiles a bf16 softmax for sm_90 (the PTX's .entry, whole)
FUSED_ENTRY = """.visible .entry fused_rows_kernel(
	.param .u64 .ptr .global .align 1 fused_rows_kernel_param_0,
	.param .u64 .ptr .global .align 1 fused_rows_kernel_param_1,
	.param .u32 fused_rows_kernel_param_2,
	.param .u32 fused_rows_kernel_param_3,
	.param .u32 fused_rows_kernel_param_4,
	.param .u32 fused_rows_kernel_param_5,
	.param .f32 fused_rows_kernel_param_6,
	.param .u64 .ptr .global .align 1 fused_rows_kernel_param_7,
	.param .u32 fused_rows_kernel_param_8,
	.param .u32 fused_rows_kernel_param_9,
	.param .u32 fused_rows_kernel_param_10,
	.param .u32 fused_rows_kernel_param_11,
	.param .u64 .ptr .global .align 1 fused_rows_kernel_param_12,
	.param .u64 .ptr .global .align 1 fused_rows_kernel_param_13
)
{
	.reg .pred 	%p<2>;"""


def test_the_parameters_are_read_from_the_ptx_as_declared():
    assert launcher.ptx_parameters(FUSED_ENTRY, "fused_rows_kernel") == (8, 8, 4, 4, 4, 4, 4, 8, 4, 4, 4, 4, 8, 8)
    with pytest.raises(launcher.Unsupported, match="no .entry other"):
        launcher.ptx_parameters(FUSED_ENTRY, "other")


def test_each_type_is_encoded_as_the_kernel_reads_it():
    def encode(kind, value):
        return launcher.encoder(kind)(value)

    assert encode("i32", -2) == struct.pack("<i", -2) + bytes(4)
    assert encode("i1", True) == struct.pack("<i", 1) + bytes(4)  # Triton passes i1 as a 32-bit int
    assert encode("i64", 2**40) == struct.pack("<q", 2**40)
    assert encode("fp32", 0.1) == struct.pack("<f", 0.1) + bytes(4)
    assert encode("bf16", 1.5) == bytes.fromhex("c03f") + bytes(6)  # the upper half of 1.5's float32
    assert encode("fp16", 1.5) == bytes.fromhex("003e") + bytes(6)
    assert encode("*bf16", None) == bytes(8) and encode("*u8", 7) == struct.pack("<Q", 7)
    with pytest.raises(launcher.Unsupported, match="nvTmaDesc"):
        encode("nvTmaDesc", None)
    ptx = ".entry k(\n\t.param .u32 k_param_0\n)"
    assert launcher.pack(["u32"], ptx, "k", [7], ()) == (struct.pack("<I", 7) + bytes(4), ())
    with pytest.raises(launcher.Unsupported, match="-1 as a parameter of type u32"):  # not a crash of the call
        launcher.pack(["u32"], ptx, "k", [-1], ())


@pytest.fixture
def module():
    built = launcher.built()
    if built is None:
        if DEVICE == "cuda":
            pytest.fail("softmax_bench's launcher was not built on a GPU machine")
        pytest.skip("no C compiler or Python headers here: the launcher cannot be built")
    return built


UINT = ctypes.c_uint
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, UINT, UINT, UINT, UINT, UINT, UINT, UINT, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
LAUNCH_EX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                             ctypes.c_void_p)
CONTEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
DEVICE_GET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int)
RETAIN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int)
SET_CONTEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
ERROR_STRING = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))


class LaunchConfig(ctypes.Structure):  # cuda.h's CUlaunchConfig
    _fields_ = [("grid", UINT * 3), ("block", UINT * 3), ("shared", UINT), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("num_attrs", UINT)]


ATTRIBUTE_BYTES = 72  # cuda.h's CUlaunchAttribute: its id, padded to 8 bytes, and a union of 64


class RecordingDriver:
    """The CUDA driver's functions launcher.c calls, as ctypes functions that record each launch: (grid, block,
    shared, stream, the parameters' first 8 bytes each, the attributes' (id, their first 3 uint32)); `fail` makes
    the launches return that error; `context` is what cuCtxGetCurrent gives (None: no context on the thread)."""

    def __init__(self, parameters: int):
        self.launches, self.fail, self.context, self.made_current = [], 0, 1, []
        self.parameters = parameters

        def read(params):
            return [ctypes.cast(params[i], ctypes.POINTER(ctypes.c_uint64))[0] for i in range(self.parameters)]

        def launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            self.launches.append(((gx, gy, gz), (bx, by, bz), shared, stream, read(params), []))
            return self.fail

        def launch_ex(config, function, params, extra):
            c = LaunchConfig.from_address(config)
            attrs = [(struct.unpack_from("<i", raw)[0], struct.unpack_from("<3I", raw, 8))
                     for raw in (ctypes.string_at(c.attrs + i * ATTRIBUTE_BYTES, ATTRIBUTE_BYTES)
                                 for i in range(c.num_attrs))]
            self.launches.append((tuple(c.grid), tuple(c.block), c.shared, c.stream, read(params), attrs))
            return self.fail

        def context(out):
            out[0] = self.context
            return 0

        def device_get(out, ordinal):
            out[0] = 100 + ordinal
            return 0

        def retain(out, device):
            out[0] = device
            return 0

        def set_context(context):
            self.made_current.append(context)
            return 0

        def error_string(status, out):
            out[0] = b"an error made up"
            return 0

        self.functions = (CONTEXT(context), DEVICE_GET(device_get), RETAIN(retain), SET_CONTEXT(set_context),
                          LAUNCH(launch), LAUNCH_EX(launch_ex), ERROR_STRING(error_string))

    def addresses(self):
        return [ctypes.cast(f, ctypes.c_void_p).value for f in self.functions]


@pytest.fixture
def recording(module, monkeypatch):
    """A RecordingDriver bound for fused's 14 parameters; the real driver bound again afterwards, on a GPU."""
    driver = RecordingDriver(14)
    module.bind_driver(*driver.addresses())
    monkeypatch.setattr(launcher, "driver_bound", lambda: module)
    yield driver
    module.bind_driver(*[0] * 7)
    monkeypatch.undo()
    launcher.driver_bound.cache_clear()
    if DEVICE == "cuda":
        assert launcher.driver_bound() is not None


def fused_compiled(num_ctas: int = 1, shared: int = 16):
    """A compiled fused_rows_kernel as Triton 3.8 keeps it (signature, PTX, metadata), for a launch with x, y, M,
    N, the two strides, a scale, no mask pointer (x given for it), mask_stride, mask_period, bias_stride and
    bias_period; its constexprs where they are."""
    kinds = ["*bf16", "*bf16", "i32", "i32", "i32", "i32", "fp32", "*bf16", "i32", "constexpr", "constexpr",
             "i32", "i32", "constexpr", "i32"]
    return SimpleNamespace(src=SimpleNamespace(signature={f"a{i}": kind for i, kind in enumerate(kinds)}),
                           asm={"ptx": FUSED_ENTRY}, function=0xF00,
                           metadata=SimpleNamespace(name="fused_rows_kernel", num_warps=4, num_ctas=num_ctas,
                                                    shared=shared),
                           run=SimpleNamespace(global_scratch_size=0, profile_scratch_size=0, gsan_enabled=False,
                                               launch_cooperative_grid=False, launch_pdl=False))


# fused_compiled's launch: x, y, mask (x for it) as tensors; the rest as the template holds them
TEMPLATE = [None, None, 64, 4000, 4000, -4000, 0.125, None, 0, 64, 1, 7, 0, None, 3]
SLOTS = ((0, replay.X), (1, replay.Y), (7, replay.X))


def test_a_launch_passes_the_driver_each_parameter_and_the_tensors_of_its_call(recording):
    launch = launcher.make_launch(fused_compiled(), (16,), TEMPLATE, SLOTS, 0)
    x, y = torch.randn(64, 4000), torch.empty(64, 4000)
    launch(0xABC, x, y, None, None)
    ((grid, block, shared, stream, params, attrs),) = recording.launches
    assert grid == (16, 1, 1) and block == (128, 1, 1) and shared == 16 and stream == 0xABC and attrs == []
    expected = [x.data_ptr(), y.data_ptr(), 64, 4000, 4000, 2**32 - 4000,
                struct.unpack("<I", struct.pack("<f", 0.125))[0], x.data_ptr(), 0, 7, 0, 3, 0, 0]
    assert params == expected  # the constexprs left out, the two scratch pointers Triton adds NULL
    launch(0xABC, 1 << 20, 2 << 20, None, None)  # addresses as ints, as Triton's launch takes them too
    assert recording.launches[1][4][:2] == [1 << 20, 2 << 20] and recording.launches[1][4][7] == 1 << 20


def test_a_cluster_launches_with_its_dimension_and_a_spread_schedule(recording):
    launch = launcher.make_launch(fused_compiled(num_ctas=4, shared=65536), (16,), TEMPLATE, SLOTS, 0)
    launch(0, torch.randn(2), torch.randn(2), None, None)
    ((grid, block, shared, _, _, attrs),) = recording.launches
    cluster, policy = 4, 5  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, ..._CLUSTER_SCHEDULING_POLICY_PREFERENCE
    assert grid == (64, 1, 1) and block == (128, 1, 1) and shared == 65536  # Triton's: the grid times the cluster
    assert attrs == [(cluster, (4, 1, 1)), (policy, (1, 0, 0))]  # CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1


def test_a_cooperative_grid_and_dependent_launch_are_asked_for_where_triton_keeps_them(recording):
    compiled = fused_compiled()
    compiled.run.launch_pdl = True  # Triton 3.8: on its launcher
    del compiled.run.launch_cooperative_grid
    compiled.metadata.launch_cooperative_grid = True  # earlier Tritons: in the metadata
    launcher.make_launch(compiled, (2,), TEMPLATE, SLOTS, 0)(0, torch.randn(2), torch.randn(2), None, None)
    ((grid, _, _, _, _, attrs),) = recording.launches
    serialization, cooperative = 6, 2  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, ..._COOPERATIVE
    assert grid == (2, 1, 1) and attrs == [(serialization, (1, 0, 0)), (cooperative, (1, 0, 0))]


def test_a_thread_without_a_context_gets_the_devices_primary_one(recording):
    recording.context = None
    launcher.make_launch(fused_compiled(), (1,), TEMPLATE, SLOTS, 3)(0, torch.randn(2), torch.randn(2), None, None)
    assert recording.made_current == [103] and len(recording.launches) == 1


def test_a_failed_launch_raises_with_the_drivers_words(recording):
    launch = launcher.make_launch(fused_compiled(), (1,), TEMPLATE, SLOTS, 0)
    recording.fail = 700
    with pytest.raises(RuntimeError, match=r"launching a replayed kernel failed: CUDA error 700 \(an error made up\)"):
        launch(0, torch.randn(2), torch.randn(2), None, None)
    with pytest.raises(TypeError, match=r"\(stream, x, y, mask, bias, \*scratch\)"):
        launch(0, torch.randn(2))


def test_a_launch_takes_a_scratch_buffer_after_the_four_tensors(recording):
    """A slot of source SCRATCH (a buffer of the call's own, the first) takes the fifth tensor; a call that gives
    four is refused so, and a slot past the two scratch buffers is no Launch's."""
    launch = launcher.make_launch(fused_compiled(), (1,), TEMPLATE, ((0, replay.X), (1, replay.Y),
                                                                    (7, replay.SCRATCH)), 0)
    x, y, copies = torch.randn(2), torch.randn(2), torch.randn(3)
    launch(0, x, y, None, None, copies)
    assert recording.launches[0][4][7] == copies.data_ptr()
    assert launch.params(x, y, None, None, copies)[7] == copies.data_ptr()
    with pytest.raises(TypeError, match="takes x, y, mask, bias and 1 scratch buffers"):
        launch(0, x, y, None, None)
    with pytest.raises(ValueError, match="4-5 for scratch"):
        launcher.make_launch(fused_compiled(), (1,), TEMPLATE, ((7, replay.SCRATCH + 2),), 0)


@pytest.mark.parametrize("change, reason", [
    (lambda c: setattr(c.metadata, "num_ctas", 16), "a cluster of 16"),
    (lambda c: setattr(c.metadata, "shared", 228 * 1024 + 1), "233473 bytes of shared memory"),
    (lambda c: setattr(c.run, "global_scratch_size", 8), "scratch memory"),
    (lambda c: c.src.signature.update(a0="nvTmaDesc"), "nvTmaDesc"),
    (lambda c: c.src.signature.pop("a14"), "signature that does not match"),
    (lambda c: c.asm.update(ptx=re.sub(r",\s*\.param [^,]*_param_1[123]", "", FUSED_ENTRY)),
     "11 parameters in the PTX for 12 arguments"),
    (lambda c: delattr(c, "src"), "not where Triton 3.8 keeps them"),
], ids=["cluster16", "oversized-shared", "scratch", "tma", "signature", "ptx", "no-src"])
def test_launches_it_does_not_take_are_refused_so(recording, change, reason):
    compiled = fused_compiled()
    change(compiled)
    with pytest.raises(launcher.Unsupported, match=reason):
        launcher.make_launch(compiled, (1,), TEMPLATE, SLOTS, 0)


def test_a_value_its_parameter_cannot_hold_is_refused_so(recording):
    too_wide = [*TEMPLATE[:3], 1 << 40, *TEMPLATE[4:]]  # N as an i32
    with pytest.raises(launcher.Unsupported, match="1099511627776 as a parameter of type i32"):
        launcher.make_launch(fused_compiled(), (1,), too_wide, SLOTS, 0)


def test_a_launcher_that_cannot_be_built_is_said_once_and_replays_go_through_triton(monkeypatch, tmp_path):
    broken = tmp_path / "launcher.c"
    broken.write_text("this is not C\n")
    monkeypatch.setattr(launcher, "SOURCE", broken)
    launcher.built.cache_clear()
    launcher.driver_bound.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="its launcher could not be built .*launch through Triton's"):
            assert launcher.driver_bound() is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert launcher.driver_bound() is None  # said once
        with pytest.raises(launcher.Unsupported, match="no launcher built"):
            launcher.make_launch(fused_compiled(), (1,), TEMPLATE, SLOTS, 0)
    finally:
        launcher.built.cache_clear()
        launcher.driver_bound.cache_clear()


def test_a_missing_driver_is_said_once(module):
    launcher.driver_bound.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="CUDA driver's functions were not found"):
            assert launcher.driver_bound("libno-such-driver.so.1") is None
    finally:
        launcher.driver_bound.cache_clear()


@contextmanager
def listening():
    """A launch hook listening (a profiler's) while inside, as Triton keeps them."""
    runtime, hook = replay._runtime_knobs(), lambda metadata: None
    chain = runtime.launch_enter_hook
    if hasattr(chain, "add"):  # Triton ≥ 3.7: a chain of hooks
        chain.add(hook)
        try:
            yield
        finally:
            chain.remove(hook)
    else:
        runtime.launch_enter_hook = hook
        try:
            yield
        finally:
            runtime.launch_enter_hook = chain


def test_a_replay_allocates_y_asks_the_stream_and_launches_unless_a_hook_listens(module, recording):
    from .test_replay import KeptPlan

    module.configure(torch.empty_like, torch.contiguous_format, replay._runtime_knobs())
    launch, fallback, streams = launcher.make_launch(fused_compiled(), (16,), TEMPLATE, SLOTS, 0), KeptPlan(), []
    own = module.Replay((launch, launch), fallback, lambda device: streams.append(device) or 0xABC, 3, None)
    x = torch.randn(64, 4000)
    y = own(x, None, None)
    assert y.shape == x.shape and y.dtype == x.dtype and y.data_ptr() != x.data_ptr() and streams == [3]
    assert [(stream, params[:2]) for _, _, _, stream, params, _ in recording.launches] == \
        [(0xABC, [x.data_ptr(), y.data_ptr()])] * 2
    assert own.launches == (launch, launch) and own.plan is fallback and not fallback.calls
    # y in a dtype of its own (a cast fused into the store) is contiguous, whatever x's layout
    x_t = torch.randn(40, 64, dtype=torch.bfloat16).t()
    y = module.Replay((launch,), fallback, lambda device: 0, 0, torch.float32)(x_t, None)
    assert y.dtype == torch.float32 and y.shape == (64, 40) and y.is_contiguous()
    with listening():  # a profiler: the Plan, through Triton's launch, which calls the hooks
        assert torch.equal(own(x, None, None), torch.full_like(x, 7.0))
    assert len(fallback.calls) == 1 and len(recording.launches) == 3
    recording.fail = 700
    with pytest.raises(RuntimeError, match="launching a replayed kernel failed: CUDA error 700"):
        own(x, None, None)
    with pytest.raises(TypeError, match="Launches"):
        module.Replay((fallback,), fallback, lambda device: 0, 0, None)


def fake_kernel_compiled():
    """test_replay's FakeKernel compiled as Triton 3.8 keeps a kernel (x, y, the mask, N, scale; BLOCK and FLAG
    constexprs), with its PTX's .entry: what launcher.make_launch reads."""
    from .test_replay import FakeCompiled

    compiled = FakeCompiled()
    kinds = ["*fp32", "*fp32", "*fp32", "i32", "fp32", "constexpr", "constexpr"]
    params = ",".join(f".param .{kind} k_param_{i}" for i, kind in enumerate(["u64", "u64", "u64", "u32", "f32",
                                                                              "u64", "u64"]))
    compiled.src = SimpleNamespace(signature={f"a{i}": kind for i, kind in enumerate(kinds)})
    compiled.asm, compiled.function = {"ptx": f".visible .entry k({params})\n{{"}, 0xF00
    compiled.metadata = SimpleNamespace(name="k", num_warps=4, num_ctas=1, shared=0)
    return compiled


def test_a_plan_the_launcher_takes_is_a_replay(module, recording, monkeypatch):
    from .test_replay import FakeKernel, record

    monkeypatch.setattr(replay, "OWN_LAUNCHER", True)
    kernel, x = FakeKernel(), torch.randn(5, 40)
    kernel.compiled, recording.parameters = fake_kernel_compiled(), 7
    y = torch.empty_like(x)
    own = replay.make_plan(record(kernel, x, y, None), x, y, None, x, None, stream_of=lambda device: 0x5)
    assert isinstance(own.plan, replay.Plan) and len(own.launches) == 1
    x2 = torch.randn(5, 40)
    y2 = own(x2, None)
    ((grid, _, _, stream, params, _),) = recording.launches
    assert grid == (5, 1, 1) and stream == 0x5 and not kernel.compiled.calls
    half = struct.unpack("<I", struct.pack("<f", 0.5))[0]
    assert params[:5] == [x2.data_ptr(), y2.data_ptr(), x2.data_ptr(), 40, half]  # x for the absent mask


def test_a_plan_with_scratch_is_a_replay_that_allocates_its_own_at_each_call(module, recording, monkeypatch):
    """A call that lays a shared mask out in phase copies (kernels.scratch names them) launches the copies' kernel,
    then the softmax on them: its Replay allocates copies at each call (its `scratch`), hands the same buffer to
    both launches and the call's mask to the first."""
    from softmax_bench.kernels import launch_kernel, scratch

    from .test_replay import FakeKernel

    monkeypatch.setattr(replay, "OWN_LAUNCHER", True)
    kernel, x, mask = FakeKernel(), torch.randn(5, 40), torch.rand(5, 40) > 0.5
    kernel.compiled, recording.parameters = fake_kernel_compiled(), 7
    y = torch.empty_like(x)
    with replay.recording() as launches:
        copies = scratch(torch.empty(10, 48))
        launch_kernel(kernel, (10,), mask.view(torch.uint8), copies, copies, 40, 1.0, BLOCK=64)
        launch_kernel(kernel, (5,), x, y, copies, 40, 0.5, BLOCK=64)
    own = replay.make_plan(launches, x, y, mask, x, mask, stream_of=lambda device: 0x5)
    assert isinstance(own.plan, replay.Plan) and len(own.launches) == 2 and len(own.scratch) == 1
    made = own.scratch[0]()
    assert made.shape == (10, 48) and made.dtype == torch.float32 and made.device == x.device
    x2, mask2 = torch.randn(5, 40), torch.rand(5, 40) > 0.5
    y2 = own(x2, mask2)
    (_, _, _, _, to_copies, _), (_, _, _, _, to_softmax, _) = recording.launches
    assert to_copies[:3] == [mask2.data_ptr(), to_copies[1], to_copies[1]] and to_copies[1] != copies.data_ptr()
    assert to_softmax[:3] == [x2.data_ptr(), y2.data_ptr(), to_copies[1]]
    assert not kernel.compiled.calls  # launched from C


def test_a_plan_whose_launch_the_launcher_does_not_take_keeps_tritons(monkeypatch):
    from .test_replay import FakeKernel, record

    monkeypatch.setattr(replay, "OWN_LAUNCHER", True)
    monkeypatch.setattr(launcher, "driver_bound", launcher.built)  # no driver asked for (none on a CPU machine)
    kernel, x = FakeKernel(), torch.randn(5, 40)
    y = torch.empty_like(x)
    plan = replay.make_plan(record(kernel, x, y, None), x, y, None, x, None, stream_of=lambda device: "stream")
    assert type(plan) is replay.Plan  # FakeCompiled has no signature or PTX
    plan(torch.randn(5, 40), None)
    assert len(kernel.compiled.calls) == 1


GPU = pytest.mark.skipif(DEVICE != "cuda", reason="launches on a GPU")


@GPU
@pytest.mark.parametrize("op", [softmax_bench.softmax, softmax_bench.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("variant, N", [("fused", 4000), ("fused", 16384), ("two_pass", 50257), ("cluster", 65536),
                                        ("cluster", 131072), ("auto", 4000)])  # (split is not replayed: not graph-safe)
def test_a_plan_launched_by_it_gives_what_tritons_launch_gives_bit_for_bit(monkeypatch, op, variant, N):
    if not softmax_bench.variants()[variant if variant != "auto" else "fused"].supports(N, torch.bfloat16):
        pytest.skip(f"{variant} does not run here")
    cases = [({}, (64, N)), ({"mask": True, "scale": 0.125}, (8, N)), ({"causal": True, "scale": 0.5}, (8, N)),
             ({"bias": True}, (8, N))]
    for kwargs, shape in cases:
        x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
        if kwargs.get("mask"):
            kwargs = {**kwargs, "mask": torch.rand(shape, device="cuda") > 0.3}
        if kwargs.get("bias"):
            kwargs = {**kwargs, "bias": torch.randn(shape, device="cuda", dtype=torch.bfloat16)}
        results = {}
        for own in (False, True):
            monkeypatch.setattr(replay, "OWN_LAUNCHER", own)
            dispatch.clear_caches()
            for _ in range(2):  # called once, then recorded
                op(x, variant=variant, **kwargs)
            (plan,) = replay.PLANS.values()
            # cluster's 131072 runs some forms in a cluster of 16, which the launcher leaves to Triton's (MAX_CTAS)
            if not own or not (variant == "cluster" and N == 131072):
                assert isinstance(plan, replay.Plan) != own, "the launcher did not take the launch" if own else own
            results[own] = op(x, variant=variant, **kwargs)  # replayed
        torch.cuda.synchronize()
        assert torch.equal(results[True], results[False]), kwargs
        dispatch.clear_caches()
