"""Issue 26's bar, read from stored runs: for each fused form (op, its log or not) and pass, every cell of the
default grid with auto's % of its roofline (a copy of the form's floor bytes: roofline_pct) and the best peer
measured beside it in the same run, and the cells that miss the bar — auto under 92 % of its roofline (forward) or
90 % (backward), or a peer ahead of it.

A cell is taken from the newest run that timed auto there among the runs of its form and mask shape (a run of a
few cells measured after a grid supersedes the grid's rows for those cells): on one GPU of one device (default the
NVIDIA H200), not interpreted, under one Triton (default 3.8.0). Cells outside the default grid are left out. A
peer is ahead where its p20–p80 band of time lies wholly under auto's (both from one run, so the copy they are
divided by is the same); a peer whose median alone is ahead is level (a tie), listed apart. A cell from a run made
before a fused cell's roofline became a copy of its own bytes (no "roofline" in its meta.json) is marked *.

A cell whose run launched auto's kernel in another configuration than the code now does is marked ! and counts as
not met: the figure is no longer the code's. Read for a forward's fused kernel (BLOCK_N, ROWS, num_warps: its
launch_config) and cluster kernel (its rows held in registers or shared memory, ctas, num_warps, its registers' cap
and evict_last loads: config_for, shared_row.entry_for; shared rows laid out in phase copies or read in place,
where the run recorded it: cluster.phase_settings) from the run's `config` column; the variant auto picks, other
kernels and the backward are taken as they are. (The forty-eighth session's biased warps, chosen on an H100, moved
two H200 cells under the bar; this read them as met from a run made before. The sixty-second session's evict_last
loads at fp32 causal 262144 are marked so, and so is a run made with the phase copies switched on where the code
reads in place.) A run made under a switch (device-step.sh's SWEEP_SET, recorded as SOFTMAX_BENCH_SWITCH in its
settings) is left out and named: it measured code its commit does not launch.

Every form the bar covers needs runs (required_forms): each op's softmax and log_softmax, forward and backward, and
for biased the broadcast bias (rows/64) beside the full one — issue 26 item 5; key-padded is scaled-masked's
broadcast mask. A form with no run is named and not met. (Until the sixty-sixth session the script listed the forms
it found runs of, and the broadcast ones, never measured since the key-padded runs of the early sessions, went
unseen.)

    python3 scripts/bar-status.py [--out evidence/runs ...] [--device "NVIDIA H200"] [--triton 3.8.0] [--op OP ...]
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from softmax_bench.config import build_plan  # noqa: E402
from softmax_bench.kernels import DTYPES, cluster, fused, shared_row  # noqa: E402
from softmax_bench.ops import FUSED_OPS, OPS  # noqa: E402
from softmax_bench.peers import PEERS as PEER_REGISTRY  # noqa: E402
from softmax_bench.results import BenchError, stored_runs  # noqa: E402
from softmax_bench.run_life import SWITCH_SETTING  # noqa: E402

FORMS = ("scaled", "scaled-masked", "causal", "biased", "key-padded")
# The forms the bar covers, by op: its mask shapes (issue 26 item 5: a masked or biased op with a full mask and with a
# broadcast one; key-padded is scaled-masked's, rows/64), each softmax and log_softmax, forward and backward.
COVERED_MASK_SHAPES = {"biased": ("full", "rows/64")}
BARS = {"forward": 92.0, "backward": 90.0}
PASSES = tuple(BARS)
OURS = {"auto"}  # what the bar is about
PEERS = (*PEER_REGISTRY, "eager")  # the peers a sweep times beside auto, and torch's own softmax (a variant)


def default_grid() -> set[tuple[str, int, int]]:
    """The default preset's (dtype, M, N) cells, as `sweep --preset default` plans them."""
    return set(build_plan([], [], [], None, "default", [], []).cells())


def cells_by_form(outs: list[Path], device: str, triton: str, ops: tuple[str, ...], grid: set
                  ) -> tuple[dict[tuple, pd.DataFrame], list[str]]:
    """(op, mask shape, log, pass) → one row a (dtype, M, N) cell: auto's and the best peer's figures, from the
    newest run in the folders `outs` that timed auto at that cell, with the run's id; and the ids of the runs left
    out as made under a switch (run_life.SWITCH_SETTING in their settings: other code than their commit launches)."""
    taken: dict[tuple, dict] = {}
    switched: list[str] = []
    for run in stored_runs(*outs):  # newest first: the first run to give a cell keeps it
        try:
            meta, rows = run.meta(), run.rows()
        except BenchError:
            continue
        info = meta.get("device") or {}
        if meta.get("interpreted") or info.get("name") != device or info.get("triton") != triton \
                or len(meta.get("devices") or [None]) > 1:
            continue
        op, log, mask_shape = meta.get("op") or "softmax", bool(meta.get("log")), meta.get("mask_shape") or "full"
        if op not in ops:
            continue
        if (meta.get("settings") or {}).get(SWITCH_SETTING):
            switched.append(run.id)
            continue
        ok = rows[rows["status"] == "ok"]
        for (pass_, dtype, M, N), cell in ok.groupby(["pass", "dtype", "M", "N"]):
            key = (op, mask_shape, log, pass_)
            ours = cell[cell["variant"].isin(OURS)]
            if ours.empty or (dtype, M, N) not in grid or (dtype, M, N) in taken.setdefault(key, {}):
                continue
            taken[key][(dtype, M, N)] = {**figures(run.id, ours.iloc[0], cell[cell["variant"].isin(PEERS)], op),
                                         "prorated": op in FUSED_OPS and "roofline" not in meta,
                                         "relaunched": launch_change(ours.iloc[0].get("config"), op, mask_shape, log,
                                                                     pass_, dtype, M, N)}
    return {key: pd.DataFrame(sorted(cells.values(), key=lambda c: (c["dtype"], c["M"], c["N"])))
            for key, cells in taken.items() if cells}, switched


def required_forms(ops: tuple[str, ...]) -> list[tuple[str, str, bool, str]]:
    """(op, mask shape, log, pass) of every form of `ops` the bar covers (COVERED_MASK_SHAPES, PASSES)."""
    return [(op, mask_shape, log, pass_) for op in ops if op in FORMS
            for mask_shape in COVERED_MASK_SHAPES.get(op, ("full",)) for log in (False, True) for pass_ in PASSES]


def form_label(op: str, mask_shape: str, log: bool, pass_: str) -> str:
    return f"{op}{'' if mask_shape == 'full' else f' (mask {mask_shape})'}{' log' if log else ''} {pass_}"


def launch_change(recorded, op: str, mask_shape: str, log: bool, pass_: str, dtype: str, M: int, N: int) -> str:
    """How the code's launch of auto's forward kernel at a cell differs from the one its run recorded (`picked=fused
    BLOCK_N=… ROWS=… num_warps=…` or `picked=cluster ctas=… num_warps=… [max_registers=…] [evict=…] [phased=…]`):
    "num_warps 32 → 16", "evict plain → evict_last", "phased bias → none"; "" where they agree or this cannot tell
    (another kernel, a backward)."""
    if pass_ != "forward" or not isinstance(recorded, str) or "picked=" not in recorded:
        return ""
    words = recorded.split()
    picked, then = words[0].removeprefix("picked="), dict(w.split("=", 1) for w in words[1:] if "=" in w)
    fusion = OPS[op].shapes_fusion(M, N, DTYPES[dtype], mask_shape, log)
    if picked == "fused":
        now = fused.launch_config(M, N, DTYPES[dtype], fusion)
    elif picked == "cluster" and (entry := shared_row.entry_for(N, DTYPES[dtype], fusion)):  # in shared memory
        ctas, num_warps, _ = entry
        now, then = {"held": "shared", "ctas": ctas, "num_warps": num_warps}, {"held": "registers", **then}
    elif picked == "cluster":
        laid_out = cluster.laid_out(fusion, N, DTYPES[dtype], M)
        config = cluster.config_for(N, DTYPES[dtype], laid_out)
        now = {"held": "registers", "ctas": config.ctas, "num_warps": config.num_warps}
        # held in shared memory, a cap and evict_last loads are recorded only where set: absent, registers, none and
        # plain loads
        then = {"held": "registers", "max_registers": "None", "evict": "plain", **then}
        now.update(max_registers=config.max_registers, evict=config.evict or "plain")
        # shared rows laid out in phase copies or not: recorded since the eighty-second session (a run from before
        # cannot tell, and is not marked for it)
        now.update(cluster.phase_settings(laid_out))
    else:
        return ""
    return ", ".join(f"{key} {then[key]} → {value}" for key, value in now.items()
                     if key in then and then[key] != str(value))


def roofline_pct(row, op: str) -> float:
    """A row's % of its form's roofline: a copy of the floor's bytes, timed in its run (roofline_copy_ms), against
    its time. Not pct_of_roofline, which prices the bytes the variant's own model says it moves: where a kernel
    moves more than the floor, that lowers its bar (auto's key-padded log backward writes its shared mask out to x's
    rows first: 94.6 % of its own bytes at bf16 1024×131072 on the H200, 71.0 % of the floor's). Runs from before
    the floor's copy was a column: pct_of_roofline; the plain softmax in a run from before that was filled, its %
    of copy (its roofline is a copy's bytes). NaN where none is known: a cell not counted as meeting the bar."""
    floor_ms = row.get("roofline_copy_ms")  # None in runs without the column: pd.notna(None) is False
    if pd.notna(floor_ms) and pd.notna(row["ms"]):
        return float(100 * floor_ms / row["ms"])
    if pd.notna(row["pct_of_roofline"]):
        return float(row["pct_of_roofline"])
    return float(row["pct_of_copy"]) if op == "softmax" else float("nan")


def figures(run_id: str, ours, peers: pd.DataFrame, op: str) -> dict:
    """A cell's line: auto's % of its roofline and time band, the fastest peer's, whether that peer is ahead (its
    band wholly under auto's) or level (its median alone)."""
    line = {"dtype": ours["dtype"], "M": int(ours["M"]), "N": int(ours["N"]), "auto": roofline_pct(ours, op),
            "peer": "", "peer_pct": float("nan"), "peer_ahead": False, "peer_level": False, "run": run_id}
    if not peers.empty:
        best = peers.loc[peers["ms"].idxmin()]
        line.update(peer=best["variant"], peer_pct=roofline_pct(best, op),
                    peer_ahead=bool(best["ms_p80"] < ours["ms_p20"]),
                    peer_level=bool(best["ms"] < ours["ms"] and not best["ms_p80"] < ours["ms_p20"]))
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, action="append",
                        help="a folder of runs (repeatable: the newest run of a cell in any of them counts); "
                             "default: evidence/runs")
    parser.add_argument("--device", default="NVIDIA H200")
    parser.add_argument("--triton", default="3.8.0")
    parser.add_argument("--op", action="append", choices=(*FORMS, "softmax"),
                        help="only this op (repeatable); default: the fused forms")
    args = parser.parse_args(argv)
    grid = default_grid()
    outs = args.out or [Path("evidence/runs")]
    forms, switched = cells_by_form(outs, args.device, args.triton, tuple(args.op or FORMS), grid)
    if switched:
        print(f"left out, made under a switch ({SWITCH_SETTING} in their settings: other code than their commit "
              f"launches): {', '.join(sorted(switched))}")
    if not forms:
        print(f"no run of {', '.join(args.op or FORMS)} on {args.device} under Triton {args.triton} in "
              f"{', '.join(map(str, outs))}")
        return 1
    missed = 0
    for form in required_forms(tuple(args.op or FORMS)):
        if form not in forms:
            missed += 1
            print(f"\n{form_label(*form)}: no run: not met")
    for (op, mask_shape, log, pass_), cells in sorted(forms.items()):
        bar = BARS[pass_]
        under = cells[~(cells["auto"] >= bar)]  # NaN (not known) counts as under
        ahead, level = cells[cells["peer_ahead"]], cells[cells["peer_level"]]
        relaunched = cells[cells["relaunched"] != ""]
        met = under.empty and ahead.empty and relaunched.empty and len(cells) == len(grid)
        missed += not met
        print(f"\n{form_label(op, mask_shape, log, pass_)}: {len(cells)} cells, auto ≥ {bar:.0f} at "
              f"{len(cells) - len(under)}, a peer ahead at {len(ahead)}, level at {len(level)}: "
              f"{'met' if met else 'not met'} (runs: {', '.join(sorted(set(cells['run'])))})")
        if len(cells) < len(grid):
            print(f"  only {len(cells)} of the default grid's {len(grid)} cells measured")
        if cells["prorated"].any():
            print(f"  {int(cells['prorated'].sum())} cells priced at the copy of x and y's bandwidth, prorated (runs "
                  "from before a fused cell's roofline was a copy of its own bytes: marked *)")
        if not relaunched.empty:
            print(f"  {len(relaunched)} cells measured in a launch the code no longer makes (marked !): measure them "
                  "again")
        for title, table in (("under the bar", under), ("a peer ahead", ahead), ("a peer level (a tie)", level),
                             ("launched otherwise now", relaunched)):
            for c in table.itertuples():
                print(f"  {title:22} {c.dtype} {c.M}×{c.N}: auto {c.auto:.1f}, {c.peer or 'no peer'} "
                      f"{c.peer_pct:.1f} ({c.run}){' *' if c.prorated else ''}"
                      + (f" ! {c.relaunched}" if c.relaunched else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
