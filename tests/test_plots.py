"""The three figures, from a committed H200 run and from a fresh (interpreted on CPU) smoke run."""

import shutil

import matplotlib.colors
import matplotlib.image
import matplotlib.pyplot as plt
import pandas as pd
import pytest

import softmax_bench

from softmax_bench.plots import bandwidth_vs_n, registers_vs_n, roofline
from softmax_bench.results import Run

from .conftest import REPO, assert_usage_error, invoke

DATA = REPO / "tests" / "data"  # H200 runs the tests read (tests/data/README.md)
H200_RUN = DATA / "20261129-235349-h200"  # the bf16 default grid, committed
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
    spilled = bool(rows["n_spills"].fillna(0).max() > 0)  # a second row of panels, for the spills
    sizes = {"roofline": (640, 640 * n_dtypes), "bandwidth-vs-n": (600, 640 * n_dtypes),
             "registers-vs-n": (960 if spilled else 480, 640 * n_dtypes) if compiled else (480, 640)}
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
        labels = [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
        assert labels == _ok_variants(rows, dtype) + ["a copy of the same bytes (100 %)"]
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
    # two_pass does 7 but 5 are useful: the same 0.625 (its second read is from L2), at 625 useful GFLOP/s, not the
    # 875 its 7 would claim; a peer 10 % above its roof
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
    assert points["fused"] == pytest.approx([0.625, 500.0]) and points["two_pass"] == pytest.approx([0.625, 625.0])
    assert "useful FLOP per HBM byte: 5 an element for every variant" in ax.get_xlabel()
    (ring,) = [label for label in points if "above the roof" in label]
    assert points[ring] == pytest.approx([0.625, 687.5])
    assert "1 above the roof by ≤ 10.0 %" in ring and "past every copy of this run" in ring  # 1010 GB/s is +1 %
    plt.close(fig)


def test_the_y_range_fits_the_data_and_no_spills_is_a_line_of_text():
    rows = Run(H200_RUN).rows()
    rows.loc[(rows["variant"] == "fused") & (rows["N"] == 1024), "pct_of_copy"] = 150.0
    fig = bandwidth_vs_n(rows, Run(H200_RUN).meta())
    ax = fig.axes[0]
    ok = rows[rows["status"] == "ok"]
    low, high = ax.get_ylim()
    assert 150 < high < 165 and 0 <= low < ok["pct_of_copy"].min()  # every value inside, 100 % too
    assert any(line.get_label().startswith("a copy of the same bytes") for line in ax.lines)
    plt.close(fig)

    rows["n_spills"] = 0
    fig = registers_vs_n(rows, Run(H200_RUN).meta())
    assert len(fig.axes) == rows["dtype"].nunique()  # registers only
    assert any("Spills: none" in t.get_text() for t in fig.texts)
    plt.close(fig)


def test_other_shapes_are_points_each_cell_has_its_band_and_a_failed_cell_is_marked():
    rows = Run(H200_RUN).rows()
    first = rows[(rows["variant"] == "fused") & (rows["status"] == "ok")].index[0]
    rows.loc[first, ["status", "reason"]] = ["FAIL", "12 elements off by up to 0.5"]
    fig = bandwidth_vs_n(rows, Run(H200_RUN).meta())
    ax = fig.axes[0]
    grid = rows[rows["M"] * rows["N"] == 2**27]
    (fused,) = [line for line in ax.lines if line.get_label() == "fused"]
    assert set(fused.get_xdata()) <= set(grid["N"])  # the line joins the 2^27 grid only
    assert any("12 elements off by up to 0.5" in t.get_text() for t in fig.texts)  # the footnote
    failed = rows.loc[first]
    crosses = [c for c in ax.collections if c.get_offsets().data.tolist() == [[failed["N"], ax.get_ylim()[0]]]]
    assert crosses, "the FAIL cell is an × at the bottom of its panel"
    assert len([c for c in ax.collections if type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")]) \
        == len(_ok_variants(rows, rows["dtype"].iloc[0]))  # a p20–p80 band a variant
    plt.close(fig)


def test_bandwidth_plot_shows_where_fused_stops_scaling():
    rows = Run(H200_RUN).rows()
    fig = bandwidth_vs_n(rows, Run(H200_RUN).meta())
    (fused_line,) = [line for line in fig.axes[0].lines if line.get_label() == "fused"]
    n, pct = fused_line.get_xdata(), fused_line.get_ydata()
    assert max(pct) > 95 and pct[list(n).index(65536)] < 70  # the drop is in the picture
    plt.close(fig)


def test_a_fused_ops_bandwidth_plot_is_in_percent_of_its_own_roofline():
    """A causal run's cells are judged by their own bytes: the curve is each cell's pct_of_roofline, above 100 %
    of a copy where the rows skip most of x, and the axis says so."""
    run = Run(DATA / "causal-h200-b")
    rows = run.rows()
    fig = bandwidth_vs_n(rows, run.meta())
    ax = fig.axes[0]
    (auto,) = [line for line in ax.lines if line.get_label() == "auto"]
    bf16 = rows[(rows["variant"] == "auto") & (rows["dtype"] == ax.get_title())].set_index("N")
    plotted = dict(zip(auto.get_xdata(), auto.get_ydata()))
    assert plotted and all(plotted[n] == pytest.approx(bf16.at[n, "pct_of_roofline"]) for n in plotted)
    assert any(bf16.at[n, "pct_of_copy"] > 100 > plotted[n] for n in plotted)  # the copy's % would read as past it
    assert "roofline" in ax.get_ylabel()
    plt.close(fig)


def test_plot_of_a_missing_run(tmp_path):
    assert_usage_error(invoke("plot", "nope", "--out", tmp_path), "no run 'nope'")


def test_a_variant_has_one_colour_and_marker_in_every_panel_of_every_plot():
    """Series in a different order in each dtype, and a peer: each name drawn alike everywhere, the peer hollow."""
    def row(variant, dtype, N):
        return {"variant": variant, "dtype": dtype, "M": 64, "N": N, "status": "ok", "config": None, "ms": 0.01,
                "ms_p20": 0.0095, "ms_p80": 0.0105,
                "pct_of_copy": 90.0, "n_regs": None, "n_spills": None}
    names = {"bf16": ["auto", "fused", "torch_compile"], "fp32": ["torch_compile", "two_pass", "auto", "fused"]}
    rows = pd.DataFrame([row(v, d, N) for d, vs in names.items() for v in vs for N in (256, 1024)])
    meta = {"run_id": "styles", "device": {"name": "Test GPU"}, "started_at": "2026-01-01"}
    seen = {}
    for make in (bandwidth_vs_n, roofline):
        fig = make(rows, meta)
        for ax in fig.axes:
            for line in ax.lines:
                if line.get_label() in rows["variant"].values:
                    seen.setdefault(line.get_label(), set()).add(
                        (matplotlib.colors.to_hex(line.get_color()), line.get_marker(), line.get_markerfacecolor()))
            for points in ax.collections:
                if points.get_label() in rows["variant"].values:
                    colour = matplotlib.colors.to_hex(points.get_edgecolor()[0])
                    seen.setdefault(points.get_label() + " (points)", set()).add(colour)
        plt.close(fig)
    for name, styles in seen.items():
        assert len(styles) == 1, (name, styles)
    colours = {name: next(iter(s))[0] for name, s in seen.items() if "(points)" not in name}
    assert len(set(colours.values())) == len(colours)  # and no two variants alike
    assert {colours[n] for n in colours} == {next(iter(seen[n + " (points)"])) for n in colours}
    assert next(iter(seen["torch_compile"]))[2] == "none" and next(iter(seen["fused"]))[2] != "none"  # a peer: hollow


def test_plots_go_to_a_folder_of_their_own_and_a_replot_writes_the_same_bytes(tmp_path):
    run = tmp_path / H200_RUN.name
    shutil.copytree(H200_RUN, run, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    first, second = tmp_path / "first", tmp_path / "second"
    for to in (first, second):
        result = invoke("plot", run, "--to", to)
        assert result.exit_code == 0, result.output
    assert not list(run.glob("*.png")) and not list(run.glob("*.svg"))  # the run's folder is left alone
    files = sorted(p.name for p in first.iterdir())
    assert files == sorted(p.name for p in second.iterdir()) and any(f.endswith(".svg") for f in files)
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert "<dc:date>" not in (first / "roofline.svg").read_text()


def test_a_folder_it_cannot_write_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert_usage_error(invoke("plot", H200_RUN, "--to", blocker / "plots"), "cannot write the plots into", "--to")


def test_a_band_always_reaches_its_own_point():
    """Medians over devices taken apart (a replicated run): the copy's p20 and p80 may not hold the median % of
    copy between them; the drawn band still reaches the point (matplotlib refuses negative error bars)."""
    from softmax_bench.plots import bands

    rows = pd.DataFrame([{"pct_of_copy": 95.0, "ms": 1.0, "ms_p20": 0.99, "ms_p80": 1.01, "copy_ms": 0.95,
                          "copy_p20": 0.90, "copy_p80": 0.92}])
    (low,), (high,) = bands(rows)
    assert low <= 95.0 <= high and high == 95.0  # check's band (89.1–92.9) stretched to the point


def test_the_roofline_names_the_n_of_its_slowest_and_fastest_points():
    run = Run(DATA / "softmax-auto-h200-g")
    rows, meta = run.rows(), run.meta()
    ax = roofline(rows, meta).axes[0]  # bf16
    labels = [t.get_text() for t in ax.texts if t.get_text().startswith("auto N=")]
    bf16 = rows[(rows["dtype"] == "bf16") & (rows["status"] == "ok")]
    gflops = bf16["N"] * bf16["M"] / bf16["ms"]  # useful FLOPs a ms, up to the constant
    slowest, fastest = bf16.loc[gflops.nsmallest(3).index, "N"], bf16.loc[gflops.idxmax(), "N"]
    assert labels == [f"auto N={n}" for n in [*slowest, fastest]]
    plt.close("all")


def test_plot_of_two_runs_draws_the_speedup_of_the_second_at_each_cell(tmp_path):
    runs = [DATA / "softmax-auto-h200-e", DATA / "softmax-auto-h200-g"]
    result = invoke("plot", *runs, "--dtype", "bf16", "--to", tmp_path)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["speedup-vs-n.png", "speedup-vs-n.svg"]
    svg = (tmp_path / "speedup-vs-n.svg").read_text()
    assert "softmax-auto-h200-g over softmax-auto-h200-e" in svg and ">fp32<" not in svg

    from softmax_bench.plots import speedup_vs_n
    from softmax_bench.regression import compare
    from softmax_bench.results import CellFilter

    frame = compare([Run(r) for r in runs], CellFilter(dtypes=("bf16",)))
    fig = speedup_vs_n(frame, ["e", "g"])
    (ax,) = [a for a in fig.axes if a.get_title() == "bf16"]
    (line,) = [l for l in ax.get_lines() if l.get_label() == "auto"]
    old, new = (pd.read_csv(r / "rows.csv").query("variant == 'auto' and dtype == 'bf16'") for r in runs)
    expected = new.set_index(["M", "N"])["gbps"] / old.set_index(["M", "N"])["gbps"]
    grid = expected[[m * n == 2**27 for m, n in expected.index]].sort_index(level="N")
    assert list(line.get_xdata()) == [n for _, n in grid.index]
    assert list(line.get_ydata()) == pytest.approx(grid.tolist())
    assert any(l.get_ydata()[0] == 1.0 and l.get_linestyle() == ":" for l in ax.get_lines())  # as fast as the first
    plt.close("all")


def test_plot_show_and_compare_take_the_cells_asked_for(tmp_path):
    run = DATA / "wide-rows-auto-h200-g"
    shown = invoke("show", run, "--dtype", "fp16", "--shape", "4096x128256")
    assert shown.exit_code == 0, shown.output
    assert "fp16" in shown.stdout and "128256" in shown.stdout and "bf16" not in shown.stdout
    assert "262144" not in shown.stdout
    compared = invoke("compare", DATA / "softmax-auto-h200-e", DATA / "softmax-auto-h200-g",
                      "--shape", "2048x151936", "--variant", "auto")
    assert compared.exit_code == 0, compared.output
    assert "151936" in compared.stdout and "4000" not in compared.stdout
    plotted = invoke("plot", run, "--dtype", "fp32", "--to", tmp_path)
    assert plotted.exit_code == 0, plotted.output
    assert ">fp32<" in (tmp_path / "bandwidth-vs-n.svg").read_text() and ">bf16<" not in (
        tmp_path / "bandwidth-vs-n.svg").read_text()
    assert_usage_error(invoke("show", run, "--variant", "quack"), "has no cell that --variant quack keeps",
                       "variants auto")
    assert_usage_error(invoke("show", run, "--shape", "4x"), "--shape", "is not MxN")
