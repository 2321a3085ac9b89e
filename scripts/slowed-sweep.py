"""A sweep whose every timed call is slowed by PCT % of the same cell's median in a baseline run of one variant:
a known slowdown at every cell, for `check` to catch (scripts/ci-noise-and-slowdown.sh; issue 30's gate).

    PYTHONPATH=. python3 scripts/slowed-sweep.py BASELINE_RUN_DIR PCT SWEEP_ARGS...

SWEEP_ARGS are `softmax-bench sweep`'s (the baseline's grid and variant, an --out and a --run-id). Each timed call
is followed by a torch.cuda._sleep of PCT % of the baseline's median for its cell, its cycles calibrated against
the GPU's clock once; the copies each cell is divided by are not slowed.
"""

import sys
from pathlib import Path

import torch

from softmax_bench import sweep
from softmax_bench.cli import app
from softmax_bench.kernels import DTYPES
from softmax_bench.results import open_run


def sleep_cycles_per_ms() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(10**6)  # the clock up before it is measured
    start.record()
    torch.cuda._sleep(10**8)
    end.record()
    torch.cuda.synchronize()
    return 10**8 / start.elapsed_time(end)


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    base_dir, pct, sweep_args = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    rows = open_run(base_dir.name, base_dir.parent).rows()
    ok = rows[rows["status"] == "ok"]
    if ok["variant"].nunique() != 1:
        sys.exit(f"{base_dir}: a baseline of one variant is needed (it has {', '.join(sorted(set(ok['variant'])))})")
    base_ms = {(r.dtype, int(r.M), int(r.N)): float(r.ms) for r in ok.itertuples()}
    names = {dtype: name for name, dtype in DTYPES.items()}
    cycles_per_ms = sleep_cycles_per_ms()
    print(f"torch.cuda._sleep: {cycles_per_ms / 1e3:.0f} MHz; every call slowed by {pct:g} % of {base_dir.name}'s "
          "median", flush=True)
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
    sys.argv = ["softmax-bench", "sweep", *sweep_args]
    app(prog_name="softmax-bench")


if __name__ == "__main__":
    main()
