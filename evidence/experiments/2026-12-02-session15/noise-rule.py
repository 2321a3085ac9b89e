"""Issue 30's noise rule on the H200: which `--max-noise` to make the default, and which gate `check` should use.

    PYTHONPATH=. python3 evidence/experiments/2026-12-02-session15/noise-rule.py sweeps OUT [TARGET ...]
    PYTHONPATH=. python3 evidence/experiments/2026-12-02-session15/noise-rule.py slowed OUT TARGET [PCT]
    PYTHONPATH=. python3 evidence/experiments/2026-12-02-session15/noise-rule.py report OUT

sweeps: for each target (`off`: the fixed sample count of today's default; else a --max-noise in %), the default
grid with auto alone (`sweep --preset default --variant auto --max-noise T`) twice, run ids noise-T-a and -b, each
sweep's wall time in OUT/walls.csv. slowed: the same sweep with auto slowed by PCT % (default 5) at every cell,
run id noise-T-slowed: each timed call gets a torch.cuda._sleep of PCT % of that cell's median in noise-T-a,
calibrated against the GPU's clock once. report: for each target, the wall times, the largest per-cell change
between the two reruns, what `check` (today's gate) says of b against a and of the slowed run against a, and what
candidate gates built from the rows' noise_pct would say: `2 % + Z · hypot(noise_a, noise_b)` for Z = 2, 3, 4
(a regression: a drop past the gate, no band test). The default to choose: the largest noise that keeps reruns
within 2 % at every cell, at the least wall time; the gate: the one with no false alarm on any rerun that fails
the slowed run at every cell.
Written in the fifteenth session, when no device time was left to run it.
"""
import csv
import math
import subprocess
import sys
import time
from pathlib import Path

step, out = sys.argv[1], Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
SWEEP = ["sweep", "--preset", "default", "--variant", "auto"]


def run_id(target: str, which: str) -> str:
    return f"noise-{target}-{which}"


def noise_args(target: str) -> list[str]:
    return [] if target == "off" else ["--max-noise", target]


if step == "sweeps":
    targets = sys.argv[3:] or ["off", "1", "0.5"]
    with open(out / "walls.csv", "a", newline="") as f:
        walls = csv.writer(f)
        for target in targets:
            for which in ("a", "b"):
                start = time.perf_counter()
                rc = subprocess.run([sys.executable, "-m", "softmax_bench", *SWEEP, *noise_args(target), "--out",
                                     str(out), "--run-id", run_id(target, which)], stdout=subprocess.DEVNULL).returncode
                wall = time.perf_counter() - start
                walls.writerow([target, which, round(wall, 1), rc])
                f.flush()
                print(f"{run_id(target, which)}: rc {rc}, {wall:.0f} s wall", flush=True)

elif step == "slowed":
    import torch

    from softmax_bench import sweep
    from softmax_bench.cli import app
    from softmax_bench.kernels import DTYPES
    from softmax_bench.results import open_run

    target, pct = sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 5.0
    rows = open_run(run_id(target, "a"), out).rows()
    base_ms = {(r.dtype, int(r.M), int(r.N)): float(r.ms) for r in rows.itertuples() if r.status == "ok"}
    names = {dtype: name for name, dtype in DTYPES.items()}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(10**6)
    start.record()
    torch.cuda._sleep(10**8)
    end.record()
    torch.cuda.synchronize()
    cycles_per_ms = 10**8 / start.elapsed_time(end)
    print(f"torch.cuda._sleep: {cycles_per_ms / 1e3:.0f} MHz", flush=True)
    timed = sweep.timed

    def slowed(call, cell, pass_, nbytes, settings, interpret):
        M, N = cell.x.shape
        cycles = int(pct / 100 * base_ms[(names[cell.x.dtype], M, N)] * cycles_per_ms)

        def slow():
            result = call()
            torch.cuda._sleep(cycles)
            return result

        return timed(slow, cell, pass_, nbytes, settings, interpret)

    sweep.timed = slowed
    sys.argv = ["softmax-bench", *SWEEP, *noise_args(target), "--out", str(out), "--run-id",
                run_id(target, "slowed")]
    app(prog_name="softmax-bench")

elif step == "report":
    from softmax_bench.regression import check
    from softmax_bench.results import open_run

    walls = list(csv.reader(open(out / "walls.csv"))) if (out / "walls.csv").exists() else []
    targets = sorted({w[0] for w in walls}, key=lambda t: (t != "off", -float(t) if t != "off" else 0))
    for target in targets:
        print(f"== max-noise {target}: walls", [w[2] for w in walls if w[0] == target], "s")
        a = open_run(run_id(target, "a"), out)
        pairs = [("rerun", open_run(run_id(target, "b"), out))]
        if (out / run_id(target, "slowed")).exists():
            pairs.append(("slowed", open_run(run_id(target, "slowed"), out)))
        base = {(r.variant, r.dtype, int(r.M), int(r.N)): r for r in a.rows().itertuples()}
        for label, run in pairs:
            result = check(run, a)
            print(f"  check {label} against a (today's gate): {len(result.regressions)} regressions of "
                  f"{len(result.changes)} cells")
            changes = []
            for r in run.rows().itertuples():
                b = base.get((r.variant, r.dtype, int(r.M), int(r.N)))
                if b is None or r.status != "ok" or b.status != "ok":
                    continue
                changes.append((100 * (r.pct_of_copy - b.pct_of_copy) / b.pct_of_copy,
                                math.hypot(r.noise_pct, b.noise_pct), f"{r.dtype} {r.M}x{r.N}", r.samples))
            worst = max(changes, key=lambda c: abs(c[0]))
            samples = sorted(c[3] for c in changes)[len(changes) // 2]
            print(f"  {label}: largest change {worst[0]:+.2f} % at {worst[2]} (noise {worst[1]:.2f} %); cells past "
                  f"2 %: {sum(abs(c[0]) > 2 for c in changes)}; median samples {samples}")
            for z in (2, 3, 4):
                flagged = sum(c[0] < -(2 + z * c[1]) for c in changes)
                print(f"    gate 2 % + {z}·noise: {flagged} of {len(changes)} cells flagged")
else:
    sys.exit(__doc__)
