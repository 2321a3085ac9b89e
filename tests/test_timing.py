"""The timer's noise rule (softmax_bench.timing): samples until the relative noise of the median is at most
--max-noise, within a timeout, as nvbench samples to a noise target; and how a sweep records and shows it."""

import json
import shutil
import statistics

import pandas as pd
import pytest
import torch

from softmax_bench.results import Run
from softmax_bench.timing import SAMPLING_TIMEOUT_MS, TimingSettings, median_noise_pct, sampled

from .conftest import MODE, REPO, assert_usage_error, flat, invoke


def normal_times(n: int, mean: float = 1.0, sd: float = 0.05) -> list[float]:
    """n times at the normal distribution's evenly spaced quantiles: a sample with no luck in it."""
    return [mean + sd * statistics.NormalDist().inv_cdf((i + 0.5) / n) for i in range(n)]


def test_the_noise_of_the_median_is_its_standard_error_and_falls_as_samples_grow():
    # a median's standard error is 1.2533 σ / √n: 5 % spread, 100 samples → 0.63 % of the median
    assert median_noise_pct(normal_times(100)) == pytest.approx(100 * 1.2533 * 0.05 / 10, rel=0.03)
    assert median_noise_pct(normal_times(400)) == pytest.approx(median_noise_pct(normal_times(100)) / 2, rel=0.03)
    # a few outliers (preempted samples) do not set it: the spread comes from the quartiles
    assert median_noise_pct(normal_times(100) + [50.0] * 3) < 1.1 * median_noise_pct(normal_times(100))
    assert median_noise_pct([1.0, 1.0, 1.0]) == float("inf")  # too few to say


class Sampler:
    """take(n) for `sampled`: n more of a fixed 5 % spread, each batch costing `seconds` on a fake clock."""

    def __init__(self, seconds: float = 0.0):
        self.taken, self.now, self.seconds = 0, 0.0, seconds

    def take(self, n: int) -> list[float]:
        self.taken += n
        self.now += self.seconds
        return normal_times(n)

    def clock(self) -> float:
        return self.now


def test_without_a_noise_target_it_takes_what_rep_ms_asks():
    sampler = Sampler()
    assert len(sampled(sampler.take, 10, TimingSettings(), sampler.clock)) == 10


def test_it_samples_until_the_noise_target_is_reached():
    sampler = Sampler()
    times = sampled(sampler.take, 10, TimingSettings(max_noise=0.5), sampler.clock)
    assert median_noise_pct(times) <= 0.5 < median_noise_pct(times[: len(times) // 2])  # and not much past it
    assert sampler.taken == len(times) == 160  # batches as large as what it held: 10, 20, 40, 80, 160


def test_a_target_out_of_reach_stops_at_the_timeout():
    sampler = Sampler(seconds=1.0)  # each batch a second
    times = sampled(sampler.take, 10, TimingSettings(max_noise=0.001), sampler.clock)
    assert median_noise_pct(times) > 0.001 and sampler.now * 1000 >= SAMPLING_TIMEOUT_MS
    assert sampler.now * 1000 <= SAMPLING_TIMEOUT_MS + 1000  # one batch past it at most


def test_a_sweep_with_a_noise_target_records_samples_and_noise(tmp_path):
    result = invoke("sweep", *MODE, "--shape", "4x64", "--dtype", "fp32", "--variant", "fused", "--rep-ms", "5",
                    "--max-noise", "50", "--out", tmp_path)
    assert result.exit_code == 0, result.output
    run_dir = next(p for p in tmp_path.iterdir() if p.is_dir())
    rows = pd.read_csv(run_dir / "rows.csv")
    assert (rows["samples"] >= 3).all() and (rows["noise_pct"] <= 50).all()
    assert json.loads((run_dir / "meta.json").read_text())["timing"]["max_noise"] == 50
    assert "sampled until the median's noise was at most 50 %" in flat(result.stdout)


def test_a_cell_that_did_not_reach_the_target_is_marked(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(REPO / "tests" / "data" / "causal-h200-b", run_dir)
    meta = json.loads((run_dir / "meta.json").read_text())
    meta["timing"]["max_noise"] = 0.5
    (run_dir / "meta.json").write_text(json.dumps(meta))
    rows = Run(run_dir).rows()
    rows["noise_pct"] = 0.2
    rows.loc[(rows["variant"] == "auto") & (rows["N"] == 4096) & (rows["dtype"] == "bf16"), "noise_pct"] = 0.9
    rows.to_csv(run_dir / "rows.csv", index=False)
    shown = invoke("show", run_dir, "--dtype", "bf16", "--variant", "auto").stdout
    assert "! not reached in 3 s of sampling" in flat(shown)
    assert shown.count("!") == 2  # that one cell, and the caption that says what ! is


def test_a_noise_target_must_not_be_negative(tmp_path):
    assert_usage_error(invoke("sweep", *MODE, "--shape", "4x64", "--max-noise", "-1", "--out", tmp_path),
                       ("give a percent > 0", "0.0<=x", "x>=0", "greater than or equal to 0"))


def test_a_sweep_on_a_gpu_samples_to_1_percent_by_default_and_0_turns_the_rule_off(tmp_path):
    """The default noise target on a GPU is DEFAULT_MAX_NOISE (chosen on the H200); under the interpreter, whose
    samples are a CPU's calls, none; 0, from the command line or a config, is rep_ms of samples."""
    from softmax_bench.config import build_plan
    from softmax_bench.timing import DEFAULT_MAX_NOISE

    plan = lambda interpret, **kw: build_plan(["4x64"], [], [], None, None, [], [], interpret=interpret, **kw)  # noqa: E731
    assert plan(False).timing.max_noise == DEFAULT_MAX_NOISE
    assert plan(True).timing.max_noise is None
    assert plan(False, max_noise=0).timing.max_noise is None
    assert plan(True, max_noise=0.5).timing.max_noise == 0.5
    config = tmp_path / "off.toml"
    config.write_text("max_noise = 0\n")
    assert build_plan(["4x64"], [], [], config, None, [], []).timing.max_noise is None


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_the_copies_a_cell_is_compared_with_move_whole_pages(dtype, monkeypatch):
    """The driver's memcpy (torch's copy_) ran 24–31 % slower on the H100 where a buffer was not a whole number of
    4096-byte pages (copy-numel.py): the copy a sweep's cell (sweep.copy_timing) and copy-baseline
    (baseline.measure_copy) time moves its buffers rounded up to whole pages, a page more at most; the bandwidth is
    the bytes it moved over its time."""
    from softmax_bench import baseline, sweep

    copied = []
    real_copy = torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda dst, src: copied.append((dst.nbytes, src.nbytes)) or
                        real_copy(dst, src))
    settings = TimingSettings(warmup_ms=1, rep_ms=1)
    cell_bytes = 2 * 1000 * 1000 * dtype.itemsize  # a 1000×1000 cell's x read and y written (off a page)
    sweep.copy_timing(cell_bytes, dtype, "cpu", settings, interpret=True)
    record = baseline.measure_copy(dtype, 1000 * 1000, settings, interpret=True)
    assert copied and all(dst == src and src % 4096 == 0 and 0 <= src - cell_bytes // 2 < 4096 for dst, src in copied)
    assert record["bytes"] == 2 * copied[-1][1] and record["numel"] * dtype.itemsize == copied[-1][1]
    assert record["gbps"] == pytest.approx(record["bytes"] / record["ms"] / 1e6)
