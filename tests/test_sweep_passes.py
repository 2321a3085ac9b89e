"""The instrument's pass axis: `sweep --pass backward|both`, `--op log-softmax`, and `check` on backward cells."""

import pandas as pd
import pytest
import torch

from softmax_bench.kernels import backwards

from .conftest import DEVICE, MODE, assert_usage_error, flat, invoke
from .test_check import REFERENCE, clone, slower


def test_sweep_both_passes_of_log_softmax(tmp_path):
    result = invoke("sweep", *MODE, "--shape", "4x100", "--dtype", "bf16", "--op", "log-softmax", "--pass", "both",
                    "--variant", "fused", "--variant", "two_pass", "--variant", "split", "--variant", "auto",
                    "--variant", "torch_compile", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = pd.read_csv(run_dir / "rows.csv")
    assert set(rows["pass"]) == {"forward", "backward"} and set(rows["op"]) == {"log-softmax"}
    backward = rows[rows["pass"] == "backward"].set_index("variant")
    assert list(backward.loc[["fused", "two_pass", "auto"], "status"]) == ["ok"] * 3
    assert "no backward of its own" in backward.loc["split", "reason"]
    # a backward's GB/s counts y and dy read and dx written; its model, those bytes
    fused = backward.loc["fused"]
    assert abs(fused["gbps"] - 3 * 4 * 100 * 2 / fused["ms"] / 1e6) < 1e-9 * fused["gbps"]
    assert fused["model_bytes"] == backwards()["fused"].traffic(4, 100, torch.bfloat16).total_bytes
    assert "BACKWARD" in flat(result.stdout) and "3·M·N·elem (read y and dy, write dx)" in flat(result.stdout)
    shown = invoke("show", run_dir)
    assert shown.exit_code == 0 and "BACKWARD" in flat(shown.stdout)
    plotted = invoke("plot", run_dir)
    assert plotted.exit_code == 0, plotted.output
    for name in ("roofline", "bandwidth-vs-n", "registers-vs-n"):  # each pass its figures
        assert (run_dir / f"{name}.png").is_file() and (run_dir / f"{name}-backward.png").is_file()


def test_the_backwards_roofline_point_counts_its_own_bytes_and_flops(tmp_path):
    from softmax_bench.plots import flops_and_hbm_bytes, roofline
    from softmax_bench.results import Run

    result = invoke("sweep", *MODE, "--shape", "4x100", "--dtype", "fp32", "--pass", "backward", "--variant", "fused",
                    "--variant", "auto", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    run = Run(run_dir)
    rows = run.rows()
    for r in rows[rows["status"] == "ok"].itertuples():
        assert flops_and_hbm_bytes(r, "softmax", "backward") == (4 * 4 * 100, 3 * 4 * 100 * 4)  # y, dy, dx
    title = roofline(rows, run.meta(), "backward")._suptitle.get_text()
    assert title.startswith("roofline — BACKWARD (read y and dy, write dx)")


def test_pass_from_a_config_and_a_bad_pass(tmp_path):
    config = tmp_path / "backward.toml"
    config.write_text('shapes = ["2x64"]\ndtypes = ["fp32"]\nvariants = ["fused"]\npass = "backward"\n')
    result = invoke("sweep", *MODE, "--config", config, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert list(pd.read_csv(run_dir / "rows.csv")["pass"]) == ["backward"]
    config.write_text('shapes = ["2x64"]\npass = "sideways"\n')
    assert_usage_error(invoke("sweep", *MODE, "--config", config, "--out", tmp_path), "pass", '"both"')
    assert_usage_error(invoke("sweep", *MODE, "--pass", "sideways", "--out", tmp_path), "--pass")


def with_backward_rows(rows):
    """The reference's rows, and the same again as backward cells."""
    return pd.concat([rows.assign(**{"pass": "forward"}), rows.assign(**{"pass": "backward"})], ignore_index=True)


def test_check_gates_backward_cells(tmp_path):
    base = clone(tmp_path, "base", with_backward_rows)

    def edit(rows):
        rows = with_backward_rows(rows)
        where = (rows["variant"] == "fused") & (rows["N"] == 4096) & (rows["dtype"] == "fp32")
        return slower(rows, 0.9, where & (rows["pass"] == "backward"))

    result = invoke("check", clone(tmp_path, "slowed", edit), "--baseline", base)
    assert result.exit_code == 1, result.output
    assert "regressions: fused backward fp32 16384×4096;" in result.stderr  # the backward cell, not the forward
    # a run from before the pass column reads as forward cells: the forward rows check against it
    assert invoke("check", base, "--baseline", REFERENCE).exit_code == 0
    lost = invoke("check", REFERENCE, "--baseline", base)  # its backward cells are lost
    assert lost.exit_code == 1 and "backward bf16 4096×16384 (missing)" in flat(lost.stdout)


def test_explain_shows_the_backwards_bytes(tmp_path):
    result = invoke("explain", "--shape", "64x50257", "--dtype", "bf16", *MODE, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "the backward (dx from y and dy)" in text and "fused's backward holds y and dy in registers" in text


@pytest.mark.skipif(DEVICE != "cuda", reason="peers run on a GPU only")
def test_our_compiled_op_as_a_peer_forward_and_backward(tmp_path):
    result = invoke("sweep", "--shape", "256x4096", "--dtype", "bf16", "--op", "scaled-masked", "--pass", "both",
                    "--variant", "auto", "--variant", "compiled_op", "--variant", "torch_compile", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = pd.read_csv(run_dir / "rows.csv")
    assert (rows["status"] == "ok").all(), rows[["variant", "pass", "status", "reason"]]


def test_sweep_cross_entropy_forward_and_step(tmp_path):
    """--op cross-entropy: the loss's forward (GB/s over one read of the logits) and its training step (one copy),
    ours and torch's checked and timed; the GPU peers run on a GPU. Tables, show and plot say what a pass counts."""
    from softmax_bench.kernels import cross_entropy as kernel

    result = invoke("sweep", *MODE, "--shape", "6x300", "--dtype", "bf16", "--op", "cross-entropy", "--pass", "both",
                    "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    rows = pd.read_csv(run_dir / "rows.csv").set_index(["variant", "pass"])
    assert set(rows["op"]) == {"cross-entropy"}
    for name in ("fused", "eager"):
        assert list(rows.loc[[(name, "forward"), (name, "backward")], "status"]) == ["ok", "ok"]
    if DEVICE == "cpu":
        assert "a GPU peer" in rows.loc[("torch_compile", "backward"), "reason"]
    else:
        assert rows.loc[("torch_compile", "backward"), "status"] == "ok"
    forward, step = rows.loc[("fused", "forward")], rows.loc[("fused", "backward")]
    assert abs(forward["gbps"] - 6 * 300 * 2 / forward["ms"] / 1e6) < 1e-9 * forward["gbps"]  # one read
    assert abs(step["gbps"] - 2 * 6 * 300 * 2 / step["ms"] / 1e6) < 1e-9 * step["gbps"]  # one copy
    assert step["model_bytes"] == kernel.traffic(6, 300, torch.bfloat16, with_grad=True).total_bytes
    printed = flat(result.stdout)
    assert "1·M·N·elem (read the logits)" in printed
    assert "2·M·N·elem (a training step: read the logits, write their gradient)" in printed
    assert invoke("show", run_dir).exit_code == 0
    from softmax_bench.plots import flops_and_hbm_bytes, roofline
    from softmax_bench.results import Run

    run = Run(run_dir)
    stored = run.rows()
    (fused_step,) = stored[(stored["variant"] == "fused") & (stored["pass"] == "backward")].itertuples()
    assert flops_and_hbm_bytes(fused_step, "cross-entropy", "backward") == (8 * 6 * 300, step["model_bytes"])
    title = roofline(stored, run.meta(), "backward")._suptitle.get_text()
    assert title.startswith("roofline — BACKWARD (a training step: read the logits, write their gradient)")


def test_a_cross_entropy_sweep_takes_only_what_it_measures(tmp_path):
    result = invoke("sweep", *MODE, "--shape", "2x64", "--op", "cross-entropy", "--variant", "two_pass", "--out",
                    tmp_path)
    assert_usage_error(result, "--op cross-entropy measures fused, eager, torch_compile, liger, quack")
    assert not list(tmp_path.iterdir()), "no run is started"


def test_the_loss_check_fails_a_wrong_loss_or_gradient():
    """The sweep's check of a loss provider can fail: a loss off by 1e-3, a gradient off at one element, and, at
    4096 rows, a gradient of zeros (the mean's gradient is that small everywhere: its atol is scaled to it)."""
    from softmax_bench.cross_entropy_providers import LOSSES, cross_entropy_providers, loss_cell
    from softmax_bench.ops import OPS
    from softmax_bench.providers import Cell, cell_input, check

    assert tuple(LOSSES) == OPS["cross-entropy"].measures

    def cell_of(M, N, dtype):
        x = cell_input(M, N, dtype, DEVICE)
        return loss_cell(Cell(x, OPS["cross-entropy"].fusion(x), torch.float64), ["forward", "backward"])

    cell = cell_of(4, 96, torch.float32)
    for provider in cross_entropy_providers(["fused"], ["forward", "backward"]):
        call, expected = provider.prepare(cell)
        y = call()[0]
        out_dtype, tolerances = provider.check_as(cell)
        out_dtype = out_dtype or y.dtype
        assert check(y, expected, out_dtype, tolerances)[1] is None, provider.pass_
        wrong = y + 1e-3 if provider.pass_ == "forward" else y.clone().index_put_((torch.tensor([1]),) * 2,
                                                                                    torch.tensor(1e-3), accumulate=True)
        assert check(wrong, expected, out_dtype, tolerances)[1] is not None, provider.pass_
    (step,) = cross_entropy_providers(["fused"], ["backward"])
    tall = cell_of(4096, 64, torch.bfloat16)
    out_dtype, tolerances = step.check_as(tall)
    rounded_once = tall.ref_grad.to(torch.bfloat16)  # what a kernel that computes in fp32 and rounds once writes
    assert check(rounded_once, tall.ref_grad, out_dtype, tolerances)[1] is None
    assert check(torch.zeros_like(tall.x), tall.ref_grad, out_dtype, tolerances)[1] is not None


def test_a_loss_cell_leaves_the_logits_it_times_alone():
    """The references are made from a copy even where the logits are already in the reference's dtype (fp32 on the
    GPU): a first H200 sweep of `--op cross-entropy` failed at its first fp32 cell, whose x had been made a leaf
    that requires grad, when the sweep's next trial moved x to fresh memory (x.set_)."""
    from softmax_bench.cross_entropy_providers import loss_cell
    from softmax_bench.ops import OPS
    from softmax_bench.providers import Cell, cell_input

    x = cell_input(8, 96, torch.float32, DEVICE)
    cell = loss_cell(Cell(x, OPS["cross-entropy"].fusion(x), torch.float32), ["forward", "backward"])
    assert cell.x is x and not x.requires_grad and x.grad_fn is None
    x.set_(x.clone())  # what sweep.timed does before each trial after the first
    assert cell.ref_grad.shape == x.shape and not cell.ref.requires_grad
