"""The CLI as a user drives it: exit codes, files written, tables printed, bad input refused in one line."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch

import softmax_bench
from softmax_bench.config import MEASURABLE
from softmax_bench.results import COLUMNS

from .conftest import DEVICE, MODE, REPO, assert_usage_error, flat, invoke

# The registry's variants that run here, so a new one is checked too (split was once left out of a list by hand)
OUR_VARIANTS = [name for name, v in softmax_bench.variants().items() if v.supports(4096, torch.float32)] + ["auto"]
SMOKE_CELLS = {(16, 32), (16, 1000), (4, 5000)}


def test_smoke_sweep_writes_every_variant_with_the_design_columns(smoke_run):
    out_dir, run_dir, _ = smoke_run
    rows = pd.read_csv(run_dir / "rows.csv")
    assert list(rows.columns) == COLUMNS
    for variant in OUR_VARIANTS:
        mine = rows[rows["variant"] == variant]
        assert set(zip(mine["M"], mine["N"])) == SMOKE_CELLS
        assert set(mine["dtype"]) == {"fp32", "bf16"}
        assert (mine["status"] == "ok").all(), mine[["status", "reason"]]
        assert (mine["ms"] > 0).all() and (mine["ms_p20"] <= mine["ms_p80"]).all()
        assert (mine["gbps"] > 0).all() and mine["max_err"].notna().all()
    fused = rows[(rows["variant"] == "fused") & (rows["dtype"] == "bf16") & (rows["N"] == 5000)].iloc[0]
    assert fused["model_bytes"] == 2 * 4 * 5000 * 2
    assert fused["gbps"] == pytest.approx(2 * 4 * 5000 * 2 / fused["ms"] / 1e6)
    meta = json.loads((run_dir / "meta.json").read_text())
    # % of a copy of the cell's own bytes, timed in the run the same way; the device's large copy beside it
    assert fused["copy_ms"] > 0 and fused["pct_of_copy"] == pytest.approx(100 * fused["copy_ms"] / fused["ms"])
    assert fused["pct_of_device_copy"] == pytest.approx(100 * fused["gbps"] / meta["copy_gbps"]["bf16"])
    assert fused["expected_ms"] == pytest.approx(fused["copy_ms"] * fused["model_bytes"] / (2 * 4 * 5000 * 2))
    assert fused["pct_of_roofline"] == pytest.approx(100 * fused["expected_ms"] / fused["ms"])
    same_bytes = rows[(rows["dtype"] == "bf16") & (rows["N"] == 5000) & (rows["status"] == "ok")]
    assert same_bytes["copy_ms"].nunique() == 1  # one copy a (dtype, bytes) in a run
    assert (mine["call_ms"] > 0).all() and (mine["host_us"] > 0).all()
    assert (same_bytes["copy_host_us"] > 0).all() and same_bytes["copy_host_us"].nunique() == 1  # check's host gate
    for peer in ("torch_compile", "liger", "quack"):
        assert peer in set(rows["variant"])


def test_run_metadata(smoke_run):
    out_dir, run_dir, _ = smoke_run
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["run_id"] == run_dir.name
    assert meta["interpreted"] is (DEVICE == "cpu")
    for key in ("started_at", "finished_at", "command", "device", "git_commit", "timing", "copy_gbps",
                "clocks_before", "clocks_after", "copy_baseline"):
        assert key in meta
    assert set(meta["copy_gbps"]) == {"fp32", "bf16"} and all(v > 0 for v in meta["copy_gbps"].values())
    assert meta["timing"]["quantiles"] == [0.5, 0.2, 0.8]
    assert (out_dir / "copy-baseline.json").is_file()
    if DEVICE == "cpu":  # interpreted: auto by the rule, no table
        assert meta["auto_table"] is None
    else:  # the H200's table is shipped: which one a run's auto picked from
        assert meta["auto_table"] is None or meta["auto_table"]["file"].endswith(".json")


def test_sweep_prints_a_table_per_dtype(smoke_run):
    _, run_dir, result = smoke_run
    text = flat(result.stdout)
    for dtype in ("fp32", "bf16"):
        assert f"{run_dir.name} · " in text and f" · {dtype} · copy " in text
    assert "★" in text
    if DEVICE == "cpu":
        assert "INTERPRETED on CPU" in text


def test_show_prints_a_stored_run_by_id_and_by_path(smoke_run):
    out_dir, run_dir, _ = smoke_run
    by_id = invoke("show", run_dir.name, "--out", out_dir)
    assert by_id.exit_code == 0 and "×1000" in by_id.stdout and "two_" in by_id.stdout
    assert invoke("show", run_dir).stdout == by_id.stdout


def plausible_copies(store, dtype: str) -> None:
    """The stored copies of dtype made alike in GB/s at every size: a measured store may not be (an interpreted copy
    on a busy CPU once ran its 4 MB at 0.5 GB/s and its 32 MB at 4.3), and would be measured again."""
    records = json.loads(store.read_text())
    for record in records:
        for copy in record["copies"]:
            if copy["dtype"] == dtype:
                copy.update(ms=copy["bytes"] / 10.0 / 1e6, gbps=10.0)
        record["reference_gbps"][dtype] = 10.0
    store.write_text(json.dumps(records))


def test_copy_baseline_is_reused_then_measured_again_with_fresh(smoke_run):
    out_dir, _, _ = smoke_run
    plausible_copies(out_dir / "copy-baseline.json", "fp32")
    reused = invoke("copy-baseline", *MODE, "--dtype", "fp32", "--out", out_dir)
    assert reused.exit_code == 0 and "reused" in reused.stdout
    fresh = invoke("copy-baseline", *MODE, "--dtype", "fp32", "--out", out_dir, "--fresh")
    assert fresh.exit_code == 0 and "reused" not in fresh.stdout and "fp32" in fresh.stdout


def test_a_stored_copy_baseline_that_cannot_be_right_is_measured_again_and_said(smoke_run, monkeypatch):
    """An interpreted copy once recorded 12 ms for both 2 MB and 16 MB, and every later run read "copy 0 GB/s"."""
    from softmax_bench import baseline
    from softmax_bench.baseline import STORE_NAME, implausible

    measured = baseline.measure_copy

    def steady(dtype, numel, settings, interpret):
        """The copy measured again, at 10 GB/s whatever the size: on a busy CPU the real one's 8 MB once took 8 ms
        and its 32 MB 5 ms, which is itself refused (this test is of the refusal, not of the CPU)."""
        copy = measured(dtype, numel, settings, interpret)
        ms = copy["bytes"] / 10.0 / 1e6
        return {**copy, "ms": ms, "ms_p20": ms, "ms_p80": ms, "gbps": 10.0}

    monkeypatch.setattr(baseline, "measure_copy", steady)
    out_dir, _, _ = smoke_run
    store = out_dir / STORE_NAME
    records = json.loads(store.read_text())
    (record,) = records
    broken = [{**c, "ms": 12.0, "gbps": c["bytes"] / 12.0 / 1e6} for c in record["copies"] if c["dtype"] == "fp32"]
    record["copies"] = [c for c in record["copies"] if c["dtype"] != "fp32"] + broken
    record["reference_gbps"]["fp32"] = broken[0]["gbps"]
    store.write_text(json.dumps(records))
    assert "their times do not follow their bytes" in implausible(record, "fp32")
    again = invoke("copy-baseline", *MODE, "--dtype", "fp32", "--out", out_dir)
    assert again.exit_code == 0, again.output
    assert "is not used: its larger fp32 copies ran more than 2× the GB/s of its smaller ones" in flat(again.stderr)
    assert "reused" not in again.stdout
    (stored,) = json.loads(store.read_text())
    assert implausible(stored, "fp32") is None and stored["reference_gbps"]["fp32"] == 10.0 != broken[0]["gbps"]
    assert implausible({"reference_gbps": {"bf16": 0.0}, "copies": []}, "bf16") == "its bf16 copy reads 0.0 GB/s"


def test_a_failing_variant_is_reported_and_not_timed(tmp_path, monkeypatch):
    from softmax_bench import dispatch
    from softmax_bench.kernels import variants

    def wrong(name):
        variant = variants()[name]

        def wrong_launch(x, fusion):
            y, launch = variant.launch(x, fusion)
            return y * 1.5, launch

        return type(variant)(**{**variant.__dict__, "launch": wrong_launch})

    monkeypatch.setitem(variants(), "fused", wrong("fused"))
    dispatch.clear_caches()  # a sweep of N = 64 before, in this process, left the real fused as its decision
    try:
        result = invoke("sweep", *MODE, "--shape", "8x64", "--dtype", "fp32", "--variant", "fused",
                        "--variant", "eager", "--out", tmp_path)
    finally:
        monkeypatch.undo()
        dispatch.clear_caches()
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(next(tmp_path.glob("*/rows.csv")))
    fused_row = rows[rows["variant"] == "fused"].iloc[0]
    assert fused_row["status"] == "FAIL" and re.match(r"\d+ elements off by", fused_row["reason"])
    assert pd.isna(fused_row["ms"])
    assert rows[rows["variant"] == "eager"].iloc[0]["status"] == "ok"
    assert "FAIL" in result.stdout
    # torch's own code wrong (its CPU bf16 log_softmax is, at some cells): the table says whose result it was
    monkeypatch.setitem(variants(), "eager", wrong("eager"))
    dispatch.clear_caches()  # the call path keeps the variant it resolved: the wrong one from here on
    theirs = invoke("sweep", *MODE, "--shape", "8x64", "--dtype", "fp32", "--variant", "eager", "--out", tmp_path)
    assert theirs.exit_code == 0, theirs.output
    assert "torch's own result, not softmax_bench's: " in flat(theirs.stdout)
    monkeypatch.undo()
    dispatch.clear_caches()


def test_a_run_records_the_projects_settings_it_was_made_with(tmp_path, monkeypatch):
    """meta.json's settings: the SOFTMAX_BENCH_* environment of the sweep (a run made with evict_last loads or the
    opaque compiled path must say so) and Inductor's static launch of user kernels (compiled_op's launch), and
    nothing else of the environment (the Inductor cache's folder)."""
    monkeypatch.setenv("SOFTMAX_BENCH_IN_GRAPH", "0")
    monkeypatch.setenv("TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS", "1")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    result = invoke("sweep", *MODE, "--shape", "8x64", "--dtype", "fp32", "--variant", "fused", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    (meta_path,) = tmp_path.glob("*/meta.json")
    settings = json.loads(meta_path.read_text())["settings"]
    assert settings["SOFTMAX_BENCH_IN_GRAPH"] == "0"
    assert settings["TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS"] == "1"
    assert all(name.startswith("SOFTMAX_BENCH_") or name.startswith("TORCHINDUCTOR_STATIC") for name in settings)
    assert "SOFTMAX_BENCH_IN_GRAPH=0" in flat(result.stdout)  # the table's title says it too


def test_malformed_toml_names_the_file_and_line(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('shapes = ["64x32"]\ndtypes = ["fp32"\nrep_ms = 5\n')
    assert_usage_error(invoke("sweep", *MODE, "--config", config, "--out", tmp_path), str(config), "line 3")


def test_unknown_toml_key_is_named(tmp_path):
    config = tmp_path / "typo.toml"
    config.write_text('shapes = ["64x32"]\ndtype = ["fp32"]\n')
    assert_usage_error(invoke("sweep", *MODE, "--config", config, "--out", tmp_path), "unknown key 'dtype'", "dtypes")


def test_unwritable_output_directory(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert_usage_error(invoke("sweep", *MODE, "--shape", "4x32", "--out", blocker / "runs"), "is a file, not a folder",
                       "--out")


def test_show_of_a_missing_run(tmp_path):
    assert_usage_error(invoke("show", "nope", "--out", tmp_path), "no run 'nope'")


@pytest.mark.skipif(DEVICE != "cpu", reason="only meaningful where there is no GPU")
@pytest.mark.parametrize("command", ["sweep", "copy-baseline"])
def test_no_gpu_without_interpret_says_how_to_proceed(tmp_path, command):
    assert_usage_error(invoke(command, "--out", tmp_path), "no CUDA GPU", "--interpret")


def test_help_teaches(tmp_path):
    result = invoke("sweep", "--help")
    assert result.exit_code == 0
    for word in ("--preset", "--resume", "--interpret", "smoke", "timing.py"):
        assert word in flat(result.stdout)
    assert "do_bench" not in result.stdout  # the timer is softmax_bench/timing.py's
    # the choices are listed, and no type is printed after a flag
    for choice in ("|".join(MEASURABLE), "default|narrow|seed|smoke", "softmax|scaled|scaled-masked|causal", "fp32|bf16|fp16"):
        assert choice in result.stdout.replace("list[", "[").replace("<", "[").replace(">", "]")
    assert "<bool>" not in result.stdout and "DESIGN" not in result.stdout
    settings = flat(invoke("--help").stdout)  # the environment's switches, each with what it does
    for name in ("FORWARD_EVICT=plain", "IN_GRAPH=0", "STATIC_LAUNCH=0", "FOLD_PROLOGUES=0", "FUSE_CHAINS=0",
                 "FAST_LAUNCHES=0", "FINISH_PDL=0", "AUTO_TABLES=DIR", "COMMIT="):
        assert f"SOFTMAX_BENCH_{name}" in settings, name


@pytest.mark.skipif(DEVICE != "cpu", reason="the interpreter's default")
def test_interpret_with_no_shape_runs_the_smoke_preset_and_says_so(smoke_run):
    _, run_dir, result = smoke_run
    assert "no shape options: running the smoke preset, the default under --interpret" in result.stderr
    assert json.loads((run_dir / "meta.json").read_text())["plan"]["sources"] == ["preset smoke"]


def test_config_file_sweep(tmp_path):
    config = tmp_path / "tiny.toml"
    config.write_text('m = [3]\nn = [40, 70]\ndtypes = ["fp16"]\nvariants = ["fused", "eager"]\nrep_ms = 5\n')
    result = invoke("sweep", *MODE, "--config", config, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(next(tmp_path.glob("*/rows.csv")))
    assert sorted(set(rows["variant"])) == ["eager", "fused"]
    assert set(zip(rows["M"], rows["N"], rows["dtype"])) == {(3, 40, "fp16"), (3, 70, "fp16")}


def test_killed_sweep_keeps_finished_cells_and_resumes(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "softmax_bench", "sweep", *MODE, "--preset", "smoke", "--variant", "fused",
           "--variant", "online", "--variant", "eager", "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 240
        rows_file = None
        while time.time() < deadline:
            rows_file = next(tmp_path.glob("*/rows.csv"), None)
            if rows_file is not None and len(rows_file.read_text().splitlines()) >= 3:  # header + 2 rows
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    kept = pd.read_csv(rows_file)
    assert 2 <= len(kept) < 3 * 2 * 3
    run_dir = rows_file.parent
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "running"

    result = invoke("sweep", *MODE, "--resume", run_dir.name, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(rows_file)
    assert len(rows) == 3 * 2 * 3  # three variants, two dtypes, three shapes: each exactly once
    assert not rows.duplicated(["variant", "dtype", "M", "N"]).any()
    # the cells finished before the kill were kept as they were, not measured again
    pd.testing.assert_frame_equal(rows.iloc[: len(kept)].reset_index(drop=True), kept, check_dtype=False)
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("op", ["scaled-masked", "causal", "key-padded", "biased"])
def test_op_sweeps_check_and_time_every_variant(tmp_path, op):
    result = invoke("sweep", *MODE, "--op", op, "--shape", "8x300", "--dtype", "bf16", "--rep-ms", "5",
                    "--out", tmp_path)
    assert result.exit_code == 0, result.output
    rows = pd.read_csv(next(tmp_path.glob("*/rows.csv")))
    assert set(rows["op"]) == {op}
    mine = rows[rows["variant"].isin(OUR_VARIANTS)]
    assert (mine["status"] == "ok").all(), mine[["variant", "status", "reason"]]
    assert f"op {op}" in flat(result.stdout)
    fused = mine[(mine["variant"] == "fused") & (mine["N"] == 300)].iloc[0]
    eager = mine[(mine["variant"] == "eager") & (mine["N"] == 300)].iloc[0]
    assert eager["model_bytes"] > fused["model_bytes"]  # eager's scale and masked_fill are passes of their own
    if op == "scaled-masked":
        assert fused["model_bytes"] == 8 * 300 * (2 + 2 + 1)  # x, y and a byte of mask an element
    elif op == "causal":  # 8 queries of 300 keys: query i reads its i + 293 kept columns, and y is written whole
        assert fused["model_bytes"] == 2 * sum(i + 293 for i in range(8)) + 2 * 8 * 300
    elif op == "key-padded":  # the 8 rows share one row of key-padding mask, read once
        assert fused["model_bytes"] == 8 * 300 * (2 + 2) + 300
    else:  # x, y and a bf16 bias of x's shape
        assert fused["model_bytes"] == 8 * 300 * (2 + 2 + 2)
    # judged by its own bytes: priced at a copy of exactly the floor's bytes (fused's), timed in the run, and a
    # variant that moves more at that copy's bandwidth
    assert fused["expected_ms"] == pytest.approx(fused["roofline_copy_ms"])
    assert fused["pct_of_roofline"] == pytest.approx(100 * fused["roofline_copy_ms"] / fused["ms"])
    floor_gbps = fused["model_bytes"] / fused["roofline_copy_ms"]
    assert eager["expected_ms"] == pytest.approx(eager["model_bytes"] / floor_gbps)
    assert mine["roofline_copy_ms"].nunique() == 1
    # the table shows each cell as % of its own roofline, and says so
    from softmax_bench.report import _pct

    assert "% of the roofline of the bytes each moves" in flat(result.stdout)
    assert "a copy of the op's own bytes timed in the run" in flat(result.stdout)
    assert f"{_pct(fused['pct_of_roofline'])}r" in result.stdout


@pytest.mark.parametrize("op", ["softmax", "causal"])
def test_a_fused_cell_is_priced_at_a_copy_of_its_floors_bytes(tmp_path, monkeypatch, op):
    """Beside the copy of x and y (pct_of_copy), a fused op's cell times a copy of exactly the bytes its floor
    moves (causal: x's kept columns read, y written), and prices expected_ms at it; a plain softmax times one."""
    from softmax_bench import sweep

    copied = []
    timed_copy = sweep.copy_timing
    monkeypatch.setattr(sweep, "copy_timing", lambda nbytes, *args: copied.append(nbytes) or timed_copy(nbytes, *args))
    result = invoke("sweep", *MODE, "--op", op, "--shape", "8x300", "--dtype", "bf16", "--variant", "fused",
                    "--rep-ms", "5", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    x_and_y = 2 * 8 * 300 * 2
    floor = 2 * sum(i + 293 for i in range(8)) + 8 * 300 * 2  # 8 queries of 300 keys, bottom-right: i + 293 kept
    assert sorted(copied) == ([floor, x_and_y] if op == "causal" else [x_and_y])
    meta = json.loads(next(tmp_path.glob("*/meta.json")).read_text())
    assert meta["roofline"] == "copy of the floor's bytes"


def test_a_mask_shape_whose_k_does_not_divide_m_is_said_and_each_cells_is_recorded(tmp_path):
    """rows/K over M rows that K does not divide is laid out with gcd(M, K) rows to a row of mask (ops.mask_layout):
    the dry run's table and a line say so before anything is measured, the sweep says it again, and each row of
    rows.csv holds the mask shape its cell was measured with, not only the one asked for."""
    args = ["--op", "scaled-masked", "--mask-shape", "rows/4", "--shape", "6x40", "--shape", "8x40", "--dtype", "fp32"]
    dry = invoke("sweep", *MODE, *args, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert re.search(r"6×40\s*│\s*rows/2\s*│", dry.stdout) and re.search(r"8×40\s*│\s*rows/4\s*│", dry.stdout)
    note = "note: mask shape rows/4: K does not divide every M, so a row of mask is shared by gcd(M, K) rows there: " \
           "rows/2 at M = 6"
    assert note in flat(dry.stdout)
    result = invoke("sweep", *MODE, *args, "--rep-ms", "5", "--variant", "fused", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert note in flat(result.output)
    rows = pd.read_csv(next(tmp_path.glob("*/rows.csv")))
    assert dict(zip(rows["M"], rows["mask_shape"])) == {6: "rows/2", 8: "rows/4"}
    # the bytes counted are the mask's as laid out: three rows of mask for 6 rows of x, two for 8
    assert dict(zip(rows["M"], rows["model_bytes"])) == {6: 2 * 6 * 40 * 4 + 3 * 40, 8: 2 * 8 * 40 * 4 + 2 * 40}
    plain = invoke("sweep", *MODE, "--shape", "6x40", "--dtype", "fp32", "--dry-run")
    assert "mask shape" not in plain.stdout and "note:" not in plain.stdout
    # key-padded lays out its own rows/64 (64 rows a head): over 100 rows, rows/4, said the same way
    padded = invoke("sweep", *MODE, "--op", "key-padded", "--shape", "100x40", "--dtype", "fp32", "--dry-run")
    assert re.search(r"100×40\s*│\s*rows/4\s*│", padded.stdout), padded.stdout
    assert "note: mask shape rows/64: K does not divide every M" in flat(padded.stdout)


def test_a_broadcast_mask_or_bias_is_measured_as_it_is_and_recorded(tmp_path):
    """--mask-shape (or a config's mask_shape) lays the mask or bias over x's rows as a user's broadcast one lies:
    its own bytes are counted, every variant that takes it is checked against the reference, and the run says how
    it was laid out."""
    config = tmp_path / "shared.toml"
    config.write_text('op = "biased"\nmask_shape = "rows/4"\nshapes = ["8x300"]\ndtypes = ["bf16"]\n')
    runs = {}
    for name, args in {"bias rows/4": ["--config", config],
                       "mask row": ["--op", "scaled-masked", "--mask-shape", "row", "--shape", "8x300",
                                    "--dtype", "bf16"]}.items():
        out = tmp_path / name.replace(" ", "-").replace("/", "-")
        result = invoke("sweep", *MODE, *args, "--rep-ms", "5", "--variant", "fused", "--variant", "two_pass",
                        "--variant", "eager", "--out", out)
        assert result.exit_code == 0, result.output
        run_dir = next(out.glob("*/"))
        runs[name] = pd.read_csv(run_dir / "rows.csv"), json.loads((run_dir / "meta.json").read_text())
    rows, meta = runs["bias rows/4"]
    assert meta["mask_shape"] == "rows/4" and (rows["status"] == "ok").all(), rows[["variant", "status", "reason"]]
    assert set(rows["mask_shape"]) == {"rows/4"}
    # x and y, and the two bf16 rows of bias the 8 rows share four by four
    assert set(rows.loc[rows["variant"] != "eager", "model_bytes"]) == {8 * 300 * 4 + 2 * 300 * 2}
    rows, meta = runs["mask row"]
    assert meta["mask_shape"] == "row" and (rows["status"] == "ok").all(), rows[["variant", "status", "reason"]]
    assert set(rows.loc[rows["variant"] != "eager", "model_bytes"]) == {8 * 300 * 4 + 300}  # one row of mask
    assert set(rows["mask_shape"]) == {"row"}
    assert_usage_error(invoke("sweep", *MODE, "--op", "causal", "--mask-shape", "rows/4", "--shape", "8x300"),
                       "op causal has no mask or bias to lay out")
    assert_usage_error(invoke("sweep", *MODE, "--op", "biased", "--mask-shape", "heads", "--shape", "8x300"),
                       "rows/K: K consecutive rows share a row")


def test_log_takes_the_log_softmax_of_a_fused_op(tmp_path):
    """--log: the op's log_softmax, its bias (or mask) fused the same way, checked against the log reference and
    recorded; the loss, which is a log_softmax already, refuses it."""
    result = invoke("sweep", *MODE, "--op", "biased", "--log", "--shape", "8x300", "--dtype", "bf16", "--rep-ms", "5",
                    "--variant", "fused", "--variant", "two_pass", "--variant", "eager", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    run_dir = next(tmp_path.glob("*/"))
    rows, meta = pd.read_csv(run_dir / "rows.csv"), json.loads((run_dir / "meta.json").read_text())
    assert meta["log"] is True and (rows["status"] == "ok").all(), rows[["variant", "status", "reason"]]
    assert "op biased, its log_softmax" in flat(result.stdout)
    assert_usage_error(invoke("sweep", *MODE, "--op", "cross-entropy", "--log", "--shape", "8x300"),
                       "cross-entropy is a loss")


def test_softmax_bench_commit_names_the_code_even_in_a_checkout(monkeypatch):
    from softmax_bench import run_life

    monkeypatch.delenv("SOFTMAX_BENCH_COMMIT", raising=False)
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    if (REPO / ".git").exists() and shutil.which("git"):
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", run_life.git_commit()) and run_life.git_commit().startswith(head)
    monkeypatch.setenv("SOFTMAX_BENCH_COMMIT", "a426da7")  # a copied tree with a stale .git says what it runs
    assert run_life.git_commit() == "a426da7"


def test_outside_a_checkout_the_commit_comes_from_github_sha(monkeypatch):
    from softmax_bench import run_life

    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.delenv("SOFTMAX_BENCH_COMMIT", raising=False)
    monkeypatch.setattr(run_life.subprocess, "run", no_git)
    monkeypatch.setenv("GITHUB_SHA", "0123abc")
    assert run_life.git_commit() == "0123abc"
    monkeypatch.delenv("GITHUB_SHA")
    assert run_life.git_commit() is None  # and the run's metadata says so, rather than inventing one


def test_tables_fit_80_columns_and_one_reason_is_one_footnote():
    from rich.console import Console

    from softmax_bench.report import sweep_tables
    from softmax_bench.results import Run

    run = Run(REPO / "tests" / "data" / "20261130-020251-h200")  # every variant and torch.compile; fused skips 6 cells
    console = Console(width=80, record=True)
    for table in sweep_tables(run.rows(), run.meta()):
        console.print(table)
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    assert max(len(line) for line in lines) <= 80 and not any("…" in line for line in lines)
    assert any(line.endswith("torch_") for line in lines) and any(line.endswith("compile") for line in lines)
    assert lines.count("[1] fused holds a row in registers and supports N ≤ 32768") == 2  # once a table
    assert not any("[2]" in line for line in lines)


@pytest.mark.skipif(DEVICE != "cpu", reason="the interpreter is the CPU's path")
def test_interpret_works_in_a_fresh_process(tmp_path):
    """`--interpret` sets Triton's interpreter up before any Triton code is loaded (the tests' conftest sets it
    before import; a user's shell does not)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-m", "softmax_bench", "explain", "--interpret", "--shape", "4x64",
                           "--measure", "--out", str(tmp_path)], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "auto picks fused" in flat(done.stdout)


def test_a_small_cell_is_timed_from_fresh_memory_in_trials_and_the_fastest_kept(monkeypatch):
    from softmax_bench import sweep
    from softmax_bench.kernels import PLAIN
    from softmax_bench.providers import Cell
    from softmax_bench.timing import Timing, TimingSettings

    cell = Cell(x=torch.arange(8.0).view(2, 4), fusion=PLAIN, precise=torch.float64, dy=torch.ones(2, 4))
    seen = []

    def fake_measure(call, settings, interpret):  # a trial's time from the memory the call reads
        seen.append((call().data_ptr(), cell.x.tolist()))
        return Timing(*(3 * [1.0 if len(seen) == 2 else 3.0]))  # the second trial is the fastest

    monkeypatch.setattr(sweep, "measure", fake_measure)
    small = sweep.TRIALS_BELOW_BYTES - 1
    timing = sweep.timed(lambda: cell.x, cell, "forward", small, TimingSettings(), interpret=False)
    assert timing.ms == 1.0 and len(seen) == sweep.TRIALS
    assert len({ptr for ptr, _ in seen}) == sweep.TRIALS  # each trial read x from other memory
    assert all(values == torch.arange(8.0).view(2, 4).tolist() for _, values in seen)  # the same input
    seen.clear()
    dy_before = cell.dy.data_ptr()
    sweep.timed(lambda: cell.dy, cell, "backward", small, TimingSettings(), interpret=False)
    assert cell.dy.data_ptr() != dy_before  # a backward's trials move dy
    seen.clear()
    sweep.timed(lambda: cell.x, cell, "forward", sweep.TRIALS_BELOW_BYTES, TimingSettings(), interpret=False)
    assert len(seen) == 1  # a large cell: one trial


def test_runs_lists_the_stored_runs_newest_first_and_an_unknown_id_names_the_newest(tmp_path):
    for run_id, started in (("zz-old", "2026-01-01T00:00:00+0000"), ("aa-new", "2026-02-01T00:00:00+0000")):
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / "meta.json").write_text(json.dumps({
            "run_id": run_id, "started_at": started, "device": {"name": "Test GPU", "triton": "3.8.0"},
            "op": "softmax", "passes": ["forward"], "git_commit": "abcdef1234567", "status": "complete"}))
    result = invoke("runs", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert text.index("aa-new") < text.index("zz-old") and "Test GPU" in text and "abcdef1234" in text
    assert "newest first (2 of 2)" in text
    assert_usage_error(invoke("show", "nope", "--out", tmp_path), "the newest runs", "aa-new, zz-old",
                       "softmax-bench runs")
    assert_usage_error(invoke("runs", "--out", tmp_path / "empty"), "no runs in")


def test_resume_refuses_options_of_a_new_plan_and_an_empty_config_is_refused(tmp_path, smoke_run):
    out_dir, run_dir, _ = smoke_run
    assert_usage_error(invoke("sweep", *MODE, "--resume", run_dir, "--shape", "8x8", "--dtype", "fp16"),
                       "--resume finishes", "--shape, --dtype cannot go with it")
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert_usage_error(invoke("sweep", *MODE, "--config", empty, "--out", tmp_path / "runs"), "no shapes to measure")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_ctrl_c_while_the_command_line_starts_is_one_line_and_exit_130():
    """A Ctrl-C while `softmax-bench` imports torch (its first seconds): one line and exit 130, not an import's
    traceback; a rank of --gpus (LOCAL_RANK set) exits 130 saying nothing. Once cli.py has loaded, Ctrl-C is Python's
    again; a program that imports the library keeps its own handler throughout."""
    # Each child as a shell's foreground command starts, with Ctrl-C's default disposition: a test run started in
    # the background by a shell without job control ignores SIGINT, and its children would inherit that.
    foreground = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    as_cli = "import sys; sys.argv[0] = 'softmax-bench'; "
    interrupted = "import os, signal, time, softmax_bench; os.kill(os.getpid(), signal.SIGINT); time.sleep(30)"
    is_default = "import signal, softmax_bench{}; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    children = {"cli": (as_cli + interrupted, {}), "rank": (as_cli + interrupted, {"LOCAL_RANK": "1"}),
                "loaded": (as_cli + is_default.format(".cli"), {}), "library": (is_default.format(""), {})}
    procs = {name: subprocess.Popen([sys.executable, "-c", foreground + code], cwd=REPO, env={**os.environ, **env},
                                    text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name, (code, env) in children.items()}
    done = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        done[name] = (proc.returncode, out, err)
    assert done["cli"] == (130, "", "softmax-bench: interrupted while starting; nothing was run\n"), done["cli"]
    assert done["rank"] == (130, "", ""), done["rank"]
    assert done["loaded"][:2] == (0, "True\n") and done["library"][:2] == (0, "True\n"), done


def test_ctrl_c_says_the_exact_command_that_finishes_the_run(tmp_path, monkeypatch):
    from softmax_bench import sweep

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "run_sweep", interrupted)
    result = invoke("sweep", *MODE, "--shape", "4x32", "--variant", "fused", "--out", tmp_path / "elsewhere")
    assert result.exit_code == 130
    (run_dir,) = [p for p in (tmp_path / "elsewhere").iterdir() if p.is_dir()]  # beside the copy baseline
    assert f"softmax-bench sweep --resume {run_dir}{' --interpret' if MODE else ''}`" in flat(result.stderr)


def test_env_says_what_a_bug_report_needs(tmp_path, monkeypatch):
    for name in [name for name in os.environ if name.startswith("SOFTMAX_BENCH_")]:
        monkeypatch.delenv(name)
    result = invoke("env", *MODE, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    for what in ("python", "torch", "triton", "liger-kernel", "quack-kernels", "cluster variant", "replayed calls",
                 "auto table", "copy baseline"):
        assert what in text, what
    assert ("not replayed: under Triton's interpreter" if MODE else "launched by") in text
    assert torch.__version__.split("+")[0] in text and "none stored in" in text
    assert "no SOFTMAX_BENCH_* variable set: the defaults" in text
    monkeypatch.setenv("SOFTMAX_BENCH_FORWARD_EVICT", "plain")  # the settings a run records, as it would
    assert "SOFTMAX_BENCH_FORWARD_EVICT=plain" in flat(invoke("env", *MODE, "--out", tmp_path).stdout)


def test_dry_run_lists_the_cells_their_memory_and_a_time_and_measures_nothing(tmp_path):
    result = invoke("sweep", "--dry-run", "--preset", "default", "--pass", "both", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "32 cells" in text and "8192×50257" in text and "nothing was measured" in text
    assert re.search(r"about \d+\.\d min on a GPU", text)
    assert re.search(r"\d\.\d\d GB", text) and not any(tmp_path.iterdir())  # no run folder, no baseline
    interpreted = invoke("sweep", "--interpret", "--dry-run", "--out", tmp_path)
    assert interpreted.exit_code == 0 and "not estimated under --interpret" in flat(interpreted.stdout)
    assert_usage_error(invoke("sweep", *MODE, "--dry-run", "--resume", "x", "--out", tmp_path), "--dry-run")


def test_a_dry_runs_time_counts_a_fused_cells_copy_of_its_own_bytes():
    """A causal cell times two copies (x and y's, and its floor's), a scaled one, moving x and y alone, one: the
    dry run's estimate has one copy's trials more for the causal cell."""
    from dataclasses import replace

    from softmax_bench import sweep
    from softmax_bench.config import build_plan

    plan = build_plan(["4096x4000"], [], [], None, None, ["bf16"], ["fused"])
    estimates = {op: sweep.dry_run(replace(plan, op=op), interpret=False)[1] for op in ("scaled", "causal")}
    timing = plan.timing
    one_copy = sweep.TRIALS * (timing.warmup_ms + timing.rep_ms + sweep.CALL_ROUNDS * sweep.CALL_ROUND_MS) / 1000
    assert estimates["causal"] - estimates["scaled"] == pytest.approx(one_copy)


def test_a_sweep_into_a_log_says_each_finished_measurement_on_a_line_of_its_own(tmp_path):
    """Output that is not a terminal (a CI log) gets one plain line a measurement, with the count and time left."""
    result = invoke("sweep", *MODE, "--shape", "4x32", "--dtype", "fp32", "--variant", "fused", "--variant", "eager",
                    "--out", tmp_path)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if re.match(r"\d+/2 ", line)]
    assert [line.split()[0] for line in lines] == ["1/2", "2/2"]
    assert "fp32 4×32 fused" in lines[0] and "s left" in lines[1]


def test_a_sweep_whose_every_variant_is_skipped_prints_a_readable_table(tmp_path):
    result = invoke("sweep", *MODE, "--variant", "cluster", "--shape", "8x8", "--dtype", "bf16", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) < 40 and "not measured: cluster: cluster" in flat(result.stdout)
    assert max(len(line) for line in result.stdout.splitlines()) >= 60  # the caption is not wrapped to a column
