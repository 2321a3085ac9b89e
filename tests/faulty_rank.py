"""`softmax-bench` as a torchrun rank that goes wrong at its second cell when told so (tests/test_many_devices.py):

    torchrun --nproc-per-node=3 tests/faulty_rank.py 1=raise,2=hang sweep --interpret …

raise: an exception escapes the cell, as a lost device's would; die: the process is killed (SIGKILL, as the
out-of-memory killer does); hang: the cell never finishes.
"""

import os
import signal
import sys
import time
from pathlib import Path

from softmax_bench import sweep
from softmax_bench.cli import app

FAULTS = dict(pair.split("=") for pair in sys.argv.pop(1).split(","))  # rank → fault
OUT = Path(sys.argv[sys.argv.index("--out") + 1])
measure_cell = sweep.measure_cell
cells_started = 0


def every_rank_began() -> None:
    """Wait (up to a minute) until every rank has begun its first cell, each saying so by a file in the --out
    folder: a rank still importing when another dies is stopped before the sweep could say what it kept (the
    test's check of that message failed so on a loaded machine)."""
    waited = time.monotonic() + 60
    while time.monotonic() < waited and len(list(OUT.glob(".rank-*-began"))) < int(os.environ["WORLD_SIZE"]):
        time.sleep(0.05)


def faulty_measure_cell(*args, **kwargs):
    global cells_started
    cells_started += 1
    if cells_started == 1:
        (OUT / f".rank-{os.environ['RANK']}-began").touch()
    fault = FAULTS.get(os.environ["RANK"])
    if cells_started == 2 and fault is not None:
        every_rank_began()
    if cells_started == 2 and fault == "raise":
        raise RuntimeError("CUDA error: an illegal memory access was encountered (injected)")
    if cells_started == 2 and fault == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if cells_started == 2 and fault == "hang":
        time.sleep(3600)
    return measure_cell(*args, **kwargs)


sweep.measure_cell = faulty_measure_cell
app(prog_name="softmax-bench")
