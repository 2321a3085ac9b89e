"""`softmax-bench` as a torchrun rank that goes wrong at its second cell when told so (tests/test_many_devices.py):

    torchrun --nproc-per-node=3 tests/faulty_rank.py 1=raise,2=hang sweep --interpret …

raise: an exception escapes the cell, as a lost device's would; die: the process is killed (SIGKILL, as the
out-of-memory killer does); hang: the cell never finishes.
"""

import os
import signal
import sys
import time

from softmax_bench import sweep
from softmax_bench.cli import app

FAULTS = dict(pair.split("=") for pair in sys.argv.pop(1).split(","))  # rank → fault
measure_cell = sweep.measure_cell
cells_started = 0


def faulty_measure_cell(*args, **kwargs):
    global cells_started
    cells_started += 1
    fault = FAULTS.get(os.environ["RANK"])
    if cells_started == 2 and fault == "raise":
        raise RuntimeError("CUDA error: an illegal memory access was encountered (injected)")
    if cells_started == 2 and fault == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if cells_started == 2 and fault == "hang":
        time.sleep(3600)
    return measure_cell(*args, **kwargs)


sweep.measure_cell = faulty_measure_cell
app(prog_name="softmax-bench")
