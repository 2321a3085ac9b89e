"""Many devices through torchrun, tried on CPU: ranks on Triton's interpreter over the gloo backend, sharded and
replicated, then a rank that is killed, one that fails and one that hangs. Each torchrun costs seconds of process
start: the runs are made once and read by several tests (the sharded run is the killed one, resumed)."""

import json
import shutil
import signal
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import torch

from softmax_bench import regression
from softmax_bench.across_devices import deviation_from_others, outlier
from softmax_bench.config import SweepPlan
from softmax_bench.distributed import share_out
from softmax_bench.results import COLUMNS, KEY, Run

from .conftest import DEVICE, REPO, assert_usage_error, flat, invoke

SWEEP = ["sweep", "--interpret", "--preset", "smoke", "--variant", "fused", "--variant", "eager", "--rep-ms", "5"]
CELLS = {(dtype, M, N) for dtype in ("fp32", "bf16") for M, N in ((16, 32), (16, 1000), (4, 5000))}
ROWS = {("fused", *cell) for cell in CELLS} | {("eager", *cell) for cell in CELLS}
ENV = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def softmax_bench(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "softmax_bench", *map(str, args)], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=120)


def torchrun(ranks: int, *args) -> subprocess.CompletedProcess:
    """`torchrun --standalone --nproc-per-node=ranks ARGS`: args name what each rank runs."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}",
               *map(str, args)]
    return subprocess.run(command, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)


def faulty_ranks(ranks: int, faults: str, *args) -> subprocess.CompletedProcess:
    """Ranks under torchrun, those named in faults ("1=raise,2=hang") going wrong at their second cell
    (tests/faulty_rank.py)."""
    return torchrun(ranks, REPO / "tests" / "faulty_rank.py", faults, *args)


def only_run(out_dir: Path) -> Path:
    (run_dir,) = [p for p in out_dir.iterdir() if p.is_dir()]
    return run_dir


def keys(rows: pd.DataFrame) -> list[tuple]:
    return [(r.variant, r.dtype, int(r.M), int(r.N)) for r in rows.itertuples()]


@pytest.fixture(scope="module")
def replicated(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("replicated")
    done = torchrun(2, "-m", "softmax_bench", *SWEEP, "--replicate", "--out", out_dir)
    assert done.returncode == 0, done.stderr
    return only_run(out_dir), done


def test_sharded_run_holds_every_cell_once_each_on_one_rank(sharded):
    run_dir, done = sharded
    rows = Run(run_dir).rows()
    assert sorted(keys(rows)) == sorted(ROWS)  # every cell and variant exactly once
    assert (rows["status"] == "ok").all(), rows[["status", "reason"]]
    assert set(rows["device"]) == {"cpu:0", "cpu:1"}
    assert (rows.groupby(["dtype", "M", "N"])["device"].nunique() == 1).all()  # a cell is measured on one rank
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["placement"] == "sharded"
    assert [(d["label"], d["status"]) for d in meta["devices"]] == [("cpu:0", "complete"), ("cpu:1", "complete")]
    copy = {d["label"]: d["copy_gbps"] for d in meta["devices"]}
    for r in rows.itertuples():  # each row against its own device's copies
        assert r.pct_of_device_copy == pytest.approx(100 * r.gbps / copy[r.device][r.dtype])
        assert r.pct_of_copy == pytest.approx(100 * r.copy_ms / r.ms)
    assert "cells shared out among 2 devices" in flat(done.stdout)


def test_replicated_run_holds_every_cell_once_on_each_rank(replicated):
    run_dir, done = replicated
    rows = Run(run_dir).rows()
    assert sorted(keys(rows[rows["device"] == "cpu:0"])) == sorted(ROWS)
    assert sorted(keys(rows[rows["device"] == "cpu:1"])) == sorted(ROWS)
    assert len(rows) == 2 * len(ROWS)
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["placement"] == "replicated" and meta["status"] == "complete"
    text = flat(done.stdout)
    assert "median over the 2 devices" in text and "Δ" in text
    assert "devices · CPU" in text and "vs others" in text and ("outlier" in text)


def test_show_plot_and_compare_read_a_multi_device_run(replicated, sharded):
    run_dir, _ = replicated
    shown = invoke("show", run_dir)
    assert shown.exit_code == 0, shown.output
    assert "Δ" in shown.stdout and "cpu:1" in shown.stdout
    assert invoke("show", sharded[0]).exit_code == 0
    compared = invoke("compare", sharded[0], run_dir)
    assert compared.exit_code == 0, compared.output
    assert flat(compared.stdout).count("×") >= len(ROWS)  # a line a cell and variant, not one a device
    plotted = invoke("plot", run_dir)
    assert plotted.exit_code == 0, plotted.output
    assert (run_dir / "bandwidth-vs-n.png").is_file()


def test_a_replicated_run_is_checked_against_one_device_by_its_median(replicated, tmp_path):
    """check refuses interpreted runs (they time the CPU): the CPU runs are labelled as GPU runs here, to test the
    median's arithmetic."""
    replicated_dir, _ = replicated
    run_dir = tmp_path / "replicated"
    shutil.copytree(replicated_dir, run_dir, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    rows, meta = Run(run_dir).rows(), json.loads((run_dir / "meta.json").read_text())
    meta["interpreted"] = False
    (run_dir / "meta.json").write_text(json.dumps(meta))
    single = tmp_path / "one-device"  # cpu:0's rows alone, as a run of one device
    single.mkdir()
    rows[rows["device"] == "cpu:0"].to_csv(single / "rows.csv", index=False)
    (single / "meta.json").write_text(json.dumps({k: v for k, v in meta.items() if k not in ("devices", "placement")}))
    result = regression.check(Run(run_dir), Run(single), threshold=1000, host_threshold=1000)
    assert len(result.changes) == len(ROWS) and not result.missing and not result.new
    medians = rows.groupby(KEY)["pct_of_copy"].median()
    for change in result.changes:
        assert change.pct == pytest.approx(medians[(change.variant, change.pass_, change.dtype, change.M, change.N)])
    checked = invoke("check", run_dir, "--baseline", single, "--threshold", "1000", "--host-threshold", "1000")
    assert checked.exit_code == 0, checked.output


@dataclass
class Killed:
    """A sharded sweep whose rank 1 was killed at its second cell: its folder, and its rows and meta.json then."""

    run_dir: Path
    kept: pd.DataFrame
    meta: dict
    done: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def killed(tmp_path_factory) -> Killed:
    out_dir = tmp_path_factory.mktemp("killed")
    done = faulty_ranks(2, "1=die", *SWEEP, "--out", out_dir)
    assert done.returncode != 0
    run_dir = only_run(out_dir)
    return Killed(run_dir, Run(run_dir).rows(), json.loads((run_dir / "meta.json").read_text()), done)


@pytest.fixture(scope="module")
def sharded(killed):
    """The killed run resumed through --gpus, which starts the same ranks through torchrun: a sharded run whose
    cells are all measured, and what the resume printed."""
    done = softmax_bench("sweep", "--interpret", "--gpus", "2", "--resume", killed.run_dir.name,
                         "--out", killed.run_dir.parent)
    assert done.returncode == 0, done.stderr
    return killed.run_dir, done


def test_a_cell_measured_in_part_is_finished_on_the_device_that_began_it():
    """distributed.share_out, sharded: the cells left are dealt out in turn in sweep order, but a cell an
    interrupted run measured in part (fused done on cpu:1, eager not) goes back to cpu:1, so that the cell's
    variants are compared on one device. Before, the dealing gave it to whichever rank its turn fell on, and the
    killed-and-resumed run below sometimes held a cell measured on both devices."""
    plan = SweepPlan(shapes=[(16, 32), (16, 1000), (4, 5000)], dtypes=["fp32"], variants=["fused", "eager"])
    rows = pd.DataFrame([{"variant": "fused", "pass": "forward", "dtype": "fp32", "M": 16, "N": 32, "device": "cpu:1"}])
    shares = share_out(plan, rows, ["cpu:0", "cpu:1"], "sharded")
    assert [[cell[:3] for cell in share] for share in shares] == [[("fp32", 16, 1000)],
                                                                  [("fp32", 16, 32), ("fp32", 4, 5000)]]
    assert shares[1][0][3] == [("eager", "forward")], "only what the cell still lacks"
    fresh = share_out(plan, rows.iloc[:0], ["cpu:0", "cpu:1"], "sharded")  # nothing measured: dealt in turn
    assert [[cell[:3] for cell in share] for share in fresh] == [[("fp32", 16, 32), ("fp32", 4, 5000)],
                                                                 [("fp32", 16, 1000)]]


def test_a_killed_rank_leaves_the_others_cells(killed):
    kept = killed.kept
    assert "interrupted: finished cells are kept" in killed.done.stderr and "--gpus 2" in killed.done.stderr
    assert "sharded over 2 devices: cpu:0, cpu:1" in killed.done.stderr
    assert not kept.duplicated(KEY).any()
    # rank 1's first cell, sent before it died, and rank 0's cells, measured while rank 1 was alive
    assert set(keys(kept[kept["device"] == "cpu:1"])) == {("fused", "fp32", 16, 1000), ("eager", "fp32", 16, 1000)}
    assert len(kept[kept["device"] == "cpu:0"]) >= 1 and (kept["status"] == "ok").all()
    assert killed.meta["status"] == "interrupted"
    assert killed.meta["devices"][1]["status"] == "did not finish"


def test_resume_finishes_a_killed_multi_device_run(killed, sharded):
    run_dir, _ = sharded
    rows = Run(run_dir).rows()
    assert sorted(keys(rows)) == sorted(ROWS) and (rows["status"] == "ok").all()
    pd.testing.assert_frame_equal(rows.iloc[: len(killed.kept)], killed.kept)  # the cells kept were not measured again
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "complete"


def test_a_rank_that_fails_and_one_that_hangs_are_named_and_the_others_cells_kept(tmp_path):
    done = faulty_ranks(3, "1=raise,2=hang", *SWEEP, "--rank-timeout", "4", "--out", tmp_path)
    assert done.returncode != 0  # a hung rank stops the sweep: torchrun then ends it
    run_dir = only_run(tmp_path)
    rows = Run(run_dir).rows()
    assert sorted(keys(rows)) == sorted(ROWS)  # every cell once: measured, or FAIL with the reason
    by_device = {device: part for device, part in rows.groupby("device")}
    assert (by_device["cpu:0"]["status"] == "ok").all()
    for device, reason in (("cpu:1", "cpu:1 failed: RuntimeError: CUDA error"), ("cpu:2", "cpu:2 hung: nothing")):
        part = by_device[device]
        assert (part["status"] == "ok").sum() == 2  # its first cell; then each row FAIL, saying why
        failed = part[part["status"] == "FAIL"]
        assert len(failed) == 2 and failed["reason"].str.startswith(reason).all(), failed["reason"]
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete"
    assert [d["status"] for d in meta["devices"]] == ["complete", "failed", "hung"]
    assert "illegal memory access" in meta["devices"][1]["error"]
    assert "cpu:1 failed: RuntimeError" in done.stderr and "cpu:2 hung: nothing from it for 4 s" in done.stderr
    shown = flat(invoke("show", run_dir).stdout)
    assert "cpu:1 failed: RuntimeError" in shown and "cpu:2 hung" in shown


def test_a_run_from_before_the_device_column_keeps_its_columns(tmp_path):
    run = Run(tmp_path)
    (tmp_path / "rows.csv").write_text(",".join(c for c in COLUMNS if c != "device") + "\n")
    run.append({"variant": "eager", "dtype": "fp32", "M": 4, "N": 32, "status": "skipped", "reason": "why",
                "device": "cuda:0"})  # a resumed sweep writes the device; the old header has no place for it
    rows = run.rows()
    assert len(rows) == 1 and rows["reason"].iloc[0] == "why" and rows["device"].isna().all()


def test_the_outlier_is_the_device_unlike_the_others():
    cells = pd.MultiIndex.from_tuples([("fused", "forward", "bf16", 4096, n) for n in (512, 1024, 2048)], names=KEY)
    alike = pd.DataFrame({"cuda:0": [100.0, 200, 300], "cuda:1": [101.0, 199, 301], "cuda:2": [99.0, 201, 299]},
                         index=cells)
    assert outlier(deviation_from_others(alike)) is None
    slow = alike.assign(**{"cuda:1": alike["cuda:1"] * 0.9})
    deviation = deviation_from_others(slow)
    assert outlier(deviation) == "cuda:1" and deviation["cuda:1"] == pytest.approx(-10, abs=0.5)
    two = alike[["cuda:0", "cuda:1"]].assign(**{"cuda:0": alike["cuda:0"] * 1.05})
    assert outlier(deviation_from_others(two)) == "cuda:1"  # of two unlike devices, the slower is named


def test_a_multi_device_run_is_resumed_on_its_devices(sharded):
    run_dir, _ = sharded
    if DEVICE == "cpu":
        assert_usage_error(invoke("sweep", "--interpret", "--resume", run_dir), "2 devices", "--gpus 2")
        return
    # in a process of its own: a resume under --interpret takes up the interpreter, and this one has compiled the
    # kernels for the GPU
    done = softmax_bench("sweep", "--interpret", "--resume", run_dir)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "2 devices" in done.stderr and "--gpus 2" in done.stderr, done.stderr


def test_more_gpus_than_are_visible_are_refused_with_what_to_do(tmp_path):
    visible = torch.cuda.device_count()
    assert_usage_error(invoke("sweep", "--shape", "4x32", "--gpus", str(visible + 1), "--out", tmp_path),
                       f"--gpus {visible + 1}", "add --interpret" if visible == 0 else f"{visible} GPU(s) visible")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, words", [
    (["--gpus", "0"], ["--gpus '0'", "all, or a number"]),
    (["--gpus", "all"], ["--gpus all", "under --interpret"]),
    (["--replicate"], ["--replicate", "--gpus"]),
])
def test_bad_many_device_options_are_refused_before_any_process_starts(tmp_path, args, words):
    assert_usage_error(invoke("sweep", "--interpret", "--shape", "4x32", *args, "--out", tmp_path), *words)
    assert not any(tmp_path.iterdir())


def test_a_rank_killed_by_ctrl_c_exits_130(monkeypatch):
    """A rank that Ctrl-C killed before Python could turn it into KeyboardInterrupt: the launcher exits 130, as a
    shell would, not 254 (Popen's -2 as an exit status; seen once in a loaded clean-clone run)."""
    from softmax_bench import distributed

    class KilledRank:
        def __init__(self, *args, **kwargs):
            pass

        def poll(self):
            return -signal.SIGINT

    monkeypatch.setattr(distributed.subprocess, "Popen", KilledRank)
    assert distributed.launch(2) == 130


def test_ctrl_c_under_gpus_stops_every_rank_with_one_message_and_exit_130(tmp_path):
    """Ctrl-C reaches the whole foreground process group: the command, and the ranks it started."""
    # As a shell's foreground command is started: with Ctrl-C's default disposition. A test run whose processes
    # ignore SIGINT (started in the background by a shell without job control) would hand that on to the sweep,
    # and Python turns an ignored SIGINT into no KeyboardInterrupt: the sweep would finish as if never interrupted.
    with_ctrl_c = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                   "sys.argv[0] = 'softmax_bench'; runpy.run_module('softmax_bench', run_name='__main__')")
    command = [sys.executable, "-c", with_ctrl_c, "sweep", "--interpret", "--gpus", "2", "--variant", "fused",
               "--variant", "eager", "--out", str(tmp_path)]  # no shape options: the smoke preset, said once
    proc = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.time() + 120
        rows = None
        while time.time() < deadline and proc.poll() is None:
            rows = next(tmp_path.glob("*/rows.csv"), None)
            if rows is not None and len(rows.read_text().splitlines()) >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired as e:  # which of the processes did not stop (it happened once under load)
            processes = subprocess.run(["ps", "-o", "pid,ppid,stat,etime,wchan:24,args", "-s", str(proc.pid)],
                                       capture_output=True, text=True).stdout
            pytest.fail(f"still running 60 s after Ctrl-C:\n{processes}\nstderr: {e.stderr}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "SignalException" not in stderr, stderr
    assert stderr.count("no shape options") == 1, stderr
    run_dir = rows.parent
    assert stderr.count("interrupted: finished cells are kept") == 1, stderr
    assert f"`softmax-bench sweep --resume {run_dir} --gpus 2 --interpret`" in stderr, stderr
