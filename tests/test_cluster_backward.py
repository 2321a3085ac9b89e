"""cluster's backward, and cluster's log_softmax: the launch arithmetic, the choice of backward and the compiled code on
CPU; their numbers on an sm_90 GPU under Triton ≥ 3.8 (skipped elsewhere, as tests/test_cluster.py's)."""

import functools

import pytest
import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.kernels import (DTYPES, GRAD_TOLERANCES, PLAIN, Fusion, backward_traffic, backwards, cluster,
                                   cluster_backward, fused_backward)
from softmax_bench.kernels.aligned import vector_elems, window_lanes

from .compile_sm90 import cases_here, compile_in_subprocess
from .conftest import DEVICE
from .test_backward import grad_of_output
from .test_cluster import assert_one_exchange_no_spills, on_gpu
from .test_fusion import causal_keep
from .test_kernels import fresh_randn
from .test_log_softmax import assert_matches as assert_log_matches

DTYPE_LIST = list(DTYPES.values())
# Widths of the wide and vocabulary shapes, odd and prime ones, and the widest the backward holds.
WIDTHS = [16385, 32768, 50257, 65537, 131072, 151936, 262144]


# --- launch arithmetic and choice (CPU) ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [cluster.MIN_N, *WIDTHS, 100003, 128256, 196608, cluster_backward.BACKWARD_CAPACITY])
def test_a_thread_holds_half_of_the_forwards_elements_of_each_row(N, dtype):
    how = "fp32" if dtype == torch.float32 else "packed"
    for fusion in (PLAIN, Fusion(scale=0.5, causal_m=7, log=True)):
        config = cluster_backward.config_for(N, dtype, fusion)
        lanes = window_lanes(N, dtype)
        assert config.ctas * config.step >= lanes and config.span >= config.step, "the cluster covers the window"
        assert config.step % vector_elems(dtype) == 0 and (config.ctas - 1) * config.step < N
        per_thread = config.span // (32 * config.num_warps)
        assert per_thread <= cluster.MAX_PER_THREAD[how][config.num_warps] // 2, "y's and dy's lanes: half each"
        assert len(config.pieces) <= cluster.MAX_PIECES[how]


def test_declared_limits_and_traffic():
    backward = backwards()["cluster"]
    M, N = 4, 65536
    assert backward.traffic(M, N, torch.bfloat16, PLAIN).total_bytes == 3 * M * N * 2  # read y and dy, write dx
    assert backward.max_n is None
    if cluster.why_not_here() is None:
        assert backward.supports(cluster_backward.BACKWARD_CAPACITY, torch.float32)
        assert not backward.supports(cluster_backward.BACKWARD_CAPACITY + 1, torch.float32)
        assert "use two_pass" in backward.unsupported(cluster_backward.BACKWARD_CAPACITY - 1, torch.bfloat16)
    else:
        assert backward.unsupported(N, torch.float32) == cluster.why_not_here()


def test_backward_for_a_wide_row_is_clusters_where_it_runs(monkeypatch):
    forward = softmax_bench.variants()
    registry = backwards()
    above_fused = fused_backward.MAX_N + 1
    if cluster.why_not_here() is not None:  # here: Triton < 3.8, no sm_90 GPU or the interpreter
        assert dispatch.backward_for(forward["fused"], fused_backward.MAX_N, torch.bfloat16) is registry["fused"]
        assert dispatch.backward_for(forward["cluster"], above_fused, torch.bfloat16) is registry["two_pass"]
    monkeypatch.setattr(cluster, "why_not_here", lambda: None)
    assert dispatch.backward_for(forward["fused"], 8192, torch.bfloat16) is registry["fused"]  # cluster: N > 8192
    assert dispatch.backward_for(forward["fused"], 16384, torch.bfloat16) is registry["cluster"]
    for name in ("cluster", "two_pass", "split"):  # after any Triton forward
        assert dispatch.backward_for(forward[name], above_fused, torch.bfloat16) is registry["cluster"]
        assert dispatch.backward_for(forward[name], 151936, torch.float32) is registry["cluster"]
    too_wide = cluster_backward.BACKWARD_CAPACITY + 1
    assert dispatch.backward_for(forward["cluster"], too_wide, torch.float32) is registry["two_pass"]
    assert dispatch.backward_for(forward["eager"], above_fused, torch.float32) is registry["eager"]


def test_sweep_and_explain_list_the_cluster_backward(tmp_path):
    from softmax_bench.explain import explain
    from softmax_bench.providers import providers

    names = [p.name for p in providers([], ["backward"]) if p.pass_ == "backward"]
    assert "cluster" in names
    (cluster_provider,) = [p for p in providers(["cluster"], ["backward"])]
    assert cluster_provider.traffic(2, 65536, torch.bfloat16, PLAIN).total_bytes == 3 * 2 * 65536 * 2
    lines = {line.name: line for line in explain(2048, 65536, "bf16", tmp_path, DEVICE == "cpu").backward_lines}
    assert lines["cluster"].read_bytes == 2 * 2048 * 65536 * 2 and lines["cluster"].write_bytes == 2048 * 65536 * 2


# --- compiled code (CPU, for sm_90) --------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_compiled_for_sm90_one_exchange_no_spills(tmp_path, exhaustive):
    """Compiled for the H200 without a GPU, at the widths of the wide and vocabulary shapes, each holding (fp32;
    16-bit packed), softmax and log_softmax, plain and with a scale (log_softmax: and a causal mask): y and dy move in
    16-byte vectors, loaded evict_last, the partial sum is pushed with one st.async, the cluster barrier is met once,
    and nothing spills."""
    plain = [{"kernel": "backward", "dtype": dtype, "N": N, "log": log, "scale": 0.5}
             for dtype in ("fp32", "bf16", "fp16") for N in (32768, 50257, 131072, 151936, 262144)
             for log in (False, True)]
    masked = [{"kernel": "backward", "dtype": dtype, "N": N, "log": True, "causal": True}
              for dtype in ("fp32", "bf16", "fp16") for N in (50257, 151936, 262144)]
    # on CPU: fp32 in one piece and in several, and each 16-bit holding at its narrowest and widest
    kept = {("fp32", 131072), ("fp32", 151936), ("bf16", 262144), ("fp16", 50257)}
    groups = cases_here({"plain": plain, "masked": masked}, {"plain": kept, "masked": kept}, exhaustive)
    plain, masked = groups["plain"], groups["masked"]
    cases = compile_in_subprocess(plain + masked, tmp_path)
    assert len(cases) == len(plain) + len(masked) and masked
    for case in cases:
        assert_one_exchange_no_spills(case, pushes=1)
        assert case["evict_last_loads"] >= case["loads_v4"], case
    by_shape = {(c["dtype"], c["N"], c["log"]): c for c in cases[:len(plain)]}
    for log in (False, True):
        pieces, piece = by_shape["fp32", 151936, log], by_shape["fp32", 131072, log]
        assert pieces["pieces"] > 1 and piece["pieces"] == 1
        assert pieces["cta_barriers"] == piece["cta_barriers"], \
            "the pieces' terms are added within each thread first: one reduction across the CTA, not one a piece"


def test_lean_keep_and_late_y_apply_where_they_can(monkeypatch):
    """cluster_backward.LEAN_KEEP (on) applies to a log_softmax's keep-mask that lies on y's grid and its causal
    rows, not to softmax, a log without either, or a mask off the grid (read a byte at a time as before);
    MASK_EARLY (None) with it, to the keep-mask only, where LATE_Y does not apply. LATE_Y (None) applies to a
    log_softmax's at the cells where it measured ahead, LATE_Y_CELLS: bf16 16384 causal, fp32 128256 causal or
    masked, fp32 131072 and 262144 masked but not causal; True puts it on every backward, softmax's with
    LATE_Y_REGISTERS' cap."""
    keep = torch.ones(4, 1000, dtype=torch.bool)
    log_masked = Fusion(mask=keep.view(torch.uint8), log=True)
    causal = Fusion(causal_m=4, log=True)
    switches = functools.partial(cluster_backward.switches, 1000, torch.float32)
    assert cluster_backward.LEAN_KEEP and cluster_backward.LATE_Y is None and cluster_backward.MASK_EARLY is None
    assert switches(log_masked) == {"LEAN_KEEP": True, "MASK_EARLY": True} and switches(causal) == {"LEAN_KEEP": True}
    late_masked = functools.partial(cluster_backward.switches, 128256, torch.float32)(log_masked)
    assert late_masked == {"LEAN_KEEP": True, "LATE_Y": True}, "MASK_EARLY not where LATE_Y applies"
    off_grid = Fusion(mask=torch.ones(4, 1001, dtype=torch.uint8)[:, 1:], log=True)
    for fusion in (Fusion(log=True), Fusion(scale=0.5, log=True), Fusion(causal_m=4), off_grid, PLAIN):
        assert switches(fusion) == {}, fusion
    late = cluster_backward.late_y
    assert late(16384, torch.bfloat16, causal) and not late(16384, torch.bfloat16, log_masked)
    assert late(128256, torch.float32, causal) and late(128256, torch.float32, log_masked)
    assert late(131072, torch.float32, log_masked) and not late(131072, torch.float32, causal)
    for N in (128256, 131072):
        assert not late(N, torch.bfloat16, causal) and not late(N, torch.float32, Fusion(log=True)), N
    assert late(262144, torch.float32, log_masked) and not late(262144, torch.float32, Fusion(scale=0.5, log=True))
    assert not late(262144, torch.float32, causal) and not late(262144, torch.bfloat16, log_masked)
    assert not late(262144, torch.float32, PLAIN) and not late(262144, torch.float32, Fusion(causal_m=4))
    assert cluster_backward.config_for(262144, torch.float32).max_registers is None
    monkeypatch.setattr(cluster_backward, "MASK_EARLY", False)
    assert switches(log_masked) == switches(causal) == {"LEAN_KEEP": True}
    monkeypatch.setattr(cluster_backward, "MASK_EARLY", True)
    assert late_masked | {"MASK_EARLY": True} == functools.partial(cluster_backward.switches, 128256,
                                                                     torch.float32)(log_masked)
    assert switches(causal) == {"LEAN_KEEP": True} and switches(off_grid) == switches(PLAIN) == {}
    monkeypatch.setattr(cluster_backward, "LEAN_KEEP", False)
    assert switches(log_masked) == switches(causal) == {}
    monkeypatch.setattr(cluster_backward, "LATE_Y", True)
    assert switches(Fusion(log=True)) == switches(off_grid) == switches(PLAIN) == {"LATE_Y": True}
    assert cluster_backward.config_for(262144, torch.float32).max_registers == 128
    assert cluster_backward.config_for(262144, torch.float32, Fusion(log=True)).max_registers is None
    assert cluster_backward.config_for(131072, torch.float32).max_registers is None
    monkeypatch.setattr(cluster_backward, "LATE_Y", False)
    assert not late(16384, torch.bfloat16, causal) and switches(PLAIN) == {}


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_lean_keep_compiles_to_fewer_instructions_and_registers(tmp_path):
    """LEAN_KEEP, compiled for sm_90: a log_softmax's dx with a keep-mask or causal rows in some 40 % fewer SASS
    instructions a thread (the keep an int32 a lane, no bounds, the diagonal in 32 bits, e^y without its fix-up),
    the mask's bytes in 8-byte loads (bf16), not one a byte, fewer registers, one exchange and no spill. As it is,
    bf16 131072 took 1576 (causal) and 1720 (mask) against 952 for the log alone, and 167 registers against 83."""
    from .compile_sm90 import sass_instructions, sass_of

    # fp32 262144 in fitting_config's 16 × 8 uncapped, not LATE_Y_SHAPES' 16 × 16 capped at 64 (both at the cap)
    cases = [{"kernel": "backward", "dtype": dtype, "N": N, "log": True, "scale": 0.5, keeps: True, "lean_keep": lean,
              "mask_early": False, "staged": False, **shape}
             for dtype, N, keeps, shape in (("bf16", 131072, "causal", {}), ("bf16", 131072, "mask", {}),
                                            ("fp32", 262144, "mask", {"ctas": 16, "warps": 8}))
             for lean in (False, True)]
    compiled = compile_in_subprocess(cases, tmp_path)
    sass = [sass_of(case, tmp_path) for case in cases]
    for i in range(0, len(cases), 2):
        as_is, lean = compiled[i], compiled[i + 1]
        assert_one_exchange_no_spills(lean, pushes=1)
        assert len(sass_instructions(sass[i + 1])) < 0.7 * len(sass_instructions(sass[i])), (as_is, lean)
        assert lean["registers"] < as_is["registers"], (as_is, lean)
        if lean.get("mask"):
            assert "LDG.E.U8" in sass[i] and "LDG.E.U8" not in sass[i + 1], lean
    assert compiled[1]["registers"] <= 128 and compiled[3]["registers"] <= 128, compiled


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_mask_early_reads_the_mask_before_the_exchange(tmp_path):
    """MASK_EARLY, compiled for sm_90 (a masked log's backward with LEAN_KEEP): the keep-mask's vector loads move
    from after the exchange to before the first barrier, none added, and the select after the exchange goes; no
    spill, one exchange, fewer SASS instructions. As it is, every mask load comes after the exchange."""
    from .compile_sm90 import load_waves, opcode, sass_instructions, sass_of

    cases = [{"kernel": "backward", "dtype": dtype, "N": N, "log": True, "scale": 0.5, "mask": True,
              "lean_keep": True, "late_y": False, "mask_early": early, "staged": False}
             for dtype, N in (("fp32", 262144), ("bf16", 131072)) for early in (False, True)]
    compiled = compile_in_subprocess(cases, tmp_path)
    for i in range(0, len(cases), 2):
        (lean, early), sass = compiled[i:i + 2], [sass_of(case, tmp_path) for case in cases[i:i + 2]]
        loads = [[ins for ins in sass_instructions(text) if opcode(ins).startswith("LDG")] for text in sass]
        row_loads = [[ins for ins in each if ".128" in ins] for each in loads]
        assert len(loads[0]) == len(loads[1]) > len(row_loads[1]) == len(row_loads[0]), early
        assert sum(load_waves(sass[0])) == len(row_loads[0]), "as it is, the mask is read after the exchange"
        assert sum(load_waves(sass[1])) == len(loads[1]), "MASK_EARLY: every load before the first barrier"
        assert_one_exchange_no_spills(early, pushes=1)
        assert len(sass_instructions(sass[1])) < len(sass_instructions(sass[0])), (lean, early)


def test_the_masked_logs_backward_of_262144_runs_ctas_of_16_warps_capped_at_64():
    """LATE_Y_SHAPES: a keep-masked log_softmax's backward, fp32 rows of 262144 (LATE_Y's), in 16 CTAs of 16 warps
    capped at 64 registers, two CTAs an SM (H200: 87.5 → 96.9 % of the roofline); every other backward at that
    width in fitting_config's 16 × 8 uncapped (they lost 0.7–2.6 in 16 × 16), and the mask's bf16 rows as before."""
    keep = torch.ones(4, 262144, dtype=torch.uint8)
    config = cluster_backward.config_for(262144, torch.float32, Fusion(scale=0.125, mask=keep, log=True))
    assert (config.ctas, config.num_warps, config.max_registers, config.evict) == (16, 16, 64, "evict_last"), config
    assert config.step * config.ctas == 262144 and config.pieces == (16384,), config
    as_fitted = cluster_backward.config_for(262144, torch.float32)
    assert (as_fitted.ctas, as_fitted.num_warps, as_fitted.max_registers) == (16, 8, None), as_fitted
    for fusion in (Fusion(scale=0.125, mask=keep), Fusion(scale=0.125, log=True),
                   Fusion(scale=0.125, causal_m=512, log=True), Fusion(scale=0.125, causal_m=512)):
        assert cluster_backward.config_for(262144, torch.float32, fusion).num_warps == 8, fusion
    bf16 = cluster_backward.config_for(262144, torch.bfloat16, Fusion(scale=0.125, mask=keep, log=True))
    assert bf16 == cluster_backward.config_for(262144, torch.bfloat16), bf16


def test_staged_applies_at_its_widths_where_late_y_does_not(monkeypatch):
    """cluster_backward.STAGED_AT names the (dtype, width)s whose backward stages a row in shared memory, softmax's
    and log_softmax's, with or without a mask, where they measured ahead (fp32 and bf16 262144), and STAGED_LOG_AT
    log_softmax's alone (bf16 131072, where softmax's lost) — but not where LATE_Y applies (the masked log's fp32
    262144, where it measured ahead of staging), nor then its cap."""
    log_masked = Fusion(mask=torch.ones(4, 262144, dtype=torch.uint8), log=True)
    switches = functools.partial(cluster_backward.switches, 262144, torch.float32)
    assert cluster_backward.STAGED_AT == {(torch.float32, 262144), (torch.bfloat16, 262144)}
    assert cluster_backward.STAGED_LOG_AT == {(torch.bfloat16, 131072)}
    assert switches(log_masked) == {"LEAN_KEEP": True, "LATE_Y": True}
    assert switches(PLAIN) == switches(Fusion(scale=0.5, log=True)) == {"STAGED": True}
    assert switches(Fusion(causal_m=4, log=True)) == {"LEAN_KEEP": True, "STAGED": True}
    bf16_masked = Fusion(mask=torch.ones(4, 131072, dtype=torch.uint8), log=True)
    assert cluster_backward.switches(131072, torch.bfloat16, bf16_masked) == {
        "LEAN_KEEP": True, "MASK_EARLY": True, "STAGED": True}
    assert cluster_backward.switches(131072, torch.float32, PLAIN) == {}
    assert cluster_backward.switches(131072, torch.bfloat16, Fusion(scale=0.5)) == {}
    monkeypatch.setattr(cluster_backward, "STAGED_AT", frozenset())
    assert switches(PLAIN) == {}
    monkeypatch.setattr(cluster_backward, "STAGED_AT", frozenset({(torch.float32, 262144)}))
    monkeypatch.setattr(cluster_backward, "LATE_Y", True)
    assert switches(PLAIN) == {"LATE_Y": True}
    assert cluster_backward.config_for(262144, torch.float32).max_registers == 128


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_staged_holds_one_row_across_the_exchange(tmp_path):
    """STAGED, compiled for sm_90: softmax's dy (log_softmax's y) copied into shared memory (cp.async) where it was
    loaded into registers, half the vector loads, the other half copies; the row held is the other alone: fp32
    262144 in 16 CTAs of 8 warps at most 128 registers where softmax took 156 (two CTAs an SM, not one), fp32
    50257's masked log at most 64 where it took 94 (four CTAs of 8 warps, not two); one exchange, no spills, and
    shared memory for two CTAs an SM."""
    cases = [{"kernel": "backward", "dtype": "fp32", "N": N, "log": log, "mask": mask, "scale": 0.5,
              "late_y": False, "staged": staged}
             for N, log, mask in ((262144, False, False), (50257, True, True)) for staged in (False, True)]
    softmax, softmax_staged, masked_log, masked_log_staged = compile_in_subprocess(cases, tmp_path)
    for held, staged in ((softmax, softmax_staged), (masked_log, masked_log_staged)):
        assert_one_exchange_no_spills(staged, pushes=1)
        assert staged["loads_v4"] == staged["async_copies"] == held["loads_v4"] // 2 and not held["async_copies"]
    assert softmax["registers"] > 128 >= softmax_staged["registers"] and softmax_staged["warps"] == 8
    assert 2 * softmax_staged["shared_bytes"] <= 227 * 1024, "two CTAs an SM in shared memory too"
    assert masked_log["registers"] > 64 >= masked_log_staged["registers"] and masked_log_staged["warps"] == 8


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_late_y_holds_dy_alone_across_the_exchange(tmp_path):
    """LATE_Y, compiled for sm_90 at fp32 262144 (16 CTAs of 8 warps): log_softmax in at most 128 registers where it
    took 154, softmax in 128 (LATE_Y_REGISTERS' cap) without a spill where 156 capped so spills: two CTAs an SM,
    not one. log_softmax loads as many vectors, softmax y's again (half as many more); one exchange."""
    from softmax_bench.kernels.cluster_backward import LATE_Y_REGISTERS

    cap = LATE_Y_REGISTERS[torch.float32, 262144]
    cases = [{"kernel": "backward", "dtype": "fp32", "N": 262144, "log": log, "scale": 0.5, "late_y": late,
              "staged": False, **({"max_registers": cap} if capped else {})}
             for log, capped in ((True, False), (False, True)) for late in (False, True)]
    log, log_late, softmax, softmax_late = compile_in_subprocess(cases, tmp_path)
    for late in (log_late, softmax_late):
        assert_one_exchange_no_spills(late, pushes=1)
        assert late["registers"] <= 128 and late["warps"] == 8, late
    assert log["registers"] > 128 and softmax["spill_bytes"] > 0, (log, softmax)
    assert log_late["loads_v4"] == log["loads_v4"] and 2 * softmax_late["loads_v4"] == 3 * softmax["loads_v4"]


# --- numbers (GPU) -------------------------------------------------------------------------------------------


def run_backward(y, dy, fusion):
    dx, launch = cluster_backward.launch(y, dy, fusion)
    assert launch.config["ctas"] >= 2
    return dx


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", WIDTHS)
@pytest.mark.parametrize("log", [False, True, "late", "log-late", "staged", "log-staged"],
                         ids=["softmax", "log_softmax", "softmax-late-y", "log_softmax-late-y", "softmax-staged",
                              "log_softmax-staged"])
def test_backward_matches_float64(log, N, dtype, monkeypatch):
    if log in ("late", "log-late"):
        monkeypatch.setattr(cluster_backward, "LATE_Y", True)
        log = log == "log-late"
    if log in ("staged", "log-staged"):
        monkeypatch.setattr(cluster_backward, "STAGED_AT", frozenset({(dtype, N)}))
        log = log == "log-staged"
    x, seed = fresh_randn(7, N, dtype=dtype)
    y = dispatch.softmax_forward(x, -1, None, None, False, "auto", log)
    dy, _ = fresh_randn(7, N, dtype=dtype)
    dx = run_backward(y, dy, Fusion(log=log))
    assert_grad_close(dx, grad_of_output(y, dy, log), dtype, f"seed {seed}")


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [50257, 151936])
@pytest.mark.parametrize("log", [False, True, "not-lean", "lean+late", "early", "early+late", "staged", "log-staged",
                                 "early+staged"],
                         ids=["softmax", "log_softmax", "log_softmax-not-lean-keep", "log_softmax-lean-keep-late-y",
                              "log_softmax-mask-early", "log_softmax-mask-early-late-y", "softmax-staged",
                              "log_softmax-staged", "log_softmax-mask-early-staged"])
def test_backward_scale_mask_causal_and_odd_offsets(log, N, dtype, monkeypatch):
    """A scale, a keep-mask and a causal mask (masked positions get no gradient), and rows that start off a 16-byte
    boundary, an odd number of elements apart; log_softmax's as it runs (LEAN_KEEP), without LEAN_KEEP, with
    LATE_Y too, and with MASK_EARLY (the mask applied to dy before the exchange), alone and with LATE_Y; softmax's
    and log_softmax's with a row staged in shared memory (STAGED_AT), the latter with MASK_EARLY too."""
    if log in ("staged", "log-staged", "early+staged"):
        monkeypatch.setattr(cluster_backward, "STAGED_AT", frozenset({(dtype, N)}))
        monkeypatch.setattr(cluster_backward, "MASK_EARLY", log == "early+staged")
        log = log != "staged"
    if log in ("not-lean", "lean+late", "early", "early+late"):
        monkeypatch.setattr(cluster_backward, "LEAN_KEEP", log != "not-lean")
        monkeypatch.setattr(cluster_backward, "LATE_Y", log.endswith("late"))
        monkeypatch.setattr(cluster_backward, "MASK_EARLY", log.startswith("early"))
        log = True
    M = 6
    wide, _ = fresh_randn(M, N + 13, dtype=dtype)
    x = wide[:, 5:N + 5]
    keep = torch.rand(M, N, device=x.device) > 0.3
    keep[2] = False  # a fully masked row
    for kwargs in ({"scale": 0.125}, {"scale": -0.5, "mask": keep}, {"causal": True},
                   {"scale": 0.5, "mask": keep, "causal": True}):
        y = dispatch.softmax_forward(x, -1, kwargs.get("scale"), kwargs.get("mask"), kwargs.get("causal", False),
                                     "auto", log)
        dy_wide, _ = fresh_randn(M, N + 7, dtype=dtype)
        dy = dy_wide[:, 3:N + 3]
        fusion = dispatch.fusion_for(x, -1, kwargs.get("scale"), kwargs.get("mask"), kwargs.get("causal", False), log)
        full_keep = torch.ones(M, N, dtype=torch.bool, device=x.device)
        if "mask" in kwargs:
            full_keep &= keep
        if kwargs.get("causal"):
            full_keep &= causal_keep(M, N).to(x.device)
        dx = run_backward(y, dy, fusion)
        expected = grad_of_output(y, dy, log, scale=kwargs.get("scale", 1.0), keep=full_keep)
        assert_grad_close(dx, expected, dtype, str(kwargs))
        assert bool((dx[~full_keep] == 0).all()), "masked positions get no gradient"


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
def test_autograd_runs_the_cluster_backward(dtype):
    x, _ = fresh_randn(4, 65536, dtype=dtype)
    x.requires_grad_()
    dy, _ = fresh_randn(4, 65536, dtype=dtype)
    for fn, log in ((softmax_bench.softmax, False), (softmax_bench.log_softmax, True)):
        assert dispatch.backward_for(softmax_bench.variants()["cluster"], 65536, dtype) is backwards()["cluster"]
        y = fn(x, scale=0.5, variant="cluster")
        (dx,) = torch.autograd.grad(y, x, dy)
        assert_grad_close(dx, grad_of_output(y, dy, log, scale=0.5), dtype, fn.__name__)


def assert_grad_close(dx, expected, dtype, what):
    atol, rtol = GRAD_TOLERANCES[dtype]
    atol = max(atol * float(expected.abs().max()), torch.finfo(dtype).tiny * torch.finfo(dtype).eps)
    torch.testing.assert_close(dx.double().cpu(), expected, atol=atol, rtol=rtol, msg=lambda m: f"{what}: {m}")


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [*WIDTHS, 100003, 262143, cluster.CAPACITY - 7])
def test_log_softmax_matches_float64(N, dtype):
    x, _ = fresh_randn(5, N, dtype=dtype)
    x[1] = float("-inf")  # all -inf: -inf everywhere
    x[2, :-1] = float("-inf")  # one finite value: log 1 = 0 there
    x[3, N // 3] = 1000.0
    y = softmax_bench.log_softmax(x, variant="cluster")
    assert_log_matches(y, x)
    assert bool((y[1] == float("-inf")).all()) and float(y[2, -1]) == 0.0


@on_gpu
@pytest.mark.parametrize("dtype", DTYPE_LIST, ids=str)
@pytest.mark.parametrize("N", [50257, 151936])
def test_log_softmax_scale_mask_causal_odd_offsets(N, dtype):
    M = 5
    wide, _ = fresh_randn(M, N + 13, dtype=dtype)
    x = wide[:, 5:N + 5]  # rows 13 elements apart, off a 16-byte boundary
    x[3, N // 2] = float("nan")  # NaN stays in its row
    keep = torch.rand(M, N, device=x.device) > 0.3
    keep[0] = False  # a fully masked row: -inf
    keep[3, N // 2] = True
    y = softmax_bench.log_softmax(x, scale=-0.5, mask=keep, causal=True, variant="cluster")
    full_keep = keep & causal_keep(M, N).to(x.device)
    rows = [1, 2, 4]
    assert_log_matches(y[rows], x[rows], scale=-0.5, keep=full_keep[rows])
    assert bool((y[0] == float("-inf")).all()) and bool((y[rows][~full_keep[rows]] == float("-inf")).all())
    assert bool(y[3].isnan().all())
    assert_log_matches(softmax_bench.log_softmax(x, scale=0.125, variant="cluster")[rows], x[rows], scale=0.125)


@pytest.mark.parametrize("phased", [True, False], ids=["phased", "unphased"])
def test_a_log_softmaxs_shared_mask_is_written_out_only_off_ys_grid_without_phase_copies(phased, monkeypatch):
    """The backward's bytes: a key-padding mask [B, 1, 1, S] of a log_softmax read where it is, its rows once, where
    they lie on y's 16-byte grid (N a multiple of VEC), and off it in phase copies (cluster.PHASED_SHARED_ROWS:
    VEC copies of its rows written, then read); without them, off it, first written out to y's rows and read
    whole."""
    from softmax_bench.dispatch import fusion_for

    monkeypatch.setattr(cluster, "PHASED_SHARED_ROWS", phased)
    for N, expanded in ((4096, False), (4097, not phased)):
        x = torch.empty(2, 3, 4, N, dtype=torch.bfloat16)
        keep = torch.ones(2, 1, 1, N, dtype=torch.bool)
        fusion = fusion_for(x, -1, 0.125, keep, False, True)
        assert fusion.mask_shared and cluster_backward.expands(fusion, N, x.dtype) == expanded
        floor = backward_traffic(24, N, x.dtype, fusion).total_bytes
        assert floor == 3 * 24 * N * 2 + 2 * N  # y, dy, dx, and the mask's two rows
        written_out = 2 * 24 * N if expanded else 0  # the mask written to y's rows, then read whole
        copies = 2 * 8 * 2 * N if phased and N % 8 else 0  # 8 copies of its two rows, written and read
        assert backwards()["cluster"].traffic(24, N, x.dtype, fusion).total_bytes == floor + written_out + copies


def test_a_log_softmaxs_shared_mask_in_bits_is_an_eighth_of_its_byte_copies(monkeypatch):
    """cluster.BACKWARD_MASK_BITS (off until a GPU has run it): the log's backward lays a shared mask off the grid of
    16-bit y out in phase copies of bits (masking.phased_bits), counted at an eighth of the byte copies' bytes, and
    its kernel reads them as MASK_BITS; fp32 y keeps its byte copies, and a forward is not switched by it."""
    from softmax_bench.dispatch import fusion_for

    monkeypatch.setattr(cluster, "BACKWARD_MASK_BITS", True)
    N = 4097
    for dtype, in_bits in ((torch.bfloat16, True), (torch.float32, False)):
        x = torch.empty(2, 3, 4, N, dtype=dtype)
        fusion = fusion_for(x, -1, 0.125, torch.ones(2, 1, 1, N, dtype=torch.bool), False, True)
        assert cluster.mask_in_bits(fusion, N, dtype) == in_bits and not cluster.mask_in_bits(fusion, N, dtype, 24)
        floor = backward_traffic(24, N, dtype, fusion).total_bytes
        vec = vector_elems(dtype)  # copies of its two rows (in bits: N bits each), written and read
        copies = 2 * vec * 2 * N // (8 if in_bits else 1)
        assert backwards()["cluster"].traffic(24, N, dtype, fusion).total_bytes == floor + copies
        laid_out = cluster.laid_out(fusion, N, dtype)
        assert laid_out.mask_bits == in_bits
        assert cluster_backward.switches(N, dtype, laid_out).get("MASK_BITS", False) == in_bits


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_a_log_softmaxs_shared_mask_in_bits_compiles_in_the_registers_of_its_byte_copies(tmp_path):
    """cluster.BACKWARD_MASK_BITS, compiled for sm_90: the log's backward under key-padded bf16 50257's mask, with
    MASK_EARLY (as launched), with LATE_Y (its keep read after the exchange, LEAN_KEEP), and causal, reads a byte of
    bits a vector (9 byte loads: 8 vectors and the end vectors' one) in its byte copies' configuration, with no
    spill, at most 6 registers more (Triton 3.8: 95 → 96, LATE_Y 72 → 77, causal 96 → 96) and at most 4 SASS
    instructions a vector more (1016 → 1032, 1016 → 1040, 1208 → 1240)."""
    from .compile_sm90 import sass_instructions, sass_of

    base = {"kernel": "backward", "dtype": "bf16", "N": 50257, "mask": True, "shared": True, "scale": 0.125,
            "log": True}
    forms = ({}, {"late_y": True}, {"causal": True})
    cases = [{**base, **form, **bits} for form in forms for bits in ({}, {"backward_mask_bits": True})]
    compiled = compile_in_subprocess(cases, tmp_path)
    for i in range(0, len(cases), 2):
        copied, in_bits = compiled[i], compiled[i + 1]
        assert in_bits["spill_bytes"] == copied["spill_bytes"] == 0, (copied, in_bits)
        assert (in_bits["ctas"], in_bits["warps"]) == (copied["ctas"], copied["warps"]), (copied, in_bits)
        assert in_bits["registers"] <= copied["registers"] + 6, (copied, in_bits)
        assert in_bits["byte_loads"] == 9 and copied["byte_loads"] == 1, (copied, in_bits)
        sass = [len(sass_instructions(sass_of(case, tmp_path))) for case in cases[i:i + 2]]
        assert sass[0] < sass[1] <= sass[0] + 4 * 8, sass


@pytest.mark.skipif(not hasattr(cluster_backward, "cluster_backward_kernel"), reason="this Triton has no Gluon")
def test_a_log_softmaxs_shared_mask_off_ys_grid_is_read_in_vectors_in_phase_copies(tmp_path):
    """Compiled for sm_90: the log's backward under key-padded's mask at N = 50257 (off y's grid), laid out in phase
    copies as a launch lays it out, reads it as the full mask's backward does (LEAN_KEEP's vectors: as many byte
    loads), where read in place it takes one a byte; no spill."""
    cases = [{"kernel": "backward", "dtype": dtype, "N": 50257, "scale": 0.125, "mask": True, "log": True, **form}
             for dtype in ("bf16", "fp32") for form in ({"shared": True}, {}, {"shared": True, "phased": False})]
    compiled = compile_in_subprocess(cases, tmp_path)
    for phased, full, in_place in zip(compiled[::3], compiled[1::3], compiled[2::3]):
        assert phased["byte_loads"] == full["byte_loads"] < in_place["byte_loads"], (phased, full, in_place)
        assert phased["spill_bytes"] == 0


@on_gpu
@pytest.mark.parametrize("bits", [False, True], ids=["bytes", "bits"])
@pytest.mark.parametrize("N", [32768, 32769, 50257])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_a_log_softmaxs_shared_mask_gives_the_expanded_masks_gradient(N, dtype, bits, monkeypatch):
    """cluster's backward of a log_softmax under a key-padding mask [B, 1, 1, S]: read where it is on y's grid
    (MASK_SHARED), in phase copies off it (PHASED; for 16-bit y in copies of bits under cluster.BACKWARD_MASK_BITS):
    dx the expanded mask's, bit for bit, zero where it masks out."""
    from softmax_bench.dispatch import fusion_for

    monkeypatch.setattr(cluster, "BACKWARD_MASK_BITS", bits)
    x, _ = fresh_randn(2, 3, 4, N, dtype=dtype)
    keep = torch.rand(2, 1, 1, N, device=x.device) > 0.3
    keep[..., 0] = True
    y = softmax_bench.log_softmax(x, scale=0.125, mask=keep).reshape(-1, N)
    dy, _ = fresh_randn(24, N, dtype=dtype)
    grads = [cluster_backward.launch(y, dy, fusion_for(x, -1, 0.125, mask, False, True))[0]
             for mask in (keep, keep.expand(x.shape).contiguous())]
    assert torch.equal(grads[0], grads[1])
    assert bool((grads[0][~keep.expand(x.shape).reshape(-1, N)] == 0).all())
