"""The three figures, from a committed H200 run and from a fresh (interpreted on CPU) smoke run."""

import shutil

import matplotlib.image
import matplotlib.pyplot as plt
import pandas as pd
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
    compiled = rows["n_regs"].notna().any()
    sizes = {"roofline": (640, 640 * n_dtypes), "bandwidth-vs-n": (480, 640 * n_dtypes),
             "registers-vs-n": (960, 640 * n_dtypes) if compiled else (480, 640)}
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

    fig = roofline(rows, meta)
    for ax, dtype in zip(fig.axes, dtypes):
        series = [c for c in ax.collections if "above the roof" not in str(c.get_label())]
        assert [c.get_label() for c in series] == _ok_variants(rows, dtype)  # one scatter per variant
        assert [line.get_label() for line in ax.lines][0].startswith("roof: min(")  # one roof (+ the ridge's marker)
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
    compiled = rows[rows["variant"].isin(TRITON_VARIANTS) & rows["n_regs"].notna()]
    if compiled.empty:  # an interpreted run: one panel that says so, not empty axes
        (ax,) = fig.axes
        assert "Nothing to show" in ax.texts[0].get_text() and not ax.lines
    for ax, dtype in zip(fig.axes[: len(dtypes)] if not compiled.empty else [], dtypes):
        part = compiled[compiled["dtype"] == dtype]
        assert len(ax.lines) == part["variant"].nunique() + 1  # one line per compiled variant + the 255 budget line
    plt.close(fig)


def test_the_roof_is_one_min_line_in_gflops_fitted_to_the_data():
    """A run with round numbers: copy 1000 GB/s, fp32 peak 10,000 GFLOP/s, so the ridge is at 10 FLOP/byte."""
    M, N = 1024, 4096
    meta = {"run_id": "known", "device": {"name": "Test GPU"}, "started_at": "2026-01-01", "copy_gbps": {"fp32": 1000.0},
            "copy_baseline": {"fp32_flops": {"gflops": 10000.0, "how": "test"},
                              "copies": [{"dtype": "fp32", "gbps": 1000.0}, {"dtype": "fp32", "gbps": 1010.0}]}}
    # fused: 5 FLOP / 8 bytes an element = 0.625 FLOP/byte, run at 500 GFLOP/s (80 % of its roof, 625);
    # two_pass: 7 / 8 (its second read is from L2) = 0.875, at its roof (875); a peer 10 % above its roof
    flops = {"fused": 5 * M * N, "two_pass": 7 * M * N, "torch_compile": 5 * M * N}
    gflops = {"fused": 500.0, "two_pass": 875.0, "torch_compile": 687.5}
    rows = pd.DataFrame([{"variant": name, "dtype": "fp32", "M": M, "N": N, "status": "ok", "config": None,
                          "ms": flops[name] / gflops[name] / 1e6} for name in flops])
    fig = roofline(rows, meta)
    (ax,) = fig.axes
    (roof,) = [line for line in ax.lines if line.get_label().startswith("roof")]
    xs, ys = roof.get_xdata(), roof.get_ydata()
    assert list(xs) == pytest.approx([0.3125, 10.0, 20.0])  # from half the lowest intensity past the ridge
    assert list(ys) == pytest.approx([312.5, 10000.0, 10000.0])  # min(1000 · x, 10000): one line, bent at the ridge
    assert ax.get_xlim() == pytest.approx((0.3125, 20.0)) and ax.get_ylim() == pytest.approx((250.0, 20000.0))
    assert "1,000 GB/s" in roof.get_label() and "10,000 GFLOP/s" in roof.get_label()
    assert "GFLOP/s" in ax.get_ylabel() and "FLOP per HBM byte" in ax.get_xlabel()
    assert any("ridge point: 10 FLOP/byte" in t.get_text() for t in ax.texts)
    points = {c.get_label(): c.get_offsets().data.ravel().tolist() for c in ax.collections}
    assert points["fused"] == pytest.approx([0.625, 500.0]) and points["two_pass"] == pytest.approx([0.875, 875.0])
    (ring,) = [label for label in points if "above the roof" in label]
    assert points[ring] == pytest.approx([0.625, 687.5])
    assert "1 above the roof by ≤ 10.0 %" in ring and "past every copy of this run" in ring  # 1010 GB/s is +1 %
    plt.close(fig)


def test_bandwidth_past_the_axis_is_marked_and_an_all_zero_spills_panel_has_a_sane_axis():
    rows = Run(H200_RUN).rows()
    rows.loc[(rows["variant"] == "fused") & (rows["N"] == 1024), "pct_of_copy"] = 150.0
    fig = bandwidth_vs_n(rows, Run(H200_RUN).meta())
    ax = fig.axes[0]
    assert ax.get_ylim()[1] == 110 and any(t.get_text() == "150 %" for t in ax.texts)
    assert [c.get_offsets().data.tolist() for c in ax.collections] == [[[1024, 110]]]  # ▲ at the top edge
    plt.close(fig)

    rows["n_spills"] = 0
    fig = registers_vs_n(rows, Run(H200_RUN).meta())
    spills_ax = fig.axes[1]
    low, high = spills_ax.get_ylim()
    assert low < 0 < 1 <= high < 2  # zeros visible above the frame, the axis 0 … 1
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
