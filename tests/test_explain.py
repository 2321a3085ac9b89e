"""`explain` on a shape whose bytes are worked out by hand: 1024×4096 bf16, copy at 1000 GB/s."""

import json

import pytest
import torch

from softmax_bench.device import device_info
from softmax_bench.dispatch import auto_choice
from softmax_bench.explain import explain
from softmax_bench.kernels import DTYPES

from .conftest import DEVICE, MODE, REPO, assert_usage_error, flat, invoke

INTERPRET = DEVICE == "cpu"


@pytest.fixture
def out_dir(tmp_path):
    """A stored baseline of exactly 1000 GB/s and 10 TFLOP/s for this machine, so the times are round numbers."""
    record = {"device": device_info(INTERPRET), "measured_at": "test", "copies": [],
              "reference_gbps": {"bf16": 1000.0}, "fp32_flops": {"gflops": 10000.0, "how": "measured: test"}}
    (tmp_path / "copy-baseline.json").write_text(json.dumps([record]))
    return tmp_path


def test_numbers_match_the_hand_arithmetic(out_dir):
    e = explain(1024, 4096, "bf16", out_dir, INTERPRET)
    x_bytes = 1024 * 4096 * 2  # 8,388,608
    lines = {line.name: line for line in e.lines}
    assert e.input_bytes == x_bytes == 8_388_608
    assert (lines["fused"].read_bytes, lines["fused"].write_bytes) == (8_388_608, 8_388_608)
    assert lines["fused"].expected_ms == pytest.approx(16_777_216 / 1e12 * 1e3)  # 0.016777 ms at 1000 GB/s
    # two_pass reads its rows of 8 KB again from L2: HBM sees one read and one write
    assert (lines["two_pass"].read_bytes, lines["two_pass"].write_bytes) == (8_388_608, 8_388_608)
    assert lines["two_pass"].l2_bytes == 8_388_608 and lines["fused"].l2_bytes == 0
    assert lines["two_pass"].expected_ms == pytest.approx(0.016777216)
    # online: x in and y out through HBM, plus one fp32 chunk maximum per row written and read back; the
    # exponentials it stores (fp32: y is rounded once, from them) and reads back stay in L2
    assert lines["online"].read_bytes == lines["online"].write_bytes == 8_388_608 + 1024 * 4
    assert lines["online"].l2_bytes == 2 * 1024 * 4096 * 4
    assert lines["eager"].read_bytes == 8_388_608
    # unfused: max (2) + subtract (2 → 4) + exp (4 → 4) + sum (4) + divide (4 → 2) bytes an element
    assert lines["unfused"].read_bytes == 1024 * 4096 * (2 + 2 + 4 + 4 + 4)
    assert lines["unfused"].write_bytes == 1024 * 4096 * (4 + 4 + 2)
    assert lines["fused"].flops == 5 * 1024 * 4096
    # 8 KB of bf16 a program: 4 warps (fp32's 4096 takes 8: test_kernels); its loads evict_last (FORWARD_EVICT)
    assert e.fused_config == {"BLOCK_N": 4096, "ROWS": 1, "num_warps": 4, "EVICT": "evict_last"}
    assert e.elems_per_thread == 32  # 4096 / (32 · 4)
    assert e.auto[0] == "fused"
    assert e.bandwidth_gbps == 1000.0


def test_cli_prints_the_arithmetic(out_dir):
    result = invoke("explain", *MODE, "--shape", "1024x4096", "--dtype", "bf16", "--out", out_dir)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "8,388,608" in text and "16,777,216" in text
    assert "0.0168" in text  # fused and two_pass at 1000 GB/s
    two_pass = next(line for line in text.splitlines() if line.startswith("two_pass"))
    assert two_pass.split()[1:5] == ["8.0", "8.0", "8.0", "1.00"]  # HBM read, written, the L2 re-read, × one pass
    assert "1,000 GB/s" in text
    assert "⌈4096 × 1 / (32 × 4)⌉ = 32 values" in text and "255 registers a thread" in text
    assert "Its loads are evict_last, as torch.compile's forward loads" in flat(text)
    causal = flat(invoke("explain", *MODE, "--shape", "1024x4096", "--op", "causal", "--out", out_dir).stdout)
    assert "fused would launch" in causal and "Its loads are" not in causal  # fused.CAUSAL_EVICT_FROM
    tiny = flat(invoke("explain", *MODE, "--shape", "1x1", "--out", out_dir).stdout)
    assert "= 1 values of the row" in tiny and "fewer elements than threads" in tiny and "= 0 values" not in tiny
    assert "auto picks fused" in text
    assert "0.002097 ms at 10,000 GFLOP/s" in text  # 20,971,520 FLOP at 10 TFLOP/s: 8× less than the bytes' time
    assert "8× below the ridge point 10 FLOP/byte" in text  # 1.25 FLOP/byte


def test_measure_shows_measurement_beside_prediction(out_dir):
    result = invoke("explain", *MODE, "--shape", "8x256", "--dtype", "bf16", "--measure", "--out", out_dir)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    for column in ("kernel ms", "ratio", "call ms", "host µs"):
        assert column in text
    assert "ratio: kernel / expected" in text and "host µs: the host's time to issue one" in text
    fused = next(line for line in result.stdout.splitlines() if line.lstrip().startswith("fused"))
    assert "—" not in fused  # every column measured
    if INTERPRET:
        assert "INTERPRETED" in result.stdout


def test_wide_rows_say_fused_does_not_run_and_auto_goes_where_softmax_goes(out_dir):
    """On CPU the rule's two_pass; on a GPU what softmax runs there (its table: cluster on an H200 under 3.8)."""
    e = explain(2, 131072, "bf16", out_dir, INTERPRET)
    assert next(line for line in e.lines if line.name == "fused").why_not is not None
    assert e.auto[0] == ("two_pass" if INTERPRET else auto_choice(131072, torch.bfloat16)[0])
    assert e.auto[0] != "fused"


def test_no_stored_baseline_says_so(tmp_path):
    result = invoke("explain", *MODE, "--shape", "64x512", "--dtype", "fp32", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "copy-baseline" in result.stdout


def test_bad_shape_and_dtype(tmp_path):
    assert_usage_error(invoke("explain", *MODE, "--shape", "64", "--out", tmp_path), "--shape", "'64' is not MxN")
    assert_usage_error(invoke("explain", *MODE, "--shape", "64x64", "--dtype", "int8", "--out", tmp_path),
                       "'--dtype'", "'int8' is not one of 'fp32', 'bf16', 'fp16'")


def test_measure_reports_progress_before_each_variant(out_dir, monkeypatch):
    import softmax_bench.explain
    from softmax_bench.kernels import variants
    from softmax_bench.timing import Timing

    monkeypatch.setattr(softmax_bench.explain, "measure", lambda fn, settings, interpret: Timing(1.0, 1.0, 1.0))
    seen = []
    explain(2, 64, "bf16", out_dir, INTERPRET, measure_time=True, advance=seen.append)
    runs = [name for name, v in variants().items() if v.supports(64, torch.bfloat16)]
    assert seen == [f"{name}: compile and time" for name in runs]


def test_explain_an_op_shows_the_bytes_fusion_saves(out_dir):
    from softmax_bench.ops import OPS

    e = explain(1024, 4096, "bf16", out_dir, INTERPRET, op=OPS["scaled-masked"])
    lines = {line.name: line for line in e.lines}
    x_bytes, mask_bytes = 8_388_608, 1024 * 4096
    assert lines["fused"].read_bytes == x_bytes + mask_bytes and lines["fused"].write_bytes == x_bytes
    # eager: x · scale, ~mask, masked_fill, softmax — four passes where fused makes one
    assert lines["eager"].read_bytes == 3 * x_bytes + 2 * mask_bytes
    assert lines["eager"].write_bytes == 3 * x_bytes + mask_bytes
    result = invoke("explain", *MODE, "--shape", "1024x4096", "--dtype", "bf16", "--op", "causal", "--out", out_dir)
    assert result.exit_code == 0 and "op causal" in result.stdout
    # 1024 queries of 4096 keys read 3073 … 4096 columns each: 87.5 % of x, and fused reads only those
    kept_bytes = 2 * sum(i + 3073 for i in range(1024))
    assert f"op causal must move {kept_bytes + x_bytes:,} bytes" in flat(result.stdout)
    assert "(88 % of x: causal rows skip the rest)" in flat(result.stdout)

    assert "may run above 100 % of a copy" in flat(result.stdout)
    causal = explain(1024, 4096, "bf16", out_dir, INTERPRET, op=OPS["causal"])
    assert {line.name: line for line in causal.lines}["fused"].read_bytes == kept_bytes
    # a temperature alone: fused moves a copy's bytes, eager a pass more (x · scale, then the softmax)
    scaled = {line.name: line for line in explain(1024, 4096, "bf16", out_dir, INTERPRET, op=OPS["scaled"]).lines}
    assert (scaled["fused"].read_bytes, scaled["fused"].write_bytes) == (x_bytes, x_bytes)
    assert (scaled["eager"].read_bytes, scaled["eager"].write_bytes) == (2 * x_bytes, 2 * x_bytes)


def test_explain_the_biased_op_counts_a_bias_of_x_dtype(out_dir):
    from softmax_bench.ops import OPS

    e = explain(1024, 4096, "bf16", out_dir, INTERPRET, op=OPS["biased"])
    lines = {line.name: line for line in e.lines}
    x_bytes = 8_388_608
    assert sum(r + w for _, r, w in e.floor) == 3 * x_bytes  # x and a bf16 bias read, y written
    assert lines["fused"].read_bytes == 2 * x_bytes and lines["fused"].write_bytes == x_bytes
    scaled = {line.name: line for line in explain(1024, 4096, "bf16", out_dir, INTERPRET, op=OPS["scaled"]).lines}
    for name in ("fused", "split", "two_pass", "online"):  # each reads the bias once from HBM beside x (8 KB rows)
        assert lines[name].read_bytes - scaled[name].read_bytes == x_bytes, name
    assert e.auto[0] == "fused"
    # a bias row shared by 64 rows (--mask-shape rows/64): 16 rows of it
    result = invoke("explain", *MODE, "--shape", "1024x4096", "--dtype", "bf16", "--op", "biased", "--mask-shape",
                    "rows/64", "--out", out_dir)
    assert result.exit_code == 0 and f"read bias: {16 * 4096 * 2:,} bytes" in flat(result.stdout), result.output
    assert_usage_error(invoke("explain", *MODE, "--shape", "1024x4096", "--op", "causal", "--mask-shape", "row"),
                       "op causal has no mask or bias")


def test_explain_a_stored_runs_gpu_on_any_machine(tmp_path):
    """`explain --run`: the H200 of a committed run, its copy bandwidth and its auto table, here, with no GPU
    needed and nothing compiled; variants are judged by their own bounds, not by what this machine runs."""
    from softmax_bench.results import Run

    run = REPO / "tests" / "data" / "wide-rows-auto-h200-g"
    meta = Run(run).meta()
    result = invoke("explain", "--shape", "2048x151936", "--dtype", "bf16", "--run", run, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert f"bandwidth: {meta['copy_gbps']['bf16']:,.0f} GB/s — copy measured in run wide-rows-auto-h200-g on NVIDIA " \
           "H200, Triton 3.8.0" in text
    assert "auto picks cluster: measured fastest for bf16 rows of N = 151936 on this GPU (NVIDIA H200, " \
           "nvidia-h200-triton3.8.json)" in text
    assert "cluster needs" not in text and "INTERPRETED" not in text
    expected_ms = 2 * 2048 * 151936 * 2 / meta["copy_gbps"]["bf16"] / 1e6
    assert f"{expected_ms:.4f}" in text  # cluster's one read and one write at the run's copy
    assert_usage_error(invoke("explain", "--shape", "8x8", "--run", run, "--measure"), "--measure", "--run")
    fp32_only = tmp_path / "fp32-only"
    fp32_only.mkdir()
    (fp32_only / "rows.csv").write_text((run / "rows.csv").read_text())
    (fp32_only / "meta.json").write_text(json.dumps({**meta, "copy_gbps": {"fp32": 4000.0}}))
    assert_usage_error(invoke("explain", "--shape", "8x8", "--dtype", "bf16", "--run", fp32_only),
                       "measured no bf16 copy (it has fp32)")
    assert_usage_error(invoke("explain", "--shape", "8x8", "--run", "nope", "--out", tmp_path), "nope")


def test_explain_says_what_auto_picks_for_the_ops_form(tmp_path):
    """The H200 table's causal entries: fp32 causal rows of 16384 go to cluster (read by vectors), where the plain
    softmax's rows of that width go to fused; explain says which entries it read."""
    run = REPO / "tests" / "data" / "causal-h200-b"
    causal = flat(invoke("explain", "--shape", "8192x16384", "--dtype", "fp32", "--op", "causal", "--run", run,
                         "--out", tmp_path).stdout)
    assert "auto picks cluster: causal rows measured fastest for fp32 rows of N = 16384" in causal
    plain = flat(invoke("explain", "--shape", "8192x16384", "--dtype", "fp32", "--run", run, "--out", tmp_path).stdout)
    assert "auto picks fused: measured fastest for fp32 rows of N = 16384" in plain


def test_the_cross_entropys_bytes_from_a_stored_run(tmp_path, monkeypatch):
    """--op cross-entropy: each pass's least bytes (the loss: one read; a step: one copy) beside the fused kernel's,
    at the run's copy bandwidth. Off a cluster (CLUSTER_ROWS off, as on a machine without one), a 32000
    vocabulary's step reads its rows once (held on chip), 128256's twice."""
    from softmax_bench.kernels import cross_entropy as kernel
    from softmax_bench.report import _mib

    monkeypatch.setattr(kernel, "CLUSTER_ROWS", False)

    run = REPO / "tests" / "data" / "wide-rows-auto-h200-g"
    for M, V, reads in ((16384, 32000, 1), (4096, 128256, 2)):
        result = invoke("explain", "--shape", f"{M}x{V}", "--dtype", "bf16", "--op", "cross-entropy", "--run", run,
                        "--out", tmp_path)
        assert result.exit_code == 0, result.output
        logits = M * V * 2
        step = kernel.traffic(M, V, torch.bfloat16, with_grad=True)
        assert 0 <= step.read_bytes - logits * reads < logits // 1000  # and the targets, losses and lses
        step_line = next(line for line in result.stdout.splitlines() if line.startswith("backward (a step)"))
        least_read, least_written, _, fused_read, fused_written = step_line.split()[3:8]
        assert (least_read, least_written) == (_mib(logits), _mib(logits)), step_line
        assert (fused_read, fused_written) == (_mib(step.read_bytes), _mib(step.write_bytes)), step_line
        assert ("held on chip" in flat(result.stdout)) == (reads == 1)
    assert_usage_error(invoke("explain", "--shape", "8x64", "--op", "cross-entropy", "--measure", *MODE),
                       "sweep --op cross-entropy")


def test_the_cross_entropys_explanation_says_where_rows_go_on_a_cluster(tmp_path, monkeypatch):
    """Where the loss's rows go to a cluster (kernels/cross_entropy.on_cluster: on a GPU that runs the cluster
    variant, 16-bit rows from 8193 logits, fp32 forwards from 65537), explain says so, and its bytes are one read
    for the step, not the chunks' two; where only the step goes there (fp32 50257), the forward still walks in
    chunks."""
    from softmax_bench.kernels import cluster
    from softmax_bench.kernels import cross_entropy as kernel

    monkeypatch.setattr(cluster, "why_not_here", lambda: None)
    run = REPO / "tests" / "data" / "wide-rows-auto-h200-g"
    for V, dtype, forward in ((128256, "bf16", "reads each row once across a cluster"),
                              (50257, "fp32", "walks in chunks")):
        result = invoke("explain", "--shape", f"4096x{V}", "--dtype", dtype, "--op", "cross-entropy", "--run", run,
                        "--out", tmp_path)
        assert result.exit_code == 0, result.output
        text = flat(result.stdout)
        assert "each row held across a thread-block cluster" in text and f"no gradient {forward}" in text, text
        step = kernel.traffic(4096, V, DTYPES[dtype], with_grad=True)
        assert step.read_bytes < 1.01 * 4096 * V * DTYPES[dtype].itemsize
