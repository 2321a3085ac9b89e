"""A sweep whose every timed call is slowed by PCT % of the same cell's median in a baseline run of one variant:
a known slowdown at every cell, for `check` to catch (scripts/ci-noise-and-slowdown.sh; issues 30 and 29's gates).

    PYTHONPATH=. python3 scripts/slowed-sweep.py gpu|host BASELINE_RUN_DIR PCT SWEEP_ARGS...

SWEEP_ARGS are `softmax-bench sweep`'s (the baseline's grid and variant, an --out and a --run-id). `gpu`: each
timed call is followed by a torch.cuda._sleep of PCT % of the baseline's median for its cell (ms), its cycles
calibrated against the GPU's clock once. `host`: each call first spins on the host for PCT % of the baseline's
host_us for its cell, so the kernel is unchanged and the host's cost of a call rises. The copies each cell is
divided by are not slowed.
"""

import sys
import time
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
    if len(sys.argv) < 5 or sys.argv[1] not in ("gpu", "host"):
        sys.exit(__doc__)
    what, base_dir, pct, sweep_args = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
    rows = open_run(base_dir.name, base_dir.parent).rows()
    ok = rows[rows["status"] == "ok"]
    if ok["variant"].nunique() != 1:
        sys.exit(f"{base_dir}: a baseline of one variant is needed (it has {', '.join(sorted(set(ok['variant'])))})")
    column = "ms" if what == "gpu" else "host_us"
    base = {(r.dtype, int(r.M), int(r.N)): float(getattr(r, column)) for r in ok.itertuples()}
    names = {dtype: name for name, dtype in DTYPES.items()}
    cycles_per_ms = sleep_cycles_per_ms()
    print(f"torch.cuda._sleep: {cycles_per_ms / 1e3:.0f} MHz; every call slowed by {pct:g} % of {base_dir.name}'s "
          f"{'median' if what == 'gpu' else 'host µs'}", flush=True)
    timed = sweep.timed

    def slowed(call, cell, pass_, nbytes, settings, interpret):
        M, N = cell.x.shape
        share = pct / 100 * base[(names[cell.x.dtype], M, N)]
        cycles, spin_s = (int(share * cycles_per_ms), 0.0) if what == "gpu" else (0, share / 1e6)

        def slow():
            if spin_s:
                until = time.perf_counter() + spin_s
                while time.perf_counter() < until:
                    pass
            result = call()
            if cycles:
                torch.cuda._sleep(cycles)
            return result

        return timed(slow, cell, pass_, nbytes, settings, interpret)

    sweep.timed = slowed
    sys.argv = ["softmax-bench", "sweep", *sweep_args]
    app(prog_name="softmax-bench")


if __name__ == "__main__":
    main()
