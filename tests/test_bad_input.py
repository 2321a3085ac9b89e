"""Bad input, as a newcomer gives it: exit 2, one line on stderr naming the file, key or option and what is
accepted, no traceback, and no run folder left behind. None of these tests runs a kernel."""

import json
import shutil
from pathlib import Path

import pytest

from .conftest import MODE, REPO, assert_usage_error, invoke

REFERENCE = REPO / "ci" / "ci-reference-h200"


def no_run_folder(out_dir) -> bool:
    return not out_dir.exists() or not any(p.is_dir() for p in out_dir.iterdir())


@pytest.mark.parametrize(
    "toml, words",
    [
        ('n = [32]\nelems = "lots"', ['elems = "lots"', "whole number"]),
        ("n = [32]\nelems = 1e6", ["elems = 1000000.0", "whole number"]),
        ('shapes = ["4x32"]\nwarmup_ms = "x"', ['warmup_ms = "x"', "milliseconds ≥ 0"]),
        ('shapes = ["4x32"]\nrep_ms = -5', ["rep_ms = -5", "milliseconds ≥ 1"]),
        ('shapes = ["4x32"]\nmax_noise = -1', ["max_noise = -1", "a number of percent ≥ 0"]),
        ('shapes = ["4x32"]\ndtypes = "fp32"', ['dtypes = "fp32"', 'a non-empty list of dtypes from "fp32", "bf16"']),
        ('shapes = ["4x32"]\ndtypes = []', ["dtypes = []", "a non-empty list", "leave the key out"]),
        ('shapes = ["4x32"]\ndtypes = ["fp64"]', ['dtypes = ["fp64"]', '"fp16"']),
        ('shapes = ["4x32"]\nvariants = "fused"', ['variants = "fused"', 'a list of names from "fused", ', '"eager"']),
        ('shapes = ["4x32"]\nvariants = ["fastest"]', ['variants = ["fastest"]', '"two_pass"']),
        ('shapes = "64x32"', ['shapes = "64x32"', 'a list of "MxN" strings']),
        ('shapes = ["64by32"]', ["shapes: shape '64by32' is not MxN"]),
        ("m = [4]\nn = [0]", ["n = [0]", "whole numbers ≥ 1"]),
        ('shapes = ["4x32"]\nop = 3', ["op = 3", '"causal"']),
        ('shapes = ["4x32"]\ndescription = ["a", "b"]', ["description", "a string"]),
    ],
)
def test_a_config_value_of_the_wrong_type_or_range(tmp_path, toml, words):
    config = tmp_path / "bad.toml"
    config.write_text(toml + "\n")
    out_dir = tmp_path / "out"
    assert_usage_error(invoke("sweep", *MODE, "--config", config, "--out", out_dir), str(config), *words)
    assert no_run_folder(out_dir)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--rep-ms", "-5"], ["'--rep-ms'", ("greater than or equal to 1", "x>=1")]),
        (["--warmup-ms", "x"], ["'--warmup-ms'", ("valid integer", "valid int")]),
        (["--dtype", "fp64"], ["'--dtype'", "'fp64' is not one of 'fp32', 'bf16', 'fp16'"]),
        (["--variant", "fastest"], ["'--variant'", "'fastest' is not one of 'fused', ", "'two_pass'"]),
        (["--preset", "huge"], ["'--preset'", "'huge' is not one of", "'smoke'"]),
        (["--op", "dropout"], ["'--op'", "'causal'"]),
        (["--m", "4", "--n", "-3"], ["'--n'", ("greater than or equal to 1", "x>=1")]),
        (["--shape", "0x128"], ["--shape", "'0x128' is not MxN with M, N ≥ 1"]),
        (["--shape", "12by4"], ["--shape", "'12by4' is not MxN"]),
        (["--resume", "no-such-run"], ["no run 'no-such-run'"]),
    ],
)
def test_a_bad_sweep_option(tmp_path, args, words):
    out_dir = tmp_path / "out"
    assert_usage_error(invoke("sweep", *MODE, "--out", out_dir, *args), *words)
    assert no_run_folder(out_dir)


@pytest.mark.skipif(not MODE, reason="the cap is on the interpreter")
def test_a_cell_too_large_for_the_interpreter(tmp_path):
    out_dir = tmp_path / "out"
    assert_usage_error(invoke("sweep", *MODE, "--shape", "32768x4096", "--out", out_dir),
                       "--shape: 32768x4096 is 134,217,728 elements", "at most 1,048,576")
    assert_usage_error(invoke("sweep", *MODE, "--preset", "default", "--out", out_dir), "preset default")
    assert_usage_error(invoke("explain", *MODE, "--shape", "32768x4096", "--measure", "--out", out_dir),
                       "explain --measure", "at most 1,048,576")
    assert no_run_folder(out_dir)


def test_a_negative_threshold():
    assert_usage_error(invoke("check", REFERENCE, "--baseline", REFERENCE, "--threshold", "-5"),
                       "'--threshold'", ("greater than or equal to 0", "x>=0"))


def test_an_out_that_is_a_file_and_a_shape_too_large_for_any_tensor(tmp_path):
    a_file = tmp_path / "README.md"
    a_file.write_text("a file")
    assert_usage_error(invoke("sweep", *MODE, "--shape", "4x32", "--out", a_file), "is a file, not a folder")
    assert_usage_error(invoke("copy-baseline", *MODE, "--out", a_file / "x"), "is a file, not a folder")
    assert_usage_error(invoke("explain", *MODE, "--shape", "100000000000x100000000000", "--out", tmp_path),
                       "--shape", "more than a tensor can hold")


def test_unknown_command_and_missing_argument():
    assert_usage_error(invoke("swep"), "No such command 'swep'")
    assert_usage_error(invoke("show"), "Missing argument")


# --- damaged or partial run folders --------------------------------------------------------------------


@pytest.fixture
def run_dir(tmp_path):
    """A copy of a committed run, to damage."""
    copy = tmp_path / "run"
    shutil.copytree(REFERENCE, copy, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    return copy


def edit_rows(run_dir, edit):
    path = run_dir / "rows.csv"
    path.write_text(edit(path.read_text()))


@pytest.mark.parametrize("command", ["show", "plot", "compare"])
def test_rows_without_a_column(run_dir, command):
    edit_rows(run_dir, lambda text: "\n".join(",".join(line.split(",")[:8] + line.split(",")[9:])
                                              for line in text.splitlines()) + "\n")  # drops pct_of_copy
    args = [run_dir, REFERENCE] if command == "compare" else [run_dir]
    assert_usage_error(invoke(command, *args), "rows.csv has no column pct_of_copy", "variant, dtype, M, N")


def test_a_value_that_is_not_a_number(run_dir):
    lines = (run_dir / "rows.csv").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("two_pass,bf16,2097152,32,"))
    edit_rows(run_dir, lambda text: text.replace("two_pass,bf16,2097152,32,", "two_pass,bf16,lots,32,", 1))
    assert_usage_error(invoke("show", run_dir), f"rows.csv line {line}", "M = 'lots': expected a number")


def test_an_unknown_status(run_dir):
    edit_rows(run_dir, lambda text: text.replace(",ok,", ",fine,", 1))
    assert_usage_error(invoke("show", run_dir), "rows.csv line 2", "status = 'fine'", "ok, FAIL, skipped")


@pytest.mark.parametrize("command", ["show", "plot"])
def test_a_run_with_no_rows(run_dir, command):
    edit_rows(run_dir, lambda text: text.splitlines()[0] + "\n")
    assert_usage_error(invoke(command, run_dir), "has no rows yet", "--resume run")


def test_a_run_with_no_timed_rows_has_nothing_to_plot(run_dir):
    edit_rows(run_dir, lambda text: text.replace(",ok,", ",skipped,"))
    assert_usage_error(invoke("plot", run_dir), "no timed rows")


def test_a_last_line_cut_short_is_named_not_dropped(run_dir):
    edit_rows(run_dir, lambda text: text[:-40])
    lines = len((run_dir / "rows.csv").read_text().splitlines())
    for command in ("show", "plot"):
        assert_usage_error(invoke(command, run_dir), f"rows.csv: line {lines} is cut short", "--resume run")


def test_resume_drops_the_cut_line(tmp_path):
    from softmax_bench.results import Run

    run = Run(tmp_path)
    (tmp_path / "rows.csv").write_text("variant,dtype\nfused,bf16\neager,bf")
    assert run.drop_cut_line() == "eager,bf"
    assert (tmp_path / "rows.csv").read_text() == "variant,dtype\nfused,bf16\n"
    assert run.drop_cut_line() is None


def test_rows_without_metadata(run_dir):
    (run_dir / "meta.json").unlink()
    assert_usage_error(invoke("show", run_dir), "has rows.csv but no meta.json")


@pytest.mark.parametrize("meta", ["[1, 2]", "{not json"])
def test_metadata_that_is_not_a_run_s(run_dir, meta):
    (run_dir / "meta.json").write_text(meta)
    assert_usage_error(invoke("show", run_dir), "meta.json")


def test_a_run_whose_metadata_lacks_its_plan_cannot_be_resumed(run_dir):
    meta = json.loads((run_dir / "meta.json").read_text())
    del meta["plan"]
    (run_dir / "meta.json").write_text(json.dumps(meta))
    assert_usage_error(invoke("sweep", *MODE, "--resume", run_dir), "meta.json is damaged", "cannot be resumed")


def test_a_fused_run_priced_at_the_older_roofline_is_not_resumed(tmp_path):
    """A fused op's run from before its cells were priced at a copy of their own bytes (no roofline in meta.json)
    would mix the two prices in one rows.csv: resuming it is refused, and says what to do."""
    assert invoke("sweep", *MODE, "--op", "causal", "--shape", "8x300", "--shape", "8x96", "--dtype", "bf16",
                  "--variant", "fused", "--rep-ms", "5", "--out", tmp_path).exit_code == 0
    run_dir = next(tmp_path.glob("*/meta.json")).parent
    meta = json.loads((run_dir / "meta.json").read_text())
    del meta["roofline"]
    (run_dir / "meta.json").write_text(json.dumps({**meta, "status": "running"}))
    rows = (run_dir / "rows.csv").read_text().splitlines()
    (run_dir / "rows.csv").write_text("\n".join(rows[:2]) + "\n")
    assert_usage_error(invoke("sweep", *MODE, "--resume", run_dir, "--out", tmp_path),
                       "priced its cells at the bandwidth of the copy of x and y", "start a new sweep")


def test_a_damaged_copy_baseline_store(tmp_path):
    (tmp_path / "copy-baseline.json").write_text("[1, 2]")
    assert_usage_error(invoke("sweep", *MODE, "--shape", "4x32", "--out", tmp_path),
                       "copy-baseline.json is not a list of copy-baseline records")
    assert no_run_folder(tmp_path)


def test_a_run_folder_that_cannot_be_written_is_one_line(tmp_path, smoke_run, monkeypatch):
    """`sweep --resume` of a run in a read-only folder (tried by making its writes fail: this suite may run as root,
    which no permission stops)."""
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run[1], run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    (run_dir / "meta.json").write_text(json.dumps({**meta, "status": "running"}))
    rows = (run_dir / "rows.csv").read_text().splitlines()
    (run_dir / "rows.csv").write_text("\n".join(rows[:2]) + "\n")  # the header and one cell: more to measure

    def refused(real, reads_too: bool):
        def write(self, *args, **kwargs):
            mode = args[0] if args else kwargs.get("mode", "r")
            if run_dir in self.parents and (not reads_too or mode != "r"):
                raise PermissionError(13, "Permission denied", str(self))
            return real(self, *args, **kwargs)
        return write

    monkeypatch.setattr(Path, "write_text", refused(Path.write_text, False))
    monkeypatch.setattr(Path, "open", refused(Path.open, True))
    assert_usage_error(invoke("sweep", *MODE, "--resume", run_dir, "--out", tmp_path), "cannot write into run run",
                       "Permission denied", "copy its folder somewhere writable")
