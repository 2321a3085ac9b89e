"""Ctrl-C at a random moment of test_many_devices's interrupted sweep (two interpreted ranks): which endings occur,
and does any process hang? Prints each trial's delay, exit status and time to stop, the stderr tail where the
status is not 130, and ps of the session where it hangs (45 s).
    python3 evidence/experiments/2026-12-04-session32/ctrl-c-hunt.py SEED TRIALS
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ENV = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": REPO, "PYTHONUNBUFFERED": "1"}
WITH_CTRL_C = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
               "sys.argv[0] = 'softmax_bench'; runpy.run_module('softmax_bench', run_name='__main__')")

random.seed(int(sys.argv[1]))
for trial in range(int(sys.argv[2])):
    command = [sys.executable, "-c", WITH_CTRL_C, "sweep", "--interpret", "--gpus", "2", "--variant", "fused",
               "--variant", "eager", "--out", tempfile.mkdtemp()]
    proc = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    delay = random.uniform(1.0, 9.0)
    time.sleep(delay)
    if proc.poll() is not None:
        print(trial, f"delay {delay:.1f}: finished first")
        continue
    os.killpg(proc.pid, signal.SIGINT)
    start = time.time()
    try:
        _, err = proc.communicate(timeout=45)
        print(trial, f"delay {delay:.1f}: rc {proc.returncode} in {time.time() - start:.1f} s", flush=True)
        if proc.returncode != 130:
            print("   ", err.strip().splitlines()[-3:])
    except subprocess.TimeoutExpired:
        ps = subprocess.run(["ps", "-o", "pid,ppid,stat,etime,wchan:24,args", "-s", str(proc.pid)],
                            capture_output=True, text=True).stdout
        print(trial, f"delay {delay:.1f}: HUNG\n{ps}", flush=True)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
