"""scripts/host-bar.py: issue 29's bar read from host-cost.py's CSVs — each bar row against torch's row of the same
process, a later CSV's row in place of an earlier one's, interpreted rows left out, rows not measured named, and its
exit code."""

import csv
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "host-bar.py"
spec = importlib.util.spec_from_file_location("host_bar", SCRIPT)
host_bar = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_bar)

COLUMNS = ["what", "op", "dtype", "M", "N", "calls", "host_us", "call_us", "vs_torch", "interpreted", "note"]
EAGER_ROWS = {("torch.softmax", "softmax"): 6.6, ("torch.log_softmax", "log-softmax"): 7.0,
              ("softmax_bench auto", "softmax"): 6.5, ("softmax_bench fused", "softmax"): 6.4,
              ("softmax_bench auto", "scaled-masked"): 6.6, ("softmax_bench auto", "log-softmax"): 6.9}
COMPILED_ROWS = {("torch.softmax", "softmax"): 9.0, ("peer torch_compile", "softmax"): 35.0,
                 ("peer compiled_op", "softmax"): 34.0, ("peer torch_compile", "scaled-masked"): 38.0,
                 ("peer compiled_op", "scaled-masked"): 37.5}


def load_host_cost():
    """scripts/host-cost.py as a module. With no GPU it sets torch to one thread when loaded: the other tests of
    this process keep theirs."""
    import torch

    spec = importlib.util.spec_from_file_location("host_cost", SCRIPT.parent / "host-cost.py")
    host_cost = importlib.util.module_from_spec(spec)
    threads = torch.get_num_threads()
    spec.loader.exec_module(host_cost)
    torch.set_num_threads(threads)
    return host_cost


def write_csv(path: Path, rows: dict, interpreted: bool = False, settings: str | None = None,
              rounds: dict | None = None) -> Path:
    """host-cost.py's CSV with these rows: (what, op) → host µs; settings: its `settings` column (None: a CSV from
    before the column); rounds: (what, op) → each round's host µs (host_us_rounds; None: a CSV from before it)."""
    extra = ([] if settings is None else ["settings"]) + ([] if rounds is None else ["host_us_rounds"])
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=COLUMNS + extra)
        out.writeheader()
        for (what, op), host_us in rows.items():
            row = {"what": what, "op": op, "dtype": "bf16", "M": 64, "N": 4000, "calls": 400, "host_us": host_us,
                   "call_us": host_us, "vs_torch": "", "interpreted": interpreted, "note": ""}
            if settings is not None:
                row["settings"] = settings
            if rounds is not None:
                row["host_us_rounds"] = " ".join(map(str, rounds.get((what, op), ())))
            out.writerow(row)
    return path


def test_every_bar_row_at_or_under_its_bar_is_met(tmp_path, capsys):
    eager, compiled = write_csv(tmp_path / "eager.csv", EAGER_ROWS), write_csv(tmp_path / "c.csv", COMPILED_ROWS)
    assert host_bar.main([str(eager), str(compiled)]) == 0
    printed = capsys.readouterr().out
    assert "softmax_bench auto (log-softmax): 6.90 µs, 0.99× torch.log_softmax's 7.00" in printed
    assert "peer compiled_op (scaled-masked): 37.50 µs, 0.99× peer torch_compile's 38.00" in printed
    assert printed.count("  met ") == 6 and printed.endswith("issue 29's bar: met\n")


def test_a_row_over_its_bar_or_not_measured_fails_and_is_named(tmp_path, capsys):
    over = write_csv(tmp_path / "eager.csv", {**EAGER_ROWS, ("softmax_bench auto", "scaled-masked"): 7.7})
    assert host_bar.main([str(over)]) == 1
    printed = capsys.readouterr().out
    assert "over the bar   softmax_bench auto (scaled-masked): 7.70 µs, 1.17× torch.softmax's 6.60" in printed
    assert "not measured   peer compiled_op (softmax): no CSV has it beside peer torch_compile" in printed
    assert printed.endswith("issue 29's bar: not met\n")


def test_a_later_csv_takes_a_rows_place_within_its_own_process_and_interpreted_rows_do_not_count(tmp_path, capsys):
    old = write_csv(tmp_path / "old.csv", {**EAGER_ROWS, ("softmax_bench auto", "softmax"): 8.0})
    # a newer process: a slower host throughout, auto under torch's row of that process
    new = write_csv(tmp_path / "new.csv", {("torch.softmax", "softmax"): 9.0, ("softmax_bench auto", "softmax"): 8.5})
    interpreted = write_csv(tmp_path / "cpu.csv", {("torch.softmax", "softmax"): 1.0,
                                                   ("softmax_bench auto", "softmax"): 50.0}, interpreted=True)
    compiled = write_csv(tmp_path / "c.csv", COMPILED_ROWS)
    assert host_bar.main([str(old), str(new), str(interpreted), str(compiled)]) == 0
    assert "softmax_bench auto (softmax): 8.50 µs, 0.94× torch.softmax's 9.00" in capsys.readouterr().out
    # a bar row whose divisor is in another process's CSV is not measured
    auto_alone = write_csv(tmp_path / "auto.csv", {("softmax_bench fused", "softmax"): 5.0})
    assert set(host_bar.ratios(auto_alone)) == set()


def test_where_both_rows_have_their_rounds_the_ratio_is_the_median_of_the_rounds_ratios(tmp_path, capsys):
    """A host that slows for some rounds slows both rows of those rounds: round by round auto stays under torch's
    (the ratio of the two medians, 7.0 over 6.7, would read 1.04×). A row whose rounds are missing or of another
    count falls back to the medians' ratio."""
    rounds = {("torch.softmax", "softmax"): [6.0, 6.2, 6.7, 10.0, 10.4],
              ("softmax_bench auto", "softmax"): [5.7, 5.9, 7.0, 9.6, 10.0],
              ("softmax_bench fused", "softmax"): [5.0, 5.1]}
    medians = {**EAGER_ROWS, ("torch.softmax", "softmax"): 6.7, ("softmax_bench auto", "softmax"): 7.0,
               ("softmax_bench fused", "softmax"): 6.5}
    path = write_csv(tmp_path / "eager.csv", medians, rounds=rounds)
    found = host_bar.ratios(path)
    auto, torch_rounds = rounds[("softmax_bench auto", "softmax")], rounds[("torch.softmax", "softmax")]
    each = sorted(a / b for a, b in zip(auto, torch_rounds))
    host, versus, ratio, spread = found[("softmax_bench auto", "softmax")]
    assert (host, versus, ratio, spread) == (7.0, 6.7, pytest.approx(each[2]), pytest.approx((each[1], each[4], 5)))
    assert ratio < 1 < 7.0 / 6.7
    assert found[("softmax_bench fused", "softmax")] == pytest.approx((6.5, 6.7, 6.5 / 6.7, None))
    host_bar.main([str(path), str(write_csv(tmp_path / "c.csv", COMPILED_ROWS))])
    printed = capsys.readouterr().out
    assert (f"met            softmax_bench auto (softmax): 7.00 µs, {each[2]:.2f}× torch.softmax's 6.70, round by "
            f"round over 5: p20–p80 {each[1]:.2f}–{each[4]:.2f}×") in printed
    assert "softmax_bench fused (softmax): 6.50 µs, 0.97× torch.softmax's 6.70 (bar" in printed


def test_a_row_made_with_settings_says_which(tmp_path, capsys):
    """compiled_op's rows with Inductor's static launch of user kernels are not the default's: the line says so."""
    static = "TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS=1"
    eager = write_csv(tmp_path / "eager.csv", EAGER_ROWS, settings="")
    compiled = write_csv(tmp_path / "c.csv", COMPILED_ROWS, settings=static)
    assert host_bar.main([str(eager), str(compiled)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(line.endswith(f"c.csv; made with {static})") for line in lines if "compiled_op" in line)
    assert all(line.endswith("eager.csv)") for line in lines if "softmax_bench auto" in line)


def test_host_costs_csv_records_the_settings_its_process_ran_with_and_each_rounds_time(tmp_path, monkeypatch):
    """host-cost.py's `settings` column: SOFTMAX_BENCH_* and Inductor's static launch, as a sweep's meta.json has them
    (torch's row alone, two calls: the CSV is what is tested)."""
    host_cost = load_host_cost()
    monkeypatch.setenv("TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS", "1")
    monkeypatch.setenv("SOFTMAX_BENCH_IN_GRAPH", "0")
    out = tmp_path / "host.csv"
    monkeypatch.setattr("sys.argv", ["host-cost.py", str(out), "--op", "softmax", "--row", "torch", "--only-python",
                                     "--rounds", "3", "--warmup", "1", "--calls", "2"])
    host_cost.main()
    with open(out, newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["what"] == "torch.softmax"
    rounds = sorted(map(float, row["host_us_rounds"].split()))  # each round's, for host-bar's round-by-round ratio
    assert len(rounds) == 3 and abs(rounds[1] - float(row["host_us"])) <= 0.006  # its median, rounded
    assert row["settings"] == "SOFTMAX_BENCH_IN_GRAPH=0 TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS=1"
    assert host_bar.settings_of(out) == row["settings"]


def test_host_cost_says_how_compiled_ops_kernels_were_launched_where_it_timed_them():
    """Beside compiled_op's timed rows, which launcher Inductor made for our kernels in its graphs: its static one
    (as its own), or Triton's for how many; nothing where compiled_op was not timed or no graph launched ours (a
    CPU)."""
    host_cost = load_host_cost()
    timed = [{"what": "torch.softmax", "host_us": 5.0}, {"what": "peer compiled_op", "host_us": 30.0}]
    assert host_cost.launch_line(timed, [True, True]).endswith("through its static launcher, as its own")
    line = host_cost.launch_line(timed, [True, False])
    assert "1 of softmax_bench's 2 kernel launchers through Triton's launcher" in line
    assert "SOFTMAX_BENCH_STATIC_LAUNCH=0" in line
    assert host_cost.launch_line(timed, []) is None
    assert host_cost.launch_line([{"what": "peer compiled_op", "host_us": None}], [False]) is None


def test_a_missing_csv_is_said_and_exits_2(tmp_path, capsys):
    assert host_bar.main([str(tmp_path / "none.csv")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_the_committed_h200_csvs_give_the_fortieth_sessions_ratios():
    host = Path(__file__).resolve().parent.parent / "evidence" / "experiments" / "2026-12-05-session40" / "host"
    eager, compiled = host_bar.ratios(host / "host-fast1.csv"), host_bar.ratios(host / "host-compiled.csv")
    assert eager[("softmax_bench auto", "softmax")][:3] == pytest.approx((7.67, 6.57, 1.167), abs=1e-3)
    assert compiled[("peer compiled_op", "softmax")][:3] == pytest.approx((45.38, 35.37, 1.283), abs=1e-3)
    assert eager[("softmax_bench auto", "softmax")][3] is None  # made before host_us_rounds


def test_pooled_processes_give_the_median_of_all_their_rounds_ratios(tmp_path, capsys):
    """--pool: three processes of the same code, each ratio still round k over round k of its own process; the
    bar row's ratio is the median of all 9, where without it the last CSV's replaces the others'."""
    torch_rounds = {("peer torch_compile", "softmax"): [30.0, 30.0, 30.0]}
    # over 30: 0.90 0.95 0.99, 1.003 1.05 1.08, 1.004 1.005 1.10; the median 1.004, printed so, not as 1.00
    ours = ([27.0, 28.5, 29.7], [30.09, 31.5, 32.4], [30.12, 30.15, 33.0])
    paths = [write_csv(tmp_path / f"c{i}.csv", COMPILED_ROWS,
                       rounds={**torch_rounds, ("peer compiled_op", "softmax"): r}) for i, r in enumerate(ours)]
    each = sorted(a / 30.0 for r in ours for a in r)
    host, versus, ratio, spread = host_bar.pooled(paths)[("peer compiled_op", "softmax")]
    assert (host, versus, ratio, spread) == (34.0, 35.0, pytest.approx(each[4]), pytest.approx((each[1], each[7], 9)))
    assert host_bar.main(["--pool", *map(str, paths)]) == 1
    printed = capsys.readouterr().out
    assert (f"at the bar     peer compiled_op (softmax): 34.00 µs, {each[4]:.3f}× peer torch_compile's 35.00, round "
            f"by round over 9: p20–p80 {each[1]:.2f}–{each[7]:.2f}× (bar 1.0×; 3 processes pooled)") in printed
    assert "(1 row at the bar: over it by the median of its rounds, under it in a fifth or more of them)" in printed
    host_bar.main(list(map(str, paths)))
    assert "1.005× peer torch_compile's 35.00, round by round over 3: p20–p80 1.00–1.10× (bar 1.0×; " + str(
        paths[-1]) in capsys.readouterr().out


def test_a_row_over_its_bar_in_four_fifths_of_its_rounds_is_over_it_not_at_it(tmp_path, capsys):
    torch_rounds = {("peer torch_compile", "softmax"): [30.0] * 5,
                    ("peer compiled_op", "softmax"): [29.0, 31.5, 32.0, 33.0, 34.0]}
    path = write_csv(tmp_path / "c.csv", COMPILED_ROWS, rounds=torch_rounds)
    assert host_bar.main([str(path)]) == 1
    printed = capsys.readouterr().out
    assert "over the bar   peer compiled_op (softmax): 34.00 µs, 1.07×" in printed
    assert printed.rstrip().endswith("issue 29's bar: not met")
