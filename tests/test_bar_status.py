"""scripts/bar-status.py: issue 26's bar read from stored runs — the cells under it, a peer ahead or level, the
newest run's cells taking the place of a grid's, other devices' and Triton's runs left out, and its exit code."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from softmax_bench.config import build_plan
from softmax_bench.results import Run

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bar-status.py"
GRID = build_plan([], [], [], None, "default", [], []).cells()
H200 = {"name": "NVIDIA H200", "triton": "3.8.0"}


def write_run(out: Path, run_id: str, started: str, cells: dict, device: dict = H200, op: str = "causal",
              own_bytes: bool = True, log: bool = False, pass_: str = "forward", mask_shape: str = "full",
              floor_copy_ms: float | None = None, settings: dict | None = None) -> None:
    """A stored run of `op` (its log_softmax's with `log`, its `pass_`): per (dtype, M, N), {variant: (% of the
    roofline, p20 ms, median ms, p80 ms[, the launch's config column])}; own_bytes: priced at a copy of each cell's
    own bytes (meta.json's roofline), else at the older prorated copy; floor_copy_ms: every cell's copy of its
    floor's bytes (roofline_copy_ms; None: not a column, as in runs from before it was one); settings: the
    SOFTMAX_BENCH_* variables it recorded."""
    run = Run(out / run_id)
    run.path.mkdir(parents=True)
    run.write_meta({"run_id": run_id, "started_at": started, "device": device, "interpreted": False, "op": op,
                    "log": log, "mask_shape": mask_shape,
                    **({"roofline": "copy of the floor's bytes"} if own_bytes else {}),
                    **({"settings": settings} if settings is not None else {})})
    for (dtype, M, N), variants in cells.items():
        for variant, (pct, p20, ms, p80, *config) in variants.items():
            run.append({"variant": variant, "dtype": dtype, "M": M, "N": N, "ms": ms, "ms_p20": p20, "ms_p80": p80,
                        "gbps": 1.0, "pct_of_copy": pct, "pct_of_roofline": pct, "status": "ok", "op": op,
                        "pass": pass_, "config": config[0] if config else None,
                        **({"roofline_copy_ms": floor_copy_ms} if floor_copy_ms is not None else {})})


def write_other_forms_met(out: Path, op: str = "causal", mask_shape: str = "full") -> None:
    """Runs of op's log_softmax forward and its two backwards, every cell at 95 %: the forms beside a test's."""
    for log, pass_ in ((True, "forward"), (False, "backward"), (True, "backward")):
        write_run(out, f"{op}-{mask_shape.replace('/', '-')}{'-log' if log else ''}-{pass_}", "2026-11-30T00:00:00+0000",
                  {cell: {"auto": (95.0, 0.99, 1.0, 1.01)} for cell in GRID}, op=op, log=log, pass_=pass_,
                  mask_shape=mask_shape)


def bar_status(out: Path | list[Path], capsys, op: str = "causal") -> SimpleNamespace:
    """The script's main on op's runs in out (a folder, or several), in this process (a process of its own costs
    seconds of imports): its exit code and what it printed."""
    spec = importlib.util.spec_from_file_location("bar_status", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    outs = out if isinstance(out, list) else [out]
    returncode = script.main([arg for folder in outs for arg in ("--out", str(folder))] + ["--op", op])
    printed = capsys.readouterr()
    return SimpleNamespace(returncode=returncode, stdout=printed.out, stderr=printed.err)


def test_the_bar_names_the_cells_under_it_and_the_peers_ahead_and_a_newer_run_takes_a_cells_place(tmp_path, capsys):
    under, ahead, level = GRID[0], GRID[1], GRID[2]
    grid = {cell: {"auto": (95.0, 0.99, 1.0, 1.01), "torch_compile": (90.0, 1.04, 1.05, 1.06)} for cell in GRID}
    grid[under] = {"auto": (85.0, 0.99, 1.0, 1.01), "torch_compile": (80.0, 1.04, 1.05, 1.06)}
    grid[ahead] = {"auto": (95.0, 0.99, 1.0, 1.01), "torch_compile": (97.0, 0.96, 0.97, 0.98)}  # bands apart
    grid[level] = {"auto": (95.0, 0.99, 1.0, 1.01), "torch_compile": (95.5, 0.98, 0.995, 1.0)}  # bands overlap
    write_run(tmp_path, "causal-grid", "2026-12-01T00:00:00+0000", grid)
    write_other_forms_met(tmp_path)
    # other devices' and Triton's runs, newer, are left out
    write_run(tmp_path, "elsewhere", "2026-12-03T00:00:00+0000", {under: {"auto": (50.0, 1, 1, 1)}},
              device={"name": "NVIDIA A100", "triton": "3.8.0"})
    write_run(tmp_path, "old-triton", "2026-12-03T00:00:00+0000", {under: {"auto": (50.0, 1, 1, 1)}},
              device={"name": "NVIDIA H200", "triton": "3.6.0"})

    result = bar_status(tmp_path, capsys)
    assert result.returncode == 1, result.stderr
    dtype, M, N = under
    assert f"causal forward: {len(GRID)} cells, auto ≥ 92 at {len(GRID) - 1}, a peer ahead at 1, level at 1: " \
           "not met (runs: causal-grid)" in result.stdout
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert f"under the bar {dtype} {M}×{N}: auto 85.0, torch_compile 80.0 (causal-grid)" in lines
    assert "a peer ahead {} {}×{}: auto 95.0, torch_compile 97.0 (causal-grid)".format(*ahead) in lines
    assert "a peer level (a tie) {} {}×{}: auto 95.0, torch_compile 95.5 (causal-grid)".format(*level) in lines

    # a run of the two cells, newer, measured faster: they meet the bar now and the form with them
    write_run(tmp_path, "causal-cells", "2026-12-02T00:00:00+0000",
              {cell: {"auto": (93.0, 0.99, 1.0, 1.01), "torch_compile": (90.0, 1.04, 1.05, 1.06)}
               for cell in (under, ahead)})
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"causal forward: {len(GRID)} cells, auto ≥ 92 at {len(GRID)}, a peer ahead at 0, level at 1: met " \
           "(runs: causal-cells, causal-grid)" in result.stdout


def test_runs_in_several_folders_are_read_together_the_newest_run_of_a_cell_counts(tmp_path, capsys):
    """--out repeated (a session's device outputs beside evidence/runs): every folder's runs count, and a cell is
    the newest run's whichever folder holds it."""
    under = GRID[0]
    grid = {cell: {"auto": (95.0, 0.99, 1.0, 1.01)} for cell in GRID}
    grid[under] = {"auto": (85.0, 0.99, 1.0, 1.01)}
    first, second = tmp_path / "runs", tmp_path / "out-h100" / "runs"
    write_run(first, "causal-grid", "2026-12-01T00:00:00+0000", grid)
    write_other_forms_met(first)
    write_run(second, "causal-cell", "2026-12-02T00:00:00+0000", {under: {"auto": (96.0, 0.99, 1.0, 1.01)}})
    write_run(second, "causal-older", "2026-11-01T00:00:00+0000", {GRID[1]: {"auto": (50.0, 0.99, 1.0, 1.01)}})

    assert bar_status(first, capsys).returncode == 1
    result = bar_status([first, second], capsys)
    assert result.returncode == 0, result.stdout
    assert "causal forward: {} cells, auto ≥ 92 at {}, a peer ahead at 0, level at 0: met (runs: causal-cell, " \
           "causal-grid)".format(len(GRID), len(GRID)) in result.stdout


def test_a_form_measured_at_some_cells_only_is_not_met_and_no_run_is_exit_1(tmp_path, capsys):
    write_run(tmp_path, "causal-few", "2026-12-01T00:00:00+0000", {GRID[0]: {"auto": (99.0, 0.99, 1.0, 1.01)}})
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 1
    assert f"only 1 of the default grid's {len(GRID)} cells measured" in result.stdout

    # as a command: its exit code
    result = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "none"), "--op", "causal"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "no run of causal on NVIDIA H200 under Triton 3.8.0" in result.stdout


def test_cells_from_runs_priced_at_the_older_roofline_are_counted_and_marked(tmp_path, capsys):
    grid = {cell: {"auto": (95.0, 0.99, 1.0, 1.01)} for cell in GRID}
    grid[GRID[0]] = {"auto": (85.0, 0.99, 1.0, 1.01)}
    write_run(tmp_path, "causal-grid", "2026-12-01T00:00:00+0000", grid, own_bytes=False)
    write_run(tmp_path, "causal-cell", "2026-12-02T00:00:00+0000", {GRID[1]: {"auto": (95.0, 0.99, 1.0, 1.01)}})
    result = bar_status(tmp_path, capsys)
    assert f"{len(GRID) - 1} cells priced at the copy of x and y's bandwidth, prorated" in result.stdout
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "under the bar {} {}×{}: auto 85.0, no peer nan (causal-grid) *".format(*GRID[0]) in lines


def test_a_cell_is_judged_by_a_copy_of_its_forms_floor_not_the_bytes_its_kernel_models(tmp_path, capsys):
    # auto models more bytes than the floor (a shared mask written out to x's rows first): 95 % of its own bytes'
    # copy, but its floor's copy takes 0.7 ms against its 1.0: 70 % of the roofline, under the bar at every cell
    grid = {cell: {"auto": (95.0, 0.99, 1.0, 1.01), "torch_compile": (66.0, 1.04, 1.05, 1.06)} for cell in GRID}
    write_run(tmp_path, "causal-grid", "2026-12-01T00:00:00+0000", grid, floor_copy_ms=0.7)
    write_other_forms_met(tmp_path)
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 1
    assert f"causal forward: {len(GRID)} cells, auto ≥ 92 at 0, a peer ahead at 0, level at 0: not met" \
        in result.stdout
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "under the bar {} {}×{}: auto 70.0, torch_compile 66.7 (causal-grid)".format(*GRID[0]) in lines


def test_a_cell_measured_in_a_launch_the_code_no_longer_makes_is_not_met_and_says_what_changed(tmp_path, capsys):
    """The forty-eighth session's biased warps moved two H200 cells under the bar while an older run still read them
    as met: a cell whose run recorded auto's fused launch in other warps than launch_config now gives is marked !
    and not counted, one in the same launch (or another kernel's, or none recorded) is."""
    import torch

    from softmax_bench.kernels import DTYPES, fused
    from softmax_bench.ops import OPS

    def recorded(cell, warps=None):
        dtype, M, N = cell
        config = fused.launch_config(M, N, DTYPES[dtype], OPS["causal"].shapes_fusion(M, N, DTYPES[dtype]))
        return (f"picked=fused BLOCK_N={config['BLOCK_N']} ROWS={config['ROWS']} "
                f"num_warps={warps or config['num_warps']} maxnreg=48")

    changed = next(cell for cell in GRID if cell[2] == 4000 and cell[0] == "bf16")
    grid = {cell: {"auto": (95.0, 0.99, 1.0, 1.01, recorded(cell))} for cell in GRID}
    grid[GRID[0]] = {"auto": (95.0, 0.99, 1.0, 1.01, "picked=two_pass BLOCK=4096")}  # not read: taken as it is
    grid[GRID[1]] = {"auto": (95.0, 0.99, 1.0, 1.01)}  # a run from before the config column: taken as it is
    write_run(tmp_path, "causal-grid", "2026-12-01T00:00:00+0000", grid)
    write_other_forms_met(tmp_path)
    assert bar_status(tmp_path, capsys).returncode == 0

    now = fused.launch_config(4096, 4000, torch.bfloat16, OPS["causal"].shapes_fusion(4096, 4000, torch.bfloat16))
    grid[changed] = {"auto": (95.0, 0.99, 1.0, 1.01, recorded(changed, warps=2 * now["num_warps"]))}
    write_run(tmp_path, "causal-grid-b", "2026-12-02T00:00:00+0000", grid)
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 1
    assert "1 cells measured in a launch the code no longer makes (marked !): measure them again" in result.stdout
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert (f"launched otherwise now bf16 4096×4000: auto 95.0, no peer nan (causal-grid-b) ! num_warps "
            f"{2 * now['num_warps']} → {now['num_warps']}") in lines


def status_of_a_cell_recorded(tmp_path, capsys, cell, launch: str, op: str = "causal",
                              mask_shape: str = "full") -> tuple[int, list[str]]:
    """bar-status's exit code and lines (spaces collapsed) over a run of op's GRID met everywhere, `cell` recorded
    as launched `launch`, and runs of the other forms met."""
    grid = {other: {"auto": (95.0, 0.99, 1.0, 1.01)} for other in GRID}
    grid[cell] = {"auto": (95.0, 0.99, 1.0, 1.01, launch)}
    write_run(tmp_path, f"{op}-grid", "2026-12-01T00:00:00+0000", grid, op=op, mask_shape=mask_shape)
    write_other_forms_met(tmp_path, op, mask_shape)
    result = bar_status(tmp_path, capsys, op)
    return result.returncode, [" ".join(line.split()) for line in result.stdout.splitlines()]


def status_of_a_newer_run(tmp_path, capsys, cell, launch: str, op: str = "causal", mask_shape: str = "full") -> int:
    """bar-status's exit code once a newer run records `cell` as launched `launch`."""
    write_run(tmp_path, f"{op}-cell", "2026-12-02T00:00:00+0000", {cell: {"auto": (95.0, 0.99, 1.0, 1.01, launch)}},
              op=op, mask_shape=mask_shape)
    return bar_status(tmp_path, capsys, op).returncode


def recorded_cluster_launch(config) -> str:
    """auto's launch of cluster in `config` as a sweep records it (its config column)."""
    from softmax_bench.kernels import cluster

    return "picked=cluster " + " ".join(f"{key}={value}" for key, value in cluster.settings_of(config).items())


def test_a_cluster_cell_measured_with_other_loads_or_cap_than_the_code_makes_is_marked(tmp_path, capsys,
                                                                                        monkeypatch):
    """A cluster launch's cap and evict_last loads are recorded only where set: fp32 causal 512×262144 held in
    registers (shared_row.SHARED_ROWS off) and measured with plain loads (the sixty-second session's LEAN_CAUSAL_AT
    made them evict_last) is marked ! and not counted; the same cell recorded as the code now launches it is
    counted."""
    import torch

    from softmax_bench.kernels import cluster, shared_row
    from softmax_bench.ops import OPS

    cell = ("fp32", 512, 262144)
    assert cell in GRID
    monkeypatch.setattr(shared_row, "SHARED_ROWS", False)
    config = cluster.config_for(262144, torch.float32, OPS["causal"].shapes_fusion(512, 262144, torch.float32))
    assert config.evict == "evict_last", config
    as_now = recorded_cluster_launch(config)
    plain = as_now.replace(" evict=evict_last", "")
    returncode, lines = status_of_a_cell_recorded(tmp_path, capsys, cell, plain)
    assert returncode == 1
    assert ("launched otherwise now fp32 512×262144: auto 95.0, no peer nan (causal-grid) ! evict plain → "
            "evict_last") in lines
    assert status_of_a_newer_run(tmp_path, capsys, cell, as_now) == 0


def test_a_cluster_cell_held_in_registers_where_the_code_holds_it_in_shared_memory_is_marked(tmp_path, capsys,
                                                                                            monkeypatch):
    """With shared_row.SHARED_ROWS, fp32 causal 512×262144 is held in shared memory: a run that held it in registers
    (its config recording no `held`) is marked ! and not counted; one that held it in shared memory, in the entry's
    CTAs and warps, is counted."""
    import torch

    from softmax_bench.kernels import shared_row
    from softmax_bench.ops import OPS

    monkeypatch.setattr(shared_row, "SHARED_ROWS", True)
    cell = ("fp32", 512, 262144)
    ctas, warps, _ = shared_row.entry_for(262144, torch.float32, OPS["causal"].shapes_fusion(512, 262144,
                                                                                             torch.float32))
    in_registers = f"picked=cluster ctas={ctas} num_warps=16 step=16384 pieces=16384 evict=evict_last"
    returncode, lines = status_of_a_cell_recorded(tmp_path, capsys, cell, in_registers)
    assert returncode == 1
    assert ("launched otherwise now fp32 512×262144: auto 95.0, no peer nan (causal-grid) ! held registers → "
            f"shared, num_warps 16 → {warps}") in lines
    held = f"picked=cluster ctas={ctas} num_warps={warps} step=16384 held=shared online=True"
    assert status_of_a_newer_run(tmp_path, capsys, cell, held) == 0


def test_a_cluster_cell_is_judged_by_the_launch_of_its_shared_rows_laid_out_in_phase_copies(tmp_path, capsys):
    """Key-padded bf16 8192×50257: the launch lays the mask's rows out in phase copies before it takes its
    configuration (cluster.laid_out), which then reads them in vectors. A run recording that launch is counted; one
    recording the configuration of the mask read in place (before the seventy-third session) is marked !."""
    import torch

    from softmax_bench.kernels import cluster
    from softmax_bench.ops import OPS

    cell, mask_shape = ("bf16", 8192, 50257), "full"  # the op's own rows/64: its runs record "full"
    assert cell in GRID
    fusion = OPS["key-padded"].shapes_fusion(8192, 50257, torch.bfloat16, mask_shape, False)
    assert fusion.mask_shared
    recorded = {}
    for name, form in (("phased", cluster.laid_out(fusion, 50257, torch.bfloat16)), ("in place", fusion)):
        recorded[name] = recorded_cluster_launch(cluster.config_for(50257, torch.bfloat16, form))
    assert recorded["phased"] != recorded["in place"]
    returncode, lines = status_of_a_cell_recorded(tmp_path, capsys, cell, recorded["in place"], "key-padded",
                                                  mask_shape)
    assert returncode == 1 and any(line.startswith("launched otherwise now bf16 8192×50257") for line in lines)
    assert status_of_a_newer_run(tmp_path, capsys, cell, recorded["phased"], "key-padded", mask_shape) == 0


def test_a_cluster_cell_recorded_phased_where_the_code_reads_in_place_is_marked(tmp_path, capsys, monkeypatch):
    """fp32 biased rows/64 8192×50257 launches in one configuration whether its bias is laid out in phase copies or
    read in place (86.5 against 70.3 % on an H100, the eighty-second session's A/B under a switch): a run recording
    `phased=bias` where the code reads in place is marked ! and not counted; one recording `phased=none` is counted,
    and so is one from before launches recorded it, which cannot tell."""
    import torch

    from softmax_bench.kernels import cluster
    from softmax_bench.ops import OPS

    cell, dtype = ("fp32", 8192, 50257), torch.float32
    assert cell in GRID
    fusion = OPS["biased"].shapes_fusion(8192, 50257, dtype, "rows/64", False)
    in_place = cluster.laid_out(fusion, 50257, dtype, 8192)  # as the code lays it out
    with monkeypatch.context() as switched:
        switched.setattr(cluster, "PHASED_BIAS_ITEMSIZES", (2, 4))
        phased = cluster.laid_out(fusion, 50257, dtype, 8192)
    assert (cluster.phase_settings(in_place), cluster.phase_settings(phased)) == ({"phased": "none"},
                                                                                  {"phased": "bias"})
    config = cluster.config_for(50257, dtype, in_place)
    assert cluster.config_for(50257, dtype, phased) == config  # the configuration alone cannot tell them apart
    unrecorded = recorded_cluster_launch(config)
    for folder in (tmp_path / "now", tmp_path / "before"):  # the full bias's forms, met
        write_run(folder, "biased-full-grid", "2026-12-01T00:00:00+0000",
                  {other: {"auto": (95.0, 0.99, 1.0, 1.01)} for other in GRID}, op="biased")
        write_other_forms_met(folder, "biased")
    returncode, lines = status_of_a_cell_recorded(tmp_path / "now", capsys, cell, f"{unrecorded} phased=bias",
                                                  "biased", "rows/64")
    assert returncode == 1
    assert ("launched otherwise now fp32 8192×50257: auto 95.0, no peer nan (biased-grid) ! phased bias → none"
            in lines), lines
    assert status_of_a_newer_run(tmp_path / "now", capsys, cell, f"{unrecorded} phased=none", "biased",
                                 "rows/64") == 0
    assert status_of_a_cell_recorded(tmp_path / "before", capsys, cell, unrecorded, "biased", "rows/64")[0] == 0


def test_a_run_made_under_a_switch_is_left_out_and_named(tmp_path, capsys):
    """A newer run of one cell under the bar takes the grid's place (exit 1), unless it was made under a switch
    (SOFTMAX_BENCH_SWITCH in its settings: the eighty-second session's phase copies set by SWEEP_SET, measured as
    fp32 biased rows/64's newest cells): then the grid's figure counts, and the run is named as left out."""
    cell = ("fp32", 8192, 50257)
    write_run(tmp_path, "causal-grid", "2026-12-01T00:00:00+0000",
              {other: {"auto": (95.0, 0.99, 1.0, 1.01)} for other in GRID})
    write_other_forms_met(tmp_path)
    switch = "import softmax_bench.kernels.cluster as c; c.PHASED_BIAS_ITEMSIZES = (2, 4)"
    write_run(tmp_path, "causal-switched", "2026-12-02T00:00:00+0000", {cell: {"auto": (70.0, 1.3, 1.35, 1.4)}},
              settings={"SOFTMAX_BENCH_COMMIT": "c7d04be", "SOFTMAX_BENCH_SWITCH": switch})
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 0, result.stdout
    assert ("left out, made under a switch (SOFTMAX_BENCH_SWITCH in their settings: other code than their commit "
            "launches): causal-switched") in result.stdout
    write_run(tmp_path, "causal-unswitched", "2026-12-03T00:00:00+0000", {cell: {"auto": (70.0, 1.3, 1.35, 1.4)}},
              settings={"SOFTMAX_BENCH_COMMIT": "c7d04be"})
    result = bar_status(tmp_path, capsys)
    assert result.returncode == 1
    assert "under the bar fp32 8192×50257: auto 70.0, no peer nan (causal-unswitched)" in " ".join(
        result.stdout.split()), result.stdout


def test_the_device_steps_sweep_records_the_switch_it_was_made_under(tmp_path):
    """evidence/experiments/device-step.sh's bar_sweep passes SWEEP_SET to the sweep's process as
    SOFTMAX_BENCH_SWITCH (a run records its SOFTMAX_BENCH_* variables), and sets nothing without one. Run with
    stand-ins for nvidia-smi and python3 that say what they were given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA H200'\n")
    (bin_dir / "python3").write_text('#!/bin/sh\necho "switch=${SOFTMAX_BENCH_SWITCH-unset}" >> "$OUT/seen.txt"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    steps = SCRIPT.parent.parent / "evidence" / "experiments" / "device-step.sh"
    switch = "import softmax_bench.kernels.cluster as c; c.PHASED_BIAS_ITEMSIZES = (2, 4)"
    subprocess.run(["bash", "-c", f". {steps}; commit=abc; bar_sweep plain --shape 8x64; "
                    f"SWEEP_SET='{switch}' bar_sweep switched --shape 8x64"], check=True, capture_output=True,
                   env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(tmp_path),
                        "PACKED": "1"})
    seen = (tmp_path / "seen.txt").read_text().splitlines()
    assert seen[0] == "switch=unset" and seen[2] == f"switch={switch}", seen  # each sweep, then its summary


def test_every_form_the_bar_covers_needs_a_run_a_broadcast_bias_and_the_key_padding_mask_too(tmp_path, capsys):
    """Issue 26 item 5: a masked or biased op is measured with a full mask and with a broadcast one too (the biased
    op's rows/64 bias; key-padded, scaled-masked's rows/64 mask), its log_softmax and both passes of each: a form
    with no run is named and not met, however well the others do."""
    met = {cell: {"auto": (95.0, 0.99, 1.0, 1.01)} for cell in GRID}
    write_run(tmp_path, "biased-grid", "2026-12-01T00:00:00+0000", met, op="biased")
    write_other_forms_met(tmp_path, "biased")
    result = bar_status(tmp_path, capsys, op="biased")
    assert result.returncode == 1
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "biased forward: {} cells, auto ≥ 92 at {}, a peer ahead at 0, level at 0: met (runs: biased-grid)".format(
        len(GRID), len(GRID)) in lines
    assert [line for line in lines if "no run" in line] == [
        f"biased (mask rows/64){log} {pass_}: no run: not met"
        for log in ("", " log") for pass_ in ("forward", "backward")]

    write_run(tmp_path, "biased-rows-64", "2026-12-01T00:00:00+0000", met, op="biased", mask_shape="rows/64")
    write_other_forms_met(tmp_path, "biased", "rows/64")
    assert bar_status(tmp_path, capsys, op="biased").returncode == 0

    result = bar_status(tmp_path, capsys, op="key-padded")
    assert result.returncode == 1 and "no run of key-padded on NVIDIA H200" in result.stdout
