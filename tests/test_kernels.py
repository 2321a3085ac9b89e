"""Every variant against a float64 reference, on CPU through Triton's interpreter or on the GPU."""

import os
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

import softmax_bench
from softmax_bench import kernels
from softmax_bench.dispatch import as_rows, auto_choice
from softmax_bench.kernels import TOLERANCES, Fusion, fused, interpreted, online, split, two_pass

from .compile_sm90 import printed_without_interpreter
from .conftest import DEVICE, runnable_variants

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
VARIANTS = runnable_variants()
TRITON_VARIANTS = runnable_variants(triton_only=True)
ZERO_MASKED_VARIANTS = runnable_variants(zero_masked_only=True)
# Powers of two, one below and one above; 4097 / 8193 / 16385 cross two_pass's and online's chunk boundaries.
WIDTHS = [1, 2, 31, 32, 33, 127, 128, 129, 1000, 1023, 1024, 1025, 4095, 4096, 4097, 8193, 16385]


def fresh_randn(*shape, dtype=torch.float32, scale=3.0):
    """Fresh random data for every call (never zeros); the seed is returned so a failure can be replayed."""
    seed = int.from_bytes(os.urandom(4), "little")
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=generator, dtype=torch.float64) * scale
    return x.to(dtype).to(DEVICE), seed


def reference(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """float64 softmax on CPU; all -inf slices are zeros (the Triton variants' contract)."""
    x64 = x.double().cpu()
    all_masked = (x64 == float("-inf")).all(dim=dim, keepdim=True)
    ref = torch.softmax(x64, dim=dim)
    return torch.where(all_masked, torch.zeros_like(ref), ref)


def assert_matches(y: torch.Tensor, x: torch.Tensor, dim: int = -1, msg=None) -> None:
    assert y.dtype == x.dtype and y.shape == x.shape and y.device == x.device
    atol, rtol = TOLERANCES[x.dtype]
    torch.testing.assert_close(y.double().cpu(), reference(x, dim), atol=atol, rtol=rtol, equal_nan=True, msg=msg)


@pytest.mark.parametrize("N", WIDTHS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_rows_match_float64(variant, dtype, N):
    if not softmax_bench.variants()[variant].supports(N, dtype):
        pytest.skip(f"{variant} does not support N={N}")
    x, seed = fresh_randn(3, N, dtype=dtype)
    y = softmax_bench.softmax(x, variant=variant)
    assert_matches(y, x, msg=lambda m: f"seed {seed}: {m}")
    # Each element is within rtol · y of the truth (its rounding to the dtype), and the truths sum to 1: so does the
    # row, within rtol — whatever N (N · rtol, the old bound, passed 1 for bf16 from N = 63).
    sums = y.double().sum(dim=-1).cpu()
    torch.testing.assert_close(sums, torch.ones_like(sums), atol=TOLERANCES[dtype][1], rtol=0)
    assert bool(((y >= 0) & (y <= 1)).all())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", VARIANTS)
def test_special_rows(variant, dtype):
    """A huge value (exp without the max shift overflows), rows mixing -inf and finite, M = 1 rows, N = 1."""
    x, _ = fresh_randn(4, 300, dtype=dtype)
    x[0, 17] = 1000.0
    x[1, ::2] = float("-inf")
    x[2, :-1] = float("-inf")  # one finite value: it gets all the mass
    x[3, 5] = -1000.0
    y = softmax_bench.softmax(x, variant=variant)
    assert_matches(y, x)
    assert float(y[0, 17]) == pytest.approx(1.0)
    assert float(y[2, -1]) == 1.0
    assert bool((y[1, ::2] == 0).all())

    assert_matches(softmax_bench.softmax(x[1:2], variant=variant), x[1:2])
    ones = softmax_bench.softmax(fresh_randn(5, 1, dtype=dtype)[0], variant=variant)
    assert bool((ones == 1).all())


@pytest.mark.parametrize("N", [1, 32, 1025, 5000])
@pytest.mark.parametrize("variant", ZERO_MASKED_VARIANTS)
def test_all_masked_rows_give_zeros(variant, N):
    x, _ = fresh_randn(3, N)
    x[1] = float("-inf")
    y = softmax_bench.softmax(x, variant=variant)
    assert bool((y[1] == 0).all()), "a fully masked row must give zeros, not NaN"
    assert_matches(y, x)


def test_eager_gives_nan_on_all_masked_rows_as_documented():
    x = torch.full((2, 8), float("-inf"), device=DEVICE)
    assert not softmax_bench.variants()["eager"].masked_rows_zero
    assert bool(softmax_bench.softmax(x, variant="eager").isnan().all())


@pytest.mark.parametrize("variant", VARIANTS)
def test_nan_stays_in_its_row(variant):
    x, _ = fresh_randn(3, 700)
    x[1, 300] = float("nan")
    y = softmax_bench.softmax(x, variant=variant)
    assert bool(y[1].isnan().all())
    assert not bool(y[0].isnan().any()) and not bool(y[2].isnan().any())
    assert_matches(y[::2], x[::2])


@pytest.mark.parametrize("variant", VARIANTS)
def test_any_rank_and_dim(variant):
    x, _ = fresh_randn(4, 6, 50)
    # dispatch moves dim last and hands every variant 2-D rows: in the interpreter, fused (and eager, torch's) go
    # through every dim, another variant through one that moves (split at dim 0 is 300 rows of K programs: 20 s)
    every = DEVICE == "cuda" or variant in ("fused", "eager")
    for dim in (-1, 2, 1, 0, -3) if every else (1,):
        assert_matches(softmax_bench.softmax(x, dim=dim, variant=variant), x, dim=dim)
    scalar = torch.tensor(2.5, device=DEVICE)
    assert softmax_bench.softmax(scalar, variant=variant).item() == 1.0
    vector, _ = fresh_randn(77)
    assert_matches(softmax_bench.softmax(vector, variant=variant), vector)


@pytest.mark.parametrize("variant", VARIANTS)
def test_non_contiguous_inputs(variant):
    base, _ = fresh_randn(12, 130)  # rows of 65 (every other column), 130 × 12 (transposed), 100 (offset 3), 130
    for x in (base[:, ::2], base.t(), base[:, 3:103], base[::3], base[5:6].expand(7, 130)):
        assert_matches(softmax_bench.softmax(x, variant=variant), x)
    assert_matches(softmax_bench.softmax(base.t(), dim=0, variant=variant), base.t(), dim=0)


def test_row_strided_input_is_not_copied():
    base, _ = fresh_randn(10, 64)
    rows = as_rows(base[:, 8:40])
    assert rows.data_ptr() == base[:, 8:40].data_ptr() and rows.stride() == (64, 1)


@pytest.mark.parametrize("variant", VARIANTS)
def test_empty_tensors(variant):
    for shape in [(0, 5), (5, 0), (2, 0, 3), (0,)]:
        x = torch.empty(shape, device=DEVICE)
        y = softmax_bench.softmax(x, dim=-1, variant=variant)
        assert y.shape == x.shape and y.dtype == x.dtype


def test_fused_packs_several_narrow_rows_per_program():
    x, _ = fresh_randn(100, 32)  # 100 rows: the second program's tile is partly past the last row
    y, launch = fused.launch(x)
    assert launch.config["ROWS"] > 1 and 100 % launch.config["ROWS"] != 0
    assert_matches(y, x)
    assert fused.launch_config(1000, 4096)["ROWS"] == 1
    # 4 KB of input a program: 1024 fp32 values, 2048 16-bit ones
    assert [fused.launch_config(1 << 20, 512, dtype)["ROWS"] for dtype in (torch.float32, torch.bfloat16)] == [2, 4]


def test_forward_loads_evict_last_but_where_measured_slower_and_plain_when_set(monkeypatch):
    """fused's launch and a cluster's config load evict_last (reported in the launch's config), but fused's causal
    rows narrower than CAUSAL_EVICT_FROM and the cluster configurations of PLAIN_LOADS (LOG_PLAIN_LOADS' too for a
    log_softmax); SOFTMAX_BENCH_FORWARD_EVICT=plain loads plainly everywhere. The output is the same either way."""
    from softmax_bench.kernels import cluster

    x, _ = fresh_randn(6, 300)
    y, launch = fused.launch(x)
    assert launch.config["EVICT"] == "evict_last"
    assert_matches(y, x)
    causal = Fusion(causal_m=6)
    assert "EVICT" not in fused.launch(x, causal)[1].config
    assert fused.forward_evict(fused.CAUSAL_EVICT_FROM, causal) == "evict_last"
    assert cluster.config_for(65536, torch.bfloat16).evict == "evict_last"
    assert 151936 in cluster.PLAIN_LOADS[("causal", torch.bfloat16)]
    assert cluster.config_for(151936, torch.bfloat16, Fusion(scale=0.125, causal_m=7)).evict == ""
    # LOG_PLAIN_LOADS: a form's log_softmax loads plainly where its softmax does and at its own measured widths
    assert cluster.config_for(151936, torch.bfloat16, Fusion(scale=0.125, causal_m=7, log=True)).evict == ""
    assert cluster.config_for(151936, torch.float32, Fusion(scale=0.125, causal_m=7, log=True)).evict == ""
    assert cluster.config_for(151936, torch.float32, Fusion(scale=0.125, causal_m=7)).evict == "evict_last"
    monkeypatch.setattr(kernels, "FORWARD_EVICT", "")  # SOFTMAX_BENCH_FORWARD_EVICT=plain
    y, launch = fused.launch(x)
    assert "EVICT" not in launch.config
    assert_matches(y, x)
    assert cluster.config_for(65536, torch.bfloat16).evict == ""


def test_a_forward_evict_setting_not_understood_is_an_error_that_says_what_is():
    """SOFTMAX_BENCH_FORWARD_EVICT=evict_first: the package imports; a forward launch raises a ValueError that says
    what to set, and the CLI exits 2 with it in one line, no traceback."""
    env = {**os.environ, "SOFTMAX_BENCH_FORWARD_EVICT": "evict_first"}
    said = "SOFTMAX_BENCH_FORWARD_EVICT='evict_first': set it to plain, or evict_last (the default), or leave it unset"
    code = """
import torch
from softmax_bench.kernels import cluster, fused
for launch in (lambda: fused.launch(torch.randn(4, 8)), lambda: cluster.config_for(65536, torch.bfloat16)):
    try:
        launch()
    except ValueError as error:
        print(error)
"""
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [said, said]
    result = subprocess.run([sys.executable, "-m", "softmax_bench", "runs"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == f"error: {said}" and "Traceback" not in result.stdout


def test_fused_warps_follow_the_bytes_a_program_holds():
    """4 warps for up to 8 KB of input a program (2048 fp32 values, 4096 16-bit ones), then 8 and 16 by elements."""
    warps = {(N, dtype): fused.launch_config(1 << 20, N, dtype)["num_warps"]
             for N in (32, 2048, 4096, 8192, 16384) for dtype in (torch.float32, torch.bfloat16, torch.float16)}
    assert [warps[N, torch.float32] for N in (32, 2048, 4096, 8192, 16384)] == [4, 4, 8, 8, 16]
    assert [warps[N, torch.bfloat16] for N in (32, 2048, 4096, 8192, 16384)] == [4, 4, 4, 8, 16]
    assert warps[4096, torch.float16] == 4
    y = torch.softmax(fresh_randn(3, 4096, dtype=torch.bfloat16)[0], -1)
    assert fused.launch(y)[1].config["num_warps"] == 4


def test_biased_programs_of_8_to_32_kb_run_two_16_byte_vectors_a_thread():
    """A bias is a third stream: a biased program of 8 to 32 KB of input runs as many warps as give each thread two
    16-byte vectors of the row (at most 32; one a thread lost 3–12 points on the H200); other programs, a plain
    row's warps. The launch runs them."""
    from softmax_bench.ops import OPS

    biased = OPS["biased"].fusion_for(torch.empty(2, 8, device="meta"))  # launch_config reads that it has a bias

    def warps(N, dtype, fusion=kernels.PLAIN):
        return fused.launch_config(1 << 20, N, dtype, fusion)["num_warps"]
    widths = (1024, 2048, 4096, 8192, 16384, 32768)
    assert [warps(N, torch.float32, biased) for N in widths] == [4, 8, 16, 32, 16, 16]
    assert [warps(N, torch.bfloat16, biased) for N in widths] == [4, 4, 8, 16, 32, 16]
    assert [warps(N, torch.float32) for N in widths] == [4, 4, 8, 8, 16, 16]
    for N, dtype in ((2048, torch.float32), (4096, torch.bfloat16), (4096, torch.float32), (8192, torch.bfloat16)):
        config = fused.launch_config(1 << 20, N, dtype, biased)
        assert config["BLOCK_N"] * config["ROWS"] * dtype.itemsize // (32 * config["num_warps"]) == 32
    x = fresh_randn(4, 4096, dtype=torch.bfloat16)[0]
    assert fused.launch(x, OPS["biased"].fusion_for(x))[1].config["num_warps"] == 8
    assert fused.launch(x)[1].config["num_warps"] == 4


def test_fused_config_is_one_for_every_m_of_its_class():
    """launch_config is kept per min(M, a program's elements) rows: more rows than that change nothing."""
    for M in (1, 3, 100, 1023, 1024, 1025, 2047, 2048, 2049, 5000, 2**20):
        for N in (1, 32, 700, 4096, 32768):
            for dtype in (torch.float32, torch.bfloat16):
                assert fused.launch_config(M, N, dtype) == fused._launch_config.__wrapped__(M, N, dtype.itemsize)


@pytest.mark.parametrize("module", [two_pass, online])
def test_chunked_variants_walk_several_chunks(module):
    x, _ = fresh_randn(2, 3 * 4096 + 5)
    y, launch = module.launch(x)
    assert launch.config["BLOCK"] < x.shape[1]  # the loop really ran more than one chunk
    assert_matches(y, x)


def test_traffic_models():
    M, N = 1024, 4096
    one_pass = 2 * M * N * 2
    variants = softmax_bench.variants()
    assert variants["fused"].traffic(M, N, torch.bfloat16).total_bytes == one_pass
    assert variants["eager"].traffic(M, N, torch.bfloat16).total_bytes == one_pass
    # rows of 8 KB: two_pass's second read, online's stored exponentials and split's second read stay in L2
    for name in ("two_pass", "online", "split"):
        traffic = variants[name].traffic(M, N, torch.bfloat16)
        assert one_pass <= traffic.total_bytes < 1.01 * one_pass and traffic.l2_bytes >= M * N * 2, name
    # rows of 128 KB: two_pass reads twice and online reads and writes twice, from HBM
    wide = 65536
    assert variants["two_pass"].traffic(M, wide, torch.bfloat16).total_bytes == 3 * M * wide * 2
    online_wide = variants["online"].traffic(M, wide, torch.bfloat16)
    assert online_wide.read_bytes > 2 * M * wide * 2 and online_wide.write_bytes > 2 * M * wide * 2
    assert online_wide.l2_bytes == 0
    # unfused in fp32: max 4 + subtract 4+4 + exp 4+4 + sum 4 + divide 4+4 = 32 bytes an element
    assert variants["unfused"].traffic(M, N, torch.float32).total_bytes == 32 * M * N


def test_auto_rule_without_a_table_picks_by_width():
    cpu = torch.device("cpu")  # no GPU, no table: the rule
    assert auto_choice(4096, torch.float32, cpu)[0] == "fused"
    assert auto_choice(262144, torch.bfloat16, cpu)[0] == "two_pass"  # cluster runs on a GPU only


def test_auto_rule_without_a_table_takes_cluster_from_32768_where_it_runs(monkeypatch):
    """On a GPU with no table (an H100 under Triton 3.8), cluster from N = 32768, which fused still holds but runs
    behind at (dispatch.RULE_CLUSTER_FROM); fused below it, and at it wherever cluster does not run."""
    from dataclasses import replace

    from softmax_bench import dispatch

    registry = softmax_bench.variants()
    monkeypatch.setattr(dispatch, "_table_of", lambda device: None)
    gpu = torch.device("cuda")  # only asked its type: no GPU needed
    for runs, picks in ((True, {16384: "fused", 32768: "cluster", 65536: "cluster"}),
                        (False, {16384: "fused", 32768: "fused", 65536: "two_pass"})):
        cluster = replace(registry["cluster"], here=lambda: None if runs else "no sm_90 here")
        monkeypatch.setattr(dispatch, "variants", lambda: {**registry, "cluster": cluster})
        for N, variant in picks.items():
            for dtype in (torch.bfloat16, torch.float32):
                assert dispatch.auto_choice(N, dtype, gpu, capturing=False)[0] == variant, (runs, N, dtype)
    x, _ = fresh_randn(2, 70000)
    assert_matches(softmax_bench.softmax(x), x)


# Many segments a row and several blocks a segment, at interpreter cost.
SMALL_SPLIT = split.SplitConfig(block=64, num_warps=1, per_sm=1, segment_bytes=256, l2_budget=1 << 20)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("N", [1, 7, 64, 65, 129, 1021])
def test_split_rows_over_several_programs(dtype, N):
    """N not a multiple of the chunk, rows starting off a 16-byte boundary (odd N), several rows a group; 1021: 16
    of SMALL_SPLIT's 256-byte segments, the last partial."""
    x, seed = fresh_randn(5, N, dtype=dtype)
    y, launch = split.launch(x, config=SMALL_SPLIT)
    assert launch.config["K"] == split.split_of(N, dtype, SMALL_SPLIT).K
    if interpreted():
        assert launch.config["groups"] < 5  # each group of programs takes several rows in turn
    assert_matches(y, x, msg=lambda m: f"seed {seed}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_split_partial_segments_masked_rows_and_nan(dtype):
    x, _ = fresh_randn(6, 1000, dtype=dtype)
    x[0] = float("-inf")  # a whole row: zeros
    x[1, :500] = float("-inf")  # whole segments of a row: their partial sums are 0
    x[2, 999] = 500.0  # the max in the row's last, partial vector
    x[3, 0] = 500.0  # the max in its first
    x[4, 640] = float("nan")
    y, _ = split.launch(x, config=SMALL_SPLIT)
    assert bool((y[0] == 0).all()) and bool(y[4].isnan().all())
    assert float(y[2, 999]) == 1.0 and float(y[3, 0]) == 1.0
    assert_matches(y[:4], x[:4])
    assert_matches(y[5:], x[5:])


def test_split_row_strides_that_break_alignment():
    """Rows whose starts fall at different offsets from y's are copied first; aligned strides are read in place."""
    base, _ = fresh_randn(4, 1003)  # rows start at 0, 3, 2 and 1 elements past a 16-byte boundary
    for x in (base[:, :1000], base[:, 1:], base[::2, 3:]):
        y, _ = split.launch(x, config=SMALL_SPLIT)
        assert_matches(y, x)


def test_split_exchange_epochs_never_repeat():
    exchange = split.Exchange(torch.full((4,), 7 << 32, dtype=torch.int64), epoch=7)
    assert exchange.next_epoch() == 8
    exchange.epoch = 2**31 - 1  # the next epoch would overflow int32: words are cleared and epochs start over
    assert exchange.next_epoch() == 1 and bool((exchange.words == 0).all())


def test_split_grid_fits_what_the_gpu_holds_at_once():
    h200 = types.SimpleNamespace(regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048,
                                 shared_memory_per_multiprocessor=233472)
    compiled = lambda regs, shared: types.SimpleNamespace(n_regs=regs, metadata=types.SimpleNamespace(shared=shared))
    assert split.occupancy(compiled(102, 1024), 16, h200) == 1  # 102 · 512 threads > half the 65536 registers
    assert split.occupancy(compiled(64, 1024), 8, h200) == 4
    assert split.occupancy(compiled(32, 0), 4, h200) == 16  # threads, not registers, limit it
    assert split.occupancy(compiled(32, 100_000), 4, h200) == 2  # shared memory limits it


def test_split_and_two_pass_forward_and_backward_move_16_byte_vectors_on_sm90():
    """Compiled for the H200 without a GPU: loads and stores of rows of any width are 16-byte vectors (N is not
    known to be a multiple of anything, as for N = 50257)."""
    code = """
import re
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from softmax_bench.kernels import split, two_pass, two_pass_backward
from tests.compile_sm90 import signature_of
for kernel in (split.split_kernel, two_pass.two_pass_kernel, two_pass_backward.two_pass_backward_kernel):
    for dtype, vec in (("fp32", 4), ("bf16", 8)):
        pointers = {"x_ptr": "*" + dtype, "y_ptr": "*" + dtype, "dy_ptr": "*" + dtype, "dx_ptr": "*" + dtype,
                    "mask_ptr": "*u8", "word_ptr": "*i64", "scale": "fp32"}
        constexprs = {"BLOCK": 4096, "VEC": vec, "K_POW2": 8, "PHASE": 0,
                      "HAS_SCALE": False, "HAS_MASK": False, "CAUSAL": False, "LOG": False}
        constexprs = {name: value for name, value in constexprs.items() if name in kernel.arg_names}
        # What Triton specializes at launch: 16-byte aligned pointers, SEG (a multiple of the block) divisible by 16.
        aligned = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]]
                   for name in [*pointers, "SEG"] if name != "scale" and name in kernel.arg_names}
        source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, pointers), constexprs=constexprs,
                           attrs=aligned)
        ptx = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8}).asm["ptx"]
        # e.g. ld.global.L1::evict_last.L2::cache_hint.v4.b32
        vectors = (len(re.findall(op + r"\\.global[.\\w:]*\\.v4\\.", ptx)) for op in ("ld", "st"))
        print(kernel.__name__, dtype, *vectors)
"""
    lines = printed_without_interpreter("-c", code, timeout=300)
    assert len(lines) == 6, lines
    for line in lines:
        kernel, dtype, loads, stores = line.split()
        assert int(loads) > 0 and int(stores) > 0, line


# --- bad input: the message says what to do ------------------------------------------------------------


def test_integer_and_bool_tensors_are_refused():
    for dtype in (torch.int64, torch.int32, torch.bool):
        with pytest.raises(TypeError, match="x.float()"):
            softmax_bench.softmax(torch.ones(2, 3, dtype=dtype, device=DEVICE))


def test_float64_runs_torchs_softmax_and_a_triton_variant_says_it_takes_none():
    x = torch.randn(2, 3, dtype=torch.float64, device=DEVICE)
    assert softmax_bench.dispatch.auto_choice(3, torch.float64)[0] == "eager"
    torch.testing.assert_close(softmax_bench.softmax(x), torch.softmax(x, dim=-1), atol=0, rtol=0)
    with pytest.raises(TypeError, match="float64 with variant='auto' or 'eager'"):
        softmax_bench.softmax(x, variant="fused")


def test_dim_out_of_range():
    """A ValueError that says what to use, and the IndexError torch raises (code written for torch catches it)."""
    for error in (ValueError, IndexError):
        with pytest.raises(error, match=r"use a dim in \[-2, 1\]"):
            softmax_bench.softmax(torch.ones(2, 3, device=DEVICE), dim=2)
    with pytest.raises(IndexError):
        torch.softmax(torch.ones(2, 3, device=DEVICE), dim=2)


def test_an_integer_x_is_refused_as_torch_refuses_it():
    """A TypeError that says what to convert to, and the NotImplementedError torch's kernels raise."""
    x = torch.ones(2, 3, dtype=torch.int64, device=DEVICE)
    for error in (TypeError, NotImplementedError):
        with pytest.raises(error, match="convert it first"):
            softmax_bench.softmax(x)
    with pytest.raises(NotImplementedError):
        torch.softmax(x, -1)


def test_a_dim_of_any_integer_type_is_read_as_torch_reads_it():
    """A NumPy integer or an integer tensor of one element names a dim, as torch's __index__ reads it; a bool, a
    float tensor and a float do not (torch refuses them too)."""
    x = torch.randn(2, 3, device=DEVICE)
    for dim in (np.int64(0), np.int32(-1), torch.tensor(1)):
        for ours, torchs in ((softmax_bench.softmax, torch.softmax), (softmax_bench.log_softmax, torch.log_softmax)):
            torch.testing.assert_close(ours(x, dim), torchs(x, int(dim)), atol=1e-6, rtol=1e-5)
    for dim in (True, torch.tensor(0.5), 1.0):
        with pytest.raises(TypeError, match="dim must be an int"):
            softmax_bench.softmax(x, dim)


def test_it_stands_in_for_torchs_functional_softmax_in_torchs_modules(monkeypatch):
    """torch.nn.Softmax, LogSoftmax and Softmax2d call F.softmax(input, dim, _stacklevel=5): with F's functions
    patched to ours, the modules run ours and give torch's values. dim=None's deprecation warning names the frame
    torch's names at the same _stacklevel."""
    import warnings

    import torch.nn.functional as F

    x = torch.randn(2, 3, 4, 5, device=DEVICE)
    modules = (torch.nn.Softmax(dim=1), torch.nn.LogSoftmax(dim=-1), torch.nn.Softmax2d())
    expected = [module(x) for module in modules]
    ran = []
    monkeypatch.setattr(F, "softmax", lambda *a, **k: ran.append("softmax") or softmax_bench.softmax(*a, **k))
    monkeypatch.setattr(F, "log_softmax", lambda *a, **k: ran.append("log") or softmax_bench.log_softmax(*a, **k))
    for module, y_ref in zip(modules, expected):
        torch.testing.assert_close(module(x), y_ref, atol=1e-6, rtol=1e-5)
    assert ran == ["softmax", "log", "softmax"]
    monkeypatch.undo()

    def warned_at(call) -> list:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        return [(w.filename, w.lineno) for w in caught if "Implicit dimension" in str(w.message)]

    def outer(fn, **stacklevel):
        return inner(fn, **stacklevel)  # _stacklevel=4 names this line

    def inner(fn, **stacklevel):
        return fn(x, dim=None, **stacklevel)  # the default _stacklevel (3) names this one

    for ours, torchs in ((softmax_bench.softmax, F.softmax), (softmax_bench.log_softmax, F.log_softmax)):
        for stacklevel in ({}, {"_stacklevel": 4}):
            where = warned_at(lambda: outer(ours, **stacklevel))
            assert len(where) == 1 and where == warned_at(lambda: outer(torchs, **stacklevel)), stacklevel
            assert where[0][0] == __file__


def test_a_scale_of_any_real_type_is_taken_and_a_tensor_says_how():
    x = torch.randn(2, 3, device=DEVICE)
    for scale in (np.float32(0.5), np.float64(0.5), 0.5):
        torch.testing.assert_close(softmax_bench.softmax(x, scale=scale), torch.softmax(x * 0.5, -1))
    with pytest.raises(TypeError, match=r"scale must be a number, got Tensor \(a 0-d tensor: pass scale.item\(\)\)"):
        softmax_bench.softmax(x, scale=torch.tensor(0.5))


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"dim": "a"}, "dim must be an int, got str 'a'"), ({"dim": 1.0}, "dim must be an int, got float 1.0"),
    ({"variant": None}, "variant must be a str, one of fused, cluster"),
    ({"dtype": "fp32"}, "dtype must be a torch.dtype or None, got str"),
])
def test_an_argument_of_the_wrong_type_is_a_type_error_naming_it(kwargs, words):
    with pytest.raises(TypeError) as err:
        softmax_bench.softmax(torch.ones(2, 3, device=DEVICE), **kwargs)
    assert words in str(err.value)


def test_a_meta_tensor_gives_the_outputs_shape_and_dtype():
    """Shapes only, as torch.compile's fake tensors: no kernel runs, no data is read."""
    x = torch.empty(2, 4, 8, device="meta", dtype=torch.bfloat16)
    y = softmax_bench.softmax(x, 1, scale=0.5)
    assert y.device.type == "meta" and y.shape == x.shape and y.dtype == torch.bfloat16
    assert softmax_bench.log_softmax(x, -1, torch.float32).dtype == torch.float32


def test_unknown_variant_lists_known_ones():
    with pytest.raises(ValueError, match="known variants: fused, cluster, split, two_pass, online, eager, unfused, auto"):
        softmax_bench.softmax(torch.ones(2, 3, device=DEVICE), variant="fastest")


def test_fused_refuses_rows_past_its_register_budget():
    with pytest.raises(ValueError, match="two_pass"):
        softmax_bench.softmax(torch.ones(1, fused.MAX_N + 1, device=DEVICE), variant="fused")


def test_cpu_tensor_for_triton_variant_outside_interpreter():
    code = (
        "import torch, softmax_bench\n"
        "softmax_bench.softmax(torch.randn(2, 3), variant='fused')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "needs a CUDA tensor" in result.stderr and "TRITON_INTERPRET=1" in result.stderr


# --- 64-bit offsets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", TRITON_VARIANTS)
def test_row_offsets_past_2_31_elements(variant):
    """Three rows 2^30 elements apart: row 2 starts at element 2^31, which int32 offsets would wrap."""
    stride = 2**30
    storage = torch.empty(2 * stride + 256, dtype=torch.float16, device=DEVICE)
    x = storage.as_strided((3, 256), (stride, 1))
    x.copy_(fresh_randn(3, 256, dtype=torch.float16)[0])
    assert_matches(softmax_bench.softmax(x, variant=variant), x)


@pytest.mark.skipif(DEVICE != "cuda", reason="needs a GPU: 2^31 + elements through the interpreter is too slow")
@pytest.mark.parametrize("variant", TRITON_VARIANTS)
def test_tensor_of_more_than_2_31_elements(variant):
    N = 4096
    M = 2**31 // N + 3
    x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    y = softmax_bench.softmax(x, variant=variant)
    assert_matches(y[-4:], x[-4:])
    assert_matches(y[:2], x[:2])


@pytest.mark.skipif(DEVICE != "cuda", reason="registers are known only for compiled kernels")
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fused_does_not_spill_up_to_its_declared_limit(dtype):
    x = torch.randn(64, fused.MAX_N, dtype=dtype, device="cuda")
    _, launch = fused.launch(x)
    assert launch.n_regs is not None and launch.n_regs <= 255
    assert launch.n_spills == 0


def test_the_hosts_cdiv_and_next_power_of_2_are_tritons():
    """kernels.cdiv and kernels.next_power_of_2 stand in for Triton's (constexpr functions in Triton 3.8, slow on
    the host) in the launch configurations: the same values, an empty row's 0 included."""
    import triton

    for n in [*range(0, 4200), 50257, 65535, 65536, 65537, 151936, 262144, (1 << 31) - 1, 1 << 31, (1 << 31) + 1]:
        assert kernels.next_power_of_2(n) == triton.next_power_of_2(n), n
        for d in (1, 7, 16, 1024):
            assert kernels.cdiv(n, d) == triton.cdiv(n, d), (n, d)


def test_the_launch_configurations_of_a_new_width_call_no_constexpr_function_of_tritons(monkeypatch):
    """What a call of a width not seen before computes on the host asks kernels.cdiv and kernels.next_power_of_2,
    not Triton's (constexpr functions in Triton 3.8: ~1.8 µs a call on a CPU, against 0.08)."""
    import triton

    from softmax_bench.kernels import cluster, cross_entropy, fused_backward, two_pass_backward

    def refused(*args, **kwargs):
        raise AssertionError("a constexpr function of Triton's called on the host")

    monkeypatch.setattr(triton, "next_power_of_2", refused)
    monkeypatch.setattr(triton, "cdiv", refused)
    for cached in (fused._launch_config, fused_backward._launch_config, two_pass.launch_config,
                   two_pass_backward.launch_config, split.split_of, cross_entropy.launch_config):
        cached.cache_clear()  # each width computed here, not found in a cache an earlier test filled
    for N in (4001, 4093, 20011):
        for dtype in (torch.bfloat16, torch.float32):
            fused.launch_config(7, N, dtype)
            fused_backward.launch_config(7, N, dtype)
            two_pass.launch_config(N, dtype)
            two_pass_backward.launch_config(N, dtype)
            split.split_of(N, dtype, split.CONFIGS[dtype])
            cluster.layout(N, 4, 4, dtype, "packed")
            cross_entropy.launch_config(N, dtype, with_grad=True)
            online.traffic(7, N, dtype)
