"""`check` and `compare` on a real committed H200 run: quiet on noise, loud on a real slowdown."""

import json
import shutil

import pandas as pd
import pytest

from .conftest import REPO, assert_usage_error, flat, invoke

REFERENCE = REPO / "results" / "ci-reference-h200"  # the ci sweep's H200 reference (bf16 and fp32), committed


def clone(tmp_path, name, edit=None, meta_edit=None):
    """A copy of the reference run, its rows (and metadata) edited."""
    run_dir = tmp_path / name
    shutil.copytree(REFERENCE, run_dir, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    rows = pd.read_csv(run_dir / "rows.csv")
    if edit is not None:
        rows = edit(rows)
        rows.to_csv(run_dir / "rows.csv", index=False)
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["run_id"] = name
    if meta_edit is not None:
        meta_edit(meta)
    (run_dir / "meta.json").write_text(json.dumps(meta))
    return run_dir


def slower(rows, factor, where):
    """Every time of the selected rows × 1/factor, bandwidth × factor: factor 0.9 is 10 % slower."""
    rows = rows.copy()
    for column in ("ms", "ms_p20", "ms_p80"):
        rows.loc[where, column] = rows.loc[where, column] / factor
    for column in ("gbps", "pct_of_copy", "model_gbps"):
        rows.loc[where, column] = rows.loc[where, column] * factor
    return rows


def test_a_run_against_itself_passes():
    result = invoke("check", REFERENCE, "--baseline", REFERENCE)
    assert result.exit_code == 0, result.output
    assert "no regression" in flat(result.stdout)


def test_one_cell_ten_percent_slower_fails_and_is_named(tmp_path):
    def edit(rows):
        return slower(rows, 0.9, (rows["variant"] == "fused") & (rows["N"] == 4096) & (rows["dtype"] == "fp32"))

    run_dir = clone(tmp_path, "slowed", edit)
    summary = tmp_path / "summary.md"
    result = invoke("check", run_dir, "--baseline", REFERENCE, "--markdown", summary)
    assert result.exit_code == 1, result.output
    assert "regressions: fused fp32 16384×4096;" in result.stderr  # that cell, and only that one
    assert "REGRESSION" in result.stdout
    text = summary.read_text()
    assert "FAILED" in text and "| fused fp32 16384×4096 |" in text and "Regressions: 1" in text


def test_every_cell_moved_within_its_own_band_passes(tmp_path):
    """Each median moved to the slow end of its own p20–p80 band: noise, however large, is not a regression."""

    def edit(rows):
        rows = rows.copy()
        ok = rows["status"] == "ok"
        factor = rows.loc[ok, "ms"] / rows.loc[ok, "ms_p80"]
        rows.loc[ok, "pct_of_copy"] *= factor
        rows.loc[ok, "gbps"] *= factor
        rows.loc[ok, "ms"] = rows.loc[ok, "ms_p80"]
        return rows

    run_dir = clone(tmp_path, "noisy", edit)
    result = invoke("check", run_dir, "--baseline", REFERENCE)
    assert result.exit_code == 0, result.output


def test_a_ten_percent_drop_inside_a_wide_band_is_noise(tmp_path):
    """The same 10 % drop as above, but the cell's p20–p80 band spans ±15 %: the bands overlap, so it passes."""
    cell = lambda rows: (rows["variant"] == "fused") & (rows["N"] == 4096) & (rows["dtype"] == "fp32")  # noqa: E731

    def widen(rows):
        rows = rows.copy()
        rows.loc[cell(rows), "ms_p20"] = rows.loc[cell(rows), "ms"] * 0.85
        rows.loc[cell(rows), "ms_p80"] = rows.loc[cell(rows), "ms"] * 1.15
        return rows

    noisy_base = clone(tmp_path, "noisy-base", widen)
    noisy_run = clone(tmp_path, "noisy-run", lambda rows: slower(widen(rows), 0.9, cell(rows)))
    assert invoke("check", noisy_run, "--baseline", noisy_base).exit_code == 0
    assert invoke("check", clone(tmp_path, "sharp", lambda rows: slower(rows, 0.9, cell(rows))),
                  "--baseline", REFERENCE).exit_code == 1


def test_a_small_drop_under_the_threshold_passes_and_a_lower_threshold_catches_it(tmp_path):
    run_dir = clone(tmp_path, "three-percent", lambda rows: slower(rows, 0.97, rows["variant"] == "fused"))
    assert invoke("check", run_dir, "--baseline", REFERENCE).exit_code == 0
    assert invoke("check", run_dir, "--baseline", REFERENCE, "--threshold", "2").exit_code == 1


def test_improvements_are_listed_and_pass(tmp_path):
    run_dir = clone(tmp_path, "faster", lambda rows: slower(rows, 1.2, rows["variant"] == "two_pass"))
    result = invoke("check", run_dir, "--baseline", REFERENCE)
    assert result.exit_code == 0 and "improvement" in result.stdout


def test_a_fail_cell_fails_the_check(tmp_path):
    def edit(rows):
        rows = rows.copy()
        where = (rows["variant"] == "online") & (rows["N"] == 4096) & (rows["dtype"] == "bf16")
        rows.loc[where, "status"] = "FAIL"
        rows.loc[where, "reason"] = "12 elements off by up to 0.5"
        return rows

    result = invoke("check", clone(tmp_path, "wrong", edit), "--baseline", REFERENCE)
    assert result.exit_code == 1 and "FAIL cells: 1" in result.stderr


def test_missing_cells_are_listed(tmp_path):
    run_dir = clone(tmp_path, "partial", lambda rows: rows[rows["N"] != 512])
    result = invoke("check", run_dir, "--baseline", REFERENCE)
    assert result.exit_code == 0 and "missing from the run" in result.stdout


def test_missing_baseline_exits_2(tmp_path):
    assert_usage_error(invoke("check", REFERENCE, "--baseline", tmp_path / "nowhere"), "no run", "nowhere")


def test_malformed_csv_exits_2(tmp_path):
    run_dir = clone(tmp_path, "garbled")
    (run_dir / "rows.csv").write_text("this is,not\na results,file\n")
    assert_usage_error(invoke("check", run_dir, "--baseline", REFERENCE), "rows.csv has no column", "variant, dtype")


def test_interpreted_run_against_a_gpu_run_exits_2(tmp_path):
    interpreted = clone(tmp_path, "interp", meta_edit=lambda meta: meta.update(interpreted=True))
    assert_usage_error(invoke("check", interpreted, "--baseline", REFERENCE), "interpreted")
    assert_usage_error(invoke("check", interpreted, "--baseline", REFERENCE, "--allow-device-mismatch"),
                       "interpreted")


def test_another_gpu_model_needs_the_flag(tmp_path):
    other = clone(tmp_path, "h100", meta_edit=lambda meta: meta["device"].update(name="NVIDIA H100 80GB HBM3"))
    assert_usage_error(invoke("check", other, "--baseline", REFERENCE), "different devices",
                       "--allow-device-mismatch")
    assert invoke("check", other, "--baseline", REFERENCE, "--allow-device-mismatch").exit_code == 0


def test_compare_puts_runs_side_by_side_with_ratios(tmp_path):
    faster = clone(tmp_path, "faster", lambda rows: slower(rows, 1.25, rows["variant"] == "eager"))
    result = invoke("compare", REFERENCE, faster)
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if "eager fp32 16384×4096" in line)
    assert "1.25×" in line
    fused = next(line for line in result.stdout.splitlines() if "fused fp32 16384×4096" in line)
    assert "1.00×" in fused


def test_compare_needs_two_runs():
    assert_usage_error(invoke("compare", REFERENCE), "at least two runs")


def test_runs_of_different_ops_are_refused(tmp_path):
    causal = clone(tmp_path, "causal", meta_edit=lambda meta: meta.update(op="causal"))
    assert_usage_error(invoke("check", causal, "--baseline", REFERENCE), "different ops")


def test_compare_runs_that_share_an_id(tmp_path):
    (tmp_path / "a").mkdir()
    twin = clone(tmp_path / "a", REFERENCE.name)
    result = invoke("compare", REFERENCE, twin)
    assert result.exit_code == 0, result.output
    assert "1.00×" in result.stdout
