"""Throttling: the SM clock read after each batch of timed calls (NVML), a throttled batch taken again, the
readings kept in the rows, marked in the tables, and a throttled cell left out of check's gate. NVML is a stand-in
here: the CPU has none."""

import sys

import pytest

from softmax_bench import clocks
from softmax_bench.clocks import MAX_RETAKES, Clocks, Watch

from .conftest import flat, invoke
from .test_check import REFERENCE, clone, slower


class FakeNvml:
    """pynvml's functions that clocks.py calls, the SM clock read from `sm_clocks` in turn (MHz; max 1980)."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def __init__(self, sm_clocks):
        self.sm_clocks = list(sm_clocks)

    def nvmlDeviceGetMaxClockInfo(self, handle, kind):
        return 1980

    def nvmlDeviceGetClockInfo(self, handle, kind):
        if kind == self.NVML_CLOCK_MEM:
            return 3201
        if not self.sm_clocks:
            raise RuntimeError("NVML_ERROR_GPU_IS_LOST")
        return self.sm_clocks.pop(0)

    def nvmlDeviceGetPowerUsage(self, handle):
        return 612_000  # mW

    def nvmlDeviceGetTemperature(self, handle, kind):
        return 61


def batches(log):
    """A take(n) that logs each call and returns n times, the i-th batch's all equal to i."""
    def take(n):
        log.append(n)
        return [float(len(log))] * n
    return take


def test_a_throttled_batch_is_taken_again_and_the_clocks_kept():
    calls = []
    watch = Watch(Clocks(FakeNvml([1000, 1980, 1965]), None))  # 1000 < 75 % of 1980: that batch again
    take = watch.watched(batches(calls))
    assert take(8) == [2.0] * 8 and take(4) == [3.0] * 4
    assert calls == [8, 8, 4]
    assert watch.fields() == {"sm_mhz_min": 1000, "sm_mhz_max": 1980, "mem_mhz_min": 3201, "power_w_max": 612.0,
                              "temp_c_max": 61, "throttled": 0}
    # each reading has a column of the rows, read back as a number
    from softmax_bench.results import COLUMNS, NUMERIC

    assert list(watch.fields()) == clocks.COLUMNS and set(clocks.COLUMNS) <= set(COLUMNS) & set(NUMERIC)


def test_a_gpu_that_stays_throttled_is_retaken_a_few_times_then_marked():
    calls = []
    watch = Watch(Clocks(FakeNvml([900] * 10), None))
    assert watch.watched(batches(calls))(5) == [float(1 + MAX_RETAKES)] * 5
    assert len(calls) == 1 + MAX_RETAKES
    assert watch.fields()["throttled"] == 1


def test_no_nvml_no_readings_and_nvml_lost_midway_stops_reading(monkeypatch):
    calls = []
    assert Watch(None).watched(batches(calls))(3) == [1.0] * 3 and Watch(None).fields() == {}
    watch = Watch(Clocks(FakeNvml([1980]), None))  # one reading, then NVML raises
    take = watch.watched(batches(calls))
    take(2), take(2)
    assert watch.clocks is None and watch.fields()["sm_mhz_min"] == 1980
    monkeypatch.setitem(sys.modules, "pynvml", None)  # nvidia-ml-py not installed: import fails
    clocks.clocks_of.cache_clear()
    assert clocks.clocks_of(0) is None
    clocks.clocks_of.cache_clear()


def throttled_at(rows, where=None):
    """The rows with clock readings: the SM clock at 1965 MHz, but at 900 and throttled where `where` says."""
    rows = rows.copy()
    rows["sm_mhz_min"], rows["throttled"] = 1965, 0
    if where is not None:
        rows.loc[where, ["sm_mhz_min", "throttled"]] = [900, 1]
    return rows


@pytest.mark.parametrize("throttled_in", ["run", "baseline"])
def test_a_cell_timed_while_throttled_is_named_not_gated_and_marked(tmp_path, throttled_in):
    def cell(rows):
        return (rows["variant"] == "fused") & (rows["N"] == 4096) & (rows["dtype"] == "fp32")

    run = clone(tmp_path, "slowed", lambda rows: throttled_at(slower(rows, 0.8, cell(rows)),
                                                              cell(rows) if throttled_in == "run" else None))
    base = clone(tmp_path, "base", lambda rows: throttled_at(rows, cell(rows) if throttled_in == "baseline" else None))
    summary = tmp_path / "summary.md"
    result = invoke("check", run, "--baseline", base, "--markdown", summary)
    assert result.exit_code == 0, result.output  # 20 % slower, but on a slow clock: not a verdict on the code
    assert f"fused fp32 16384×4096 (throttled in the {throttled_in})" in flat(result.stderr)
    assert "Not gated: the GPU throttled while they were timed: 1" in summary.read_text()
    # the same slowdown on a clean clock fails
    clean = clone(tmp_path, "clean", lambda rows: throttled_at(slower(rows, 0.8, cell(rows))))
    assert invoke("check", clean, "--baseline", base if throttled_in == "run" else REFERENCE).exit_code == 1
    if throttled_in == "run":
        shown = flat(invoke("show", run, "--dtype", "fp32", "--variant", "fused").stdout)
        assert "↓" in shown and "the GPU was throttled while timed" in shown
