"""The cluster's rows held in shared memory (kernels/shared_row.py): which rows take it (CPU), what it compiles to
for sm_90 (CPU, no GPU needed), and its numbers against float64 on an sm_90 GPU under Triton ≥ 3.8."""

import os
import subprocess
import sys

import pytest
import torch

import softmax_bench
from softmax_bench.dispatch import clear_caches
from softmax_bench.kernels import Fusion, cluster, shared_row

from .compile_sm90 import REPO, compile_in_subprocess
from .test_bias import reference
from .test_cluster import TOL, on_gpu
from .test_kernels import fresh_randn

N = 262144
BF16_BIASED = (16, 8, False)
FP32_CAUSAL = (16, 8, True)
FP32_SHARED_BIAS = (16, 8, True)


def entry(dtype, n=N, bias_dtype=None, **fusion):
    x = torch.empty(4, n, dtype=dtype)
    if bias_dtype is not None:
        fusion["bias"] = torch.empty(4, n, dtype=bias_dtype)
    return shared_row.shared_row_entry(x, Fusion(**fusion))


@pytest.fixture
def shared_rows(monkeypatch):
    """shared_row.SHARED_ROWS on (as committed; a test may have switched it off), the launch caches cleared around it."""
    monkeypatch.setattr(shared_row, "SHARED_ROWS", True)
    clear_caches()
    yield
    clear_caches()


def test_no_row_is_held_in_shared_memory_with_the_switch_off(monkeypatch):
    monkeypatch.setattr(shared_row, "SHARED_ROWS", False)
    assert entry(torch.bfloat16, bias_dtype=torch.bfloat16, scale=0.125) is None
    assert entry(torch.float32, scale=0.125, causal_m=512) is None


def test_the_rows_measured_faster_in_shared_memory_take_it_and_no_others(shared_rows):
    assert entry(torch.bfloat16, bias_dtype=torch.bfloat16, scale=0.125) == BF16_BIASED
    assert entry(torch.bfloat16, bias_dtype=torch.bfloat16, scale=0.125, log=True) == BF16_BIASED
    assert entry(torch.float32, scale=0.125, causal_m=512) == FP32_CAUSAL
    assert entry(torch.float32, causal_m=512, log=True) == FP32_CAUSAL
    assert entry(torch.bfloat16, n=131072, bias_dtype=torch.bfloat16) is None  # a width not measured
    assert entry(torch.float32, bias_dtype=torch.float32) is None  # a form and dtype not measured
    assert entry(torch.bfloat16, causal_m=512) is None
    assert entry(torch.bfloat16, bias_dtype=torch.float32) is None  # a bias of another dtype: more shared memory
    keep = torch.ones(4, N, dtype=torch.uint8)
    assert entry(torch.bfloat16, bias_dtype=torch.bfloat16, mask=keep) is None
    x, bias = torch.empty(4, N, dtype=torch.bfloat16), torch.empty(1, N, dtype=torch.bfloat16)
    assert shared_row.shared_row_entry(x, Fusion(bias=bias, bias_group=4)) is None  # rows of x share a bias row
    off_grid = torch.empty(4, N + 1, dtype=torch.bfloat16)[:, 1:]
    assert shared_row.shared_row_entry(x, Fusion(bias=off_grid)) is None
    assert shared_row.shared_row_entry(off_grid, Fusion(bias=x)) is None


def test_rows_sharing_a_bias_row_take_shared_memory_only_with_their_switch(shared_rows, monkeypatch):
    """SHARED_BIAS_ROWS (off as committed): a bias whose rows rows of x share takes the full bias's entry in 16-bit
    and SHARED_BIAS_ROW_AT's in fp32 (a full fp32 bias none), on the grid only."""
    x, bias = torch.empty(128, N, dtype=torch.bfloat16), torch.empty(2, N, dtype=torch.bfloat16)
    shared = Fusion(scale=0.125, bias=bias, bias_group=64)
    assert shared_row.SHARED_BIAS_ROWS is False and shared_row.shared_row_entry(x, shared) is None
    monkeypatch.setattr(shared_row, "SHARED_BIAS_ROWS", True)
    assert shared_row.shared_row_entry(x, shared) == BF16_BIASED
    assert shared_row.shared_row_entry(x, Fusion(bias=bias, bias_period=2)) == BF16_BIASED
    off_grid = torch.empty(2, N + 1, dtype=torch.bfloat16)[:, 1:]
    assert shared_row.shared_row_entry(x, Fusion(bias=off_grid, bias_group=64)) is None
    x, bias = x.float(), bias.float()
    assert shared_row.shared_row_entry(x, Fusion(bias=bias, bias_group=64, log=True)) == FP32_SHARED_BIAS
    assert shared_row.shared_row_entry(x, Fusion(bias=torch.empty(128, N))) is None


def test_every_entry_fills_whole_chunks_of_its_ctas():
    for (_, dtype), widths in shared_row.SHARED_ROW_AT.items():
        for n, (ctas, warps, _) in widths.items():
            assert n % (ctas * 32 * warps * 16 // dtype.itemsize) == 0, (dtype, n)


def test_shared_row_may_be_imported_before_cluster():
    """cluster imports shared_row last, and shared_row builds its kernel of cluster's pieces: a fresh process that
    imports shared_row first gets both (the tests' server forks from a process that has imported cluster already)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    code = "import softmax_bench.kernels.shared_row as s; print(s.cluster.launch)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "function launch" in done.stdout, done.stderr[-2000:]


@pytest.mark.skipif(not hasattr(shared_row, "shared_row_kernel"), reason="this Triton has no Gluon")
def test_a_launch_passes_the_kernel_every_argument_it_takes(shared_rows, monkeypatch):
    """The launch's arguments bind to shared_row_kernel's parameters (a GPU alone would launch it): the fusion's as
    masking.fusion_args gives them, the bias's floor blended as cluster.BIAS_BLEND says, the entry's ONLINE."""
    import inspect

    bound = []

    def recorded(kernel, grid, *args, **kwargs):
        kwargs = {k: v for k, v in kwargs.items() if k not in ("num_ctas", "num_warps")}
        bound.append(inspect.signature(kernel.fn).bind(*args, **kwargs).arguments)

    monkeypatch.setattr(shared_row, "launch_kernel", recorded)
    x, bias = torch.zeros(4, N, dtype=torch.bfloat16), torch.zeros(4, N, dtype=torch.bfloat16)
    fusion = Fusion(scale=0.125, bias=bias, log=True)
    shared_row.launch(x, torch.empty_like(x), fusion, shared_row.shared_row_entry(x, fusion))
    x = torch.zeros(4, N, dtype=torch.float32)
    fusion = Fusion(scale=0.125, causal_m=4)
    shared_row.launch(x, torch.empty_like(x), fusion, shared_row.shared_row_entry(x, fusion))
    biased, causal = bound
    assert biased["bias_ptr"] is bias and biased["HAS_BIAS"] and biased["BIAS_BLEND"] and biased["LOG"]
    assert biased["BIAS_MIN"] == torch.finfo(torch.bfloat16).min and not biased["ONLINE"]
    assert (biased["NCHUNK"], biased["CHUNK"]) == (N // (16 * 2048), 2048) == (biased["n_chunks"], 2048)
    assert causal["CAUSAL"] and causal["causal_m"] == 4 and causal["ONLINE"] and "bias_ptr" not in causal
    assert not causal.get("BIAS_BLEND") and (causal["NCHUNK"], causal["CHUNK"]) == (16, 1024)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    cases = [{"kernel": "shared_row", "dtype": "bf16", "N": N, "scale": 0.125, "bias": True, "log": log, **shared}
             for log in (False, True) for shared in ({}, {"shared": True})]
    cases += [{"kernel": "shared_row", "dtype": "fp32", "N": N, "scale": 0.125, "bias": True, "shared": True,
               "log": log} for log in (False, True)]
    cases += [{"kernel": "shared_row", "dtype": "fp32", "N": N, "scale": 0.125, "causal": True, "log": log}
              for log in (False, True)]
    return compile_in_subprocess(cases, tmp_path_factory.mktemp("shared_row"))


def test_compiled_for_sm90_copies_its_share_in_16_bytes_a_thread_and_fits_three_ctas_an_sm(compiled):
    """Each chunk's copies (x's, and a 16-bit x's bias's: an fp32 x's is read from global memory at each pass) are
    one 16-byte cp.async a thread; one exchange (a push of the max and one of the sum); no spill; three CTAs' shared
    memory in an SM's 228 KB (1 KB of each reserved), and their threads' registers in its 64K."""
    for case in compiled:
        warps, tensors = case["warps"], 2 if case.get("bias") and case["dtype"] == "bf16" else 1
        chunks = N // (case["ctas"] * 32 * warps * 16 // (2 if case["dtype"] == "bf16" else 4))
        assert case["async_copies"] == chunks * tensors, case
        assert case["st_async"] == 2 and case["spill_bytes"] == 0, case
        assert 3 * (case["shared_bytes"] + 1024) <= 228 * 1024, case
        assert 3 * 32 * warps * case["registers"] <= 65536, case


def held_in_shared_memory(x, **kwargs):
    """cluster's launch of x's rows: (y, whether they were held in shared memory)."""
    fusion = Fusion(scale=kwargs.get("scale", 1.0), causal_m=kwargs.get("causal_m"), bias=kwargs.get("bias"),
                    log=kwargs.get("log", False))
    y, launch = cluster.launch(x, fusion)
    return y, launch.config.get("held") == "shared"


@on_gpu
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_biased_rows_in_shared_memory_match_float64(log, shared_rows):
    """A bias of x's shape: with a positive and a negative scale; -inf, NaN and the dtype's minimum (masking, as -inf
    does) in it; a row biased to the minimum everywhere gives zeros (-inf); y as the register-held rows give it,
    within the dtype's tolerance, and each element the float64 result rounded once (a softmax's 16-bit output)."""
    x, seed = fresh_randn(6, N, dtype=torch.bfloat16)
    bias, _ = fresh_randn(6, N, dtype=torch.bfloat16)
    low = torch.finfo(torch.bfloat16).min
    bias[1, ::5] = low
    bias[2] = low
    bias[3, 7] = float("-inf")
    bias[4, N // 3] = float("nan")
    for scale in (0.125, -0.5):
        y, held = held_in_shared_memory(x, scale=scale, bias=bias, log=log)
        assert held
        expected = reference(x, bias, scale, None, log)
        torch.testing.assert_close(y.double().cpu(), expected, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1],
                                   equal_nan=True, msg=lambda m: f"seed {seed}, scale {scale}: {m}")
        assert bool(y[4].isnan().all()) and not bool(y[[0, 1, 2, 3, 5]].isnan().any())
        assert bool((y[2] == (float("-inf") if log else 0)).all())
        rows = [0, 1, 3, 5]
        equal = (y[rows].cpu() == expected[rows].to(torch.bfloat16)).double().mean().item()
        assert equal >= 0.999, f"seed {seed}: {equal:.3%} of the elements equal the result rounded once"


@on_gpu
@pytest.mark.parametrize("queries", [5, 512])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_causal_rows_in_shared_memory_match_float64(queries, log, shared_rows, monkeypatch):
    """Causal fp32 rows (bottom-right, `queries` queries: row r keeps columns up to r mod queries + N − queries),
    the ONLINE pass: zeros (-inf) past the diagonal, against float64 and against the register-held rows."""
    x, seed = fresh_randn(2 * queries if queries < 64 else queries, N, dtype=torch.float32)
    x[1] -= 300  # the CTAs of its kept columns hold values far below 0: their exponentials must not underflow to 0
    y, held = held_in_shared_memory(x, scale=0.125, causal_m=queries, log=log)
    assert held
    cols = torch.arange(N)
    keep = cols <= (torch.arange(x.shape[0]) % queries)[:, None] + N - queries
    expected = reference(x, torch.zeros(1, N), 0.125, keep, log)
    torch.testing.assert_close(y.double().cpu(), expected, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1],
                               msg=lambda m: f"seed {seed}: {m}")
    call = softmax_bench.log_softmax if log else softmax_bench.softmax
    if queries == x.shape[0]:  # (softmax_bench's causal rows take x's rows as the queries)
        monkeypatch.setattr(shared_row, "SHARED_ROWS", False)
        clear_caches()
        in_registers = call(x, scale=0.125, causal=True, variant="cluster")
        torch.testing.assert_close(y, in_registers, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1])


@on_gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_rows_sharing_a_bias_row_in_shared_memory_give_the_expanded_bias_result(dtype, log, shared_rows,
                                                                                monkeypatch):
    """SHARED_BIAS_ROWS on: rows of x sharing bias rows (row r reads (r // 2) mod 3 of three) held in shared memory,
    with the dtype's minimum and -inf in a row and a half row at the minimum (CTAs with nothing kept): within the
    dtype's tolerance of float64, and the rows of a full bias, each row its own (expanded): bit for bit in bf16,
    where those are held in shared memory too; within the tolerance in fp32, where they are held in registers."""
    monkeypatch.setattr(shared_row, "SHARED_BIAS_ROWS", True)
    x, seed = fresh_randn(12, N, dtype=dtype)
    rows, _ = fresh_randn(3, N, dtype=dtype)
    low = torch.finfo(dtype).min
    rows[1, ::5] = low
    rows[2, : N // 2] = low
    rows[2, N // 2 + 7] = float("-inf")
    expanded = rows[(torch.arange(12, device=rows.device) // 2) % 3]
    y, launch = cluster.launch(x, Fusion(scale=0.125, bias=rows, bias_group=2, bias_period=3, log=log))
    assert launch.config.get("held") == "shared"
    expected = reference(x, expanded, 0.125, None, log)
    torch.testing.assert_close(y.double().cpu(), expected, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1],
                               msg=lambda m: f"seed {seed}: {m}")
    y_full, held = held_in_shared_memory(x, scale=0.125, bias=expanded, log=log)
    if dtype == torch.bfloat16:
        assert held and torch.equal(y, y_full), f"seed {seed}"
    else:
        torch.testing.assert_close(y, y_full, atol=TOL[x.dtype][0], rtol=TOL[x.dtype][1])
