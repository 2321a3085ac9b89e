"""The three figures, from a committed H200 run and from a fresh (interpreted on CPU) smoke run."""

import shutil

import matplotlib.image
import matplotlib.pyplot as plt
import pytest

import softmax_bench

from softmax_bench.plots import bandwidth_vs_n, registers_vs_n, roofline
from softmax_bench.results import Run

from .conftest import REPO, assert_usage_error, invoke

H200_RUN = REPO / "results" / "20261129-235349-h200"  # the bf16 default grid, committed
TRITON_VARIANTS = [name for name, v in softmax_bench.variants().items() if v.triton]


@pytest.fixture(params=["h200", "smoke"])
def run_dir(request, tmp_path, smoke_run):
    source = H200_RUN if request.param == "h200" else smoke_run[1]
    copy = tmp_path / source.name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    return copy


def test_plot_writes_png_and_svg_of_the_expected_size(run_dir):
    rows = Run(run_dir).rows()
    n_dtypes = rows["dtype"].nunique()
    result = invoke("plot", run_dir)
    assert result.exit_code == 0, result.output
    sizes = {"roofline": (480, 640 * n_dtypes), "bandwidth-vs-n": (480, 640 * n_dtypes),
             "registers-vs-n": (960, 640 * n_dtypes)}
    for name, (height, width) in sizes.items():
        png = run_dir / f"{name}.png"
        assert str(png) in result.stdout
        image = matplotlib.image.imread(png)
        assert image.shape[:2] == (height, width)
        assert image[..., :3].std() > 0.05  # not a blank canvas
        svg = (run_dir / f"{name}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg and run_dir.name in svg


def _ok_variants(rows, dtype):
    part = rows[(rows["dtype"] == dtype) & (rows["status"] == "ok")]
    return list(dict.fromkeys(part["variant"]))


def test_figures_plot_one_series_per_variant(run_dir):
    run = Run(run_dir)
    rows, meta = run.rows(), run.meta()
    dtypes = list(dict.fromkeys(rows["dtype"]))
    has_flops = bool(meta.get("copy_baseline", {}).get("fp32_flops"))

    fig = roofline(rows, meta)
    for ax, dtype in zip(fig.axes, dtypes):
        assert len(ax.collections) == len(_ok_variants(rows, dtype))  # one scatter per variant
        assert len(ax.lines) == 1 + has_flops  # memory ceiling (+ compute ceiling)
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    title = fig._suptitle.get_text()
    assert meta["device"]["name"] in title and meta["run_id"] in title and meta["started_at"][:10] in title
    plt.close(fig)

    fig = bandwidth_vs_n(rows, meta)
    for ax, dtype in zip(fig.axes, dtypes):
        assert len(ax.lines) == len(_ok_variants(rows, dtype)) + 1  # + the 100 % copy line
        assert ax.get_xscale() == "log"
    plt.close(fig)

    fig = registers_vs_n(rows, meta)
    regs_axes = fig.axes[: len(dtypes)]
    for ax, dtype in zip(regs_axes, dtypes):
        part = rows[(rows["dtype"] == dtype) & rows["variant"].isin(TRITON_VARIANTS) & rows["n_regs"].notna()]
        assert len(ax.lines) == part["variant"].nunique() + 1  # one line per compiled variant + the 255 budget line
    plt.close(fig)


def test_bandwidth_plot_shows_where_fused_stops_scaling():
    rows = Run(H200_RUN).rows()
    fig = bandwidth_vs_n(rows, Run(H200_RUN).meta())
    (fused_line,) = [line for line in fig.axes[0].lines if line.get_label() == "fused"]
    n, pct = fused_line.get_xdata(), fused_line.get_ydata()
    assert max(pct) > 95 and pct[list(n).index(65536)] < 70  # the drop is in the picture
    plt.close(fig)


def test_plot_of_a_missing_run(tmp_path):
    assert_usage_error(invoke("plot", "nope", "--out", tmp_path), "no run 'nope'")
