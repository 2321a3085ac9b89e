"""Many devices under torchrun: each rank measures its share of the cells (with --replicate, every cell) on its own
device, and rank 0 writes the one run.

`torchrun --nproc-per-node=N -m softmax_bench sweep …` starts the ranks, and `sweep --gpus N` starts the same ranks
with the same environment (`launch`). Rank r
runs on cuda:<LOCAL_RANK> (under the interpreter every rank is on the CPU) and measures its own copy baseline there.
The ranks meet once, at the start, in gloo collectives (on the CPU: no communication kernel runs on a GPU being
measured): rank 0 gathers the devices and their copy baselines, starts or resumes the run, and deals out the cells.

After that no rank waits for another. Rows travel to rank 0 through the process group's key-value store (the c10d
TCPStore that torchrun, or `launch`, serves), not a collective: a rank posts each row when it has it and goes on,
and rank 0 writes the others' rows to rows.csv between its own, so every row is on disk within one of rank 0's rows
of being measured. A rank that fails posts its remaining cells as FAIL with the error. A rank that posts nothing
for the rank timeout is named hung, its remaining cells FAIL, and rank 0 exits 1 so that `launch` (or torchrun)
stops it; the other ranks watch rank 0 the same way.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Callable, Iterator

import torch
import torch.distributed as dist

from . import device as devices
from . import run_life, sweep
from .config import SweepPlan
from .errors import BenchError, RankHung, RefusedByRank0
from .results import Run

RANK_TIMEOUT_S = 600  # the longest a rank may take over one row (a torch.compile of a wide row takes about a minute)
START_TIMEOUT_S = 300  # the least the ranks wait for each other at the start, where each measures its copy baseline
POLL_S = 0.2
STOP_GRACE_S = 30  # how long ranks stopped after another's failure have to write what they kept
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK")


def under_torchrun() -> bool:
    return all(name in os.environ for name in TORCHRUN_ENV)


def rank_count(gpus: str, interpret: bool) -> int:
    """The number of ranks --gpus asks for: all of the visible GPUs, or a number (CPU ranks under --interpret)."""
    if gpus == "all":
        if interpret:
            raise BenchError("--gpus all: under --interpret there are no GPUs to count; give a number of CPU ranks, "
                             "e.g. --gpus 2")
        return torch.cuda.device_count()
    if not gpus.isdigit() or int(gpus) < 1:
        raise BenchError(f"--gpus {gpus!r}: give all, or a number of GPUs ≥ 1")
    visible = torch.cuda.device_count()
    if not interpret and visible == 0:
        raise BenchError(f"--gpus {gpus}: no CUDA GPU is visible here; add --interpret to run {gpus} ranks on the CPU")
    if not interpret and int(gpus) > visible:
        raise BenchError(f"--gpus {gpus}: {visible} GPU(s) visible here (CUDA_VISIBLE_DEVICES narrows them); "
                         f"ask for at most {visible}")
    return int(gpus)


def launch(ranks: int) -> int:
    """Run this same command as `ranks` processes on this machine, with the environment torchrun
    --standalone --nproc-per-node=ranks gives them (each sees the --gpus it was started with and takes it for the
    number of ranks); returns the first failed rank's exit status, else 0. As torchrun does, once a rank fails the
    others are stopped (SIGTERM: they keep their finished cells). Not torchrun itself: on Ctrl-C, which reaches
    every rank too, torchrun prints a traceback of its own and exits 1; here the ranks say what was kept, and the
    status is theirs (130)."""
    # This process serves the ranks' store, as torchrun's agent does: it outlives every rank (rank 0 leaves first,
    # while another may still read it)
    store = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
    env = {"OMP_NUM_THREADS": "1", **os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(store.port),
           "TORCHELASTIC_USE_AGENT_STORE": "True", "WORLD_SIZE": str(ranks), "LOCAL_WORLD_SIZE": str(ranks)}
    command = [sys.executable, "-m", "softmax_bench", *sys.argv[1:]]
    procs = [subprocess.Popen(command, env={**env, "RANK": str(r), "LOCAL_RANK": str(r)}) for r in range(ranks)]
    failed, stopped_at = None, None
    while True:
        try:
            codes = [exit_status(p.poll()) for p in procs]
            if failed is None:
                failed = next((code for code in codes if code), None)
            if all(code is not None for code in codes):
                return failed or 0
            if failed is not None and stopped_at is None:
                stopped_at = time.monotonic()
                for p in procs:
                    if p.poll() is None:
                        p.terminate()
            elif stopped_at is not None and time.monotonic() - stopped_at > STOP_GRACE_S:
                for p in procs:
                    p.kill()
            time.sleep(POLL_S)
        except KeyboardInterrupt:
            continue  # the ranks had the same Ctrl-C: they stop, and keep their finished cells


def exit_status(code: int | None) -> int | None:
    """A rank's exit status as a shell gives it: a rank killed by a signal (a Ctrl-C that came before Python's
    handler, or after it was gone) is 128 + the signal (130), not Popen's negative code (-2, which exits 254)."""
    return code if code is None or code >= 0 else 128 - code


@dataclass(frozen=True)
class Rank:
    rank: int
    world: int
    label: str  # the device as rows name it: cuda:<local rank>, or cpu:<rank> under the interpreter

    @property
    def writes_the_run(self) -> bool:
        return self.rank == 0


def this_rank(interpret: bool, gpus: str | None) -> Rank:
    """This process's rank, on its device (set as the current CUDA device): what torchrun's environment says."""
    rank, world, local = (int(os.environ[name]) for name in TORCHRUN_ENV)
    if gpus is not None and gpus != "all" and gpus != str(world):
        raise BenchError(f"--gpus {gpus}, but torchrun started {world} ranks; under torchrun, leave --gpus out")
    if interpret:
        return Rank(rank, world, f"cpu:{rank}")
    visible = torch.cuda.device_count()
    if local >= visible:
        raise BenchError(f"rank {rank} has LOCAL_RANK {local}, but this node has {visible} GPU(s): start at most "
                         f"{visible} processes a node (torchrun --nproc-per-node)")
    torch.cuda.set_device(local)
    label = f"cuda:{local}"
    if int(os.environ.get("LOCAL_WORLD_SIZE", world)) != world:  # several nodes: say which node's cuda:0
        label = f"{socket.gethostname()}/{label}"
    return Rank(rank, world, label)


@contextmanager
def joined(timeout_s: int) -> Iterator[dist.Store]:
    """The gloo process group of torchrun's ranks, and a key-value store of the same rendezvous for the rows."""
    timeout = timedelta(seconds=max(timeout_s, START_TIMEOUT_S))
    store, rank, world = next(dist.rendezvous("env://", timeout=timeout))
    dist.init_process_group("gloo", store=dist.PrefixStore("group", store), rank=rank, world_size=world,
                            timeout=timeout)
    try:
        yield dist.PrefixStore("softmax-bench", store)
    finally:
        dist.destroy_process_group()


@dataclass
class Start:
    """What the ranks agreed at the start: the plan, each rank's device label and cells, and this rank's copy
    bandwidth; on rank 0 also the run, its metadata and the line of rows.csv dropped because a kill cut it short."""

    plan: SweepPlan
    labels: list[str]
    shares: list[list[sweep.TodoCell]]
    copy_gbps: dict[str, float]
    run: Run | None = None
    meta: dict | None = None
    dropped: str | None = None


def start(rank: Rank, plan: SweepPlan | None, resume: str | None, baseline: dict | None, out_dir: Path,
          interpret: bool, command: str, run_id: str | None, replicate: bool) -> Start:
    """Meet the other ranks: rank 0 gathers every device (and its copy baseline, for a new run), starts the run or
    resumes it, and hands each rank its cells. A refusal of rank 0 (a run that cannot be resumed on these devices)
    is a BenchError on rank 0 and a quiet RefusedByRank0 elsewhere."""
    hello = {"label": rank.label, "device": devices.device_info(interpret), "baseline": baseline,
             "clocks_before": devices.clocks(interpret)}
    try:
        dist.monitored_barrier(wait_all_ranks=True)  # within the group's timeout
    except RuntimeError as err:  # gloo names the ranks that did not come
        raise BenchError(f"not every rank reached the start: {err}") from None
    hellos = [None] * rank.world if rank.writes_the_run else None
    dist.gather_object(hello, hellos, dst=0)
    opened, shared = None, None
    if rank.writes_the_run:
        try:
            opened = _open_run(hellos, plan, resume, out_dir, interpret, command, run_id, replicate)
            shared = opened.pop("shared")
        except BenchError as err:
            shared = str(err)
    box = [shared]
    dist.broadcast_object_list(box, src=0)
    shared = box[0]
    if isinstance(shared, str):
        raise BenchError(shared) if rank.writes_the_run else RefusedByRank0(shared)
    copy_gbps = shared.pop("copy_gbps_by_rank")[rank.rank]
    return Start(**shared, copy_gbps=copy_gbps, **(opened or {}))


def _open_run(hellos: list[dict], plan: SweepPlan | None, resume: str | None, out_dir: Path, interpret: bool,
              command: str, run_id: str | None, replicate: bool) -> dict:
    """Rank 0: the run started (or resumed) on the gathered devices, and what every rank is told: the plan, the
    devices, each rank's cells and copy bandwidth."""
    from .baseline import save_baselines  # here: it defines a Triton kernel, to be loaded after use_interpreter

    labels = [hello["label"] for hello in hellos]
    dropped = None
    if resume is None:
        save_baselines(out_dir, [hello["baseline"] for hello in hellos if not hello["baseline"]["reused"]])
        entries = [{"rank": r, "label": hello["label"], "device": hello["device"],
                    "copy_gbps": dict(hello["baseline"]["reference_gbps"]),
                    "copy_baseline": {k: hello["baseline"][k] for k in ("measured_at", "reference_gbps")}}
                   for r, hello in enumerate(hellos)]
        run, meta = run_life.start_run(plan, out_dir, hellos[0]["baseline"], interpret, command, run_id, entries,
                                    replicate)
    else:
        run, meta, plan, dropped = run_life.resume_run(resume, out_dir, interpret, on_ranks=True)
        _check_same_devices(run, meta, hellos, interpret)
    entries = {entry["label"]: entry for entry in meta["devices"]}
    for r, hello in enumerate(hellos):
        entries[hello["label"]].update(rank=r, clocks_before=hello["clocks_before"], status="running")
    meta.update(status="running")
    run.write_meta(meta)
    shared = {"plan": plan, "labels": labels, "shares": share_out(plan, run.rows(), labels, meta["placement"]),
              "copy_gbps_by_rank": [entries[label]["copy_gbps"] for label in labels]}
    return {"shared": shared, "run": run, "meta": meta, "dropped": dropped}


def _check_same_devices(run: Run, meta: dict, hellos: list[dict], interpret: bool) -> None:
    measured = {entry["label"]: entry["device"] for entry in meta["devices"]}
    here = {hello["label"]: hello["device"] for hello in hellos}
    same = measured.keys() == here.keys() and (
        interpret or all(devices.same_device(measured[label], here[label]) for label in here))
    if not same:
        listed = ", ".join(f"{label} ({device.get('name')})" for label, device in measured.items())
        raise BenchError(f"run {run.id} was measured on {listed}; resume it on the same devices "
                         f"(--gpus {len(measured)} on that machine), or start a new sweep")


def share_out(plan: SweepPlan, rows, labels: list[str], placement: str) -> list[list[sweep.TodoCell]]:
    """Each rank's cells. Replicated: every cell not yet measured on the rank's device. Sharded: the cells not yet
    measured, dealt out in turn in sweep order, so that every rank gets narrow and wide rows alike; a cell that an
    interrupted run measured in part goes to the device that measured it, so that its variants and peers are
    compared on one device (dealt in turn, a cell begun on one device was finished on another)."""
    if placement == "replicated":
        return [sweep.todo_cells(plan, rows[rows["device"] == label]) for label in labels]
    measured_on = {(str(r.dtype), str(r.M), str(r.N)): getattr(r, "device", None) for r in rows.itertuples()}
    shares, dealt = [[] for _ in labels], 0
    for cell in sweep.todo_cells(plan, rows):
        owner = measured_on.get((str(cell[0]), str(cell[1]), str(cell[2])))
        if owner in labels:
            shares[labels.index(owner)].append(cell)
        else:
            shares[dealt % len(labels)].append(cell)
            dealt += 1
    return shares


def row_key(row: dict) -> tuple:
    return row["variant"], row.get("pass", "forward"), row["dtype"], int(row["M"]), int(row["N"])


def measure_share(start: Start, rank: Rank, interpret: bool, write_row: Callable[[dict], None],
                  advance: Callable[[str], None]) -> dict:
    """Measure this rank's cells, each row naming the device. An exception that escapes a cell (an out-of-memory
    making its input, a lost device) ends the share: its unmeasured rows are written FAIL with the error. Returns
    how the share ended: {"status": "complete"} or {"status": "failed", "error": …}."""
    written = set()
    label, cells = rank.label, start.shares[rank.rank]

    def write(row: dict) -> None:
        write_row({**row, "device": label})
        written.add(row_key(row))

    try:
        sweep.measure_cells(cells, start.plan, write, start.copy_gbps, interpret, advance)
    except dist.DistError:
        raise  # the store of the rows is gone (torchrun stopping): the device did not fail
    except Exception as err:
        error = sweep.error_line(err)
        for row in sweep.failed_rows(cells, written, f"{label} failed: {error}", start.plan.op):
            write(row)
            advance(f"{label} failed")
        return {"status": "failed", "error": error}
    return {"status": "complete"}


class Silence:
    """How long, as seen from here, each watched rank has given no sign of life (its counter in the store
    unchanged): a local clock, so that the nodes' clocks need not agree."""

    def __init__(self, store: dist.Store, ranks: list[int]):
        self.store = store
        now = time.monotonic()
        self.seen = {r: (self._count(r), now) for r in ranks}

    def _count(self, rank: int) -> int:
        return int(self.store.add(f"alive/{rank}", 0))

    def seconds(self, rank: int) -> float:
        count, since = self.seen[rank]
        now, latest = time.monotonic(), self._count(rank)
        if latest != count:
            self.seen[rank] = (latest, now)
            return 0.0
        return now - since


def sign_of_life(store: dist.Store, rank: int) -> None:
    store.add(f"alive/{rank}", 1)


class Poster:
    """A rank's side of the row stream: each row into the store as soon as it exists, then how the share ended."""

    def __init__(self, store: dist.Store, rank: int):
        self.store, self.rank, self.posted = store, rank, 0

    def post(self, row: dict) -> None:
        self.store.set(f"row/{self.rank}/{self.posted}", json.dumps(row))
        self.posted += 1
        self.store.add(f"rows/{self.rank}", 1)  # after the row itself: rank 0 reads only rows that exist
        sign_of_life(self.store, self.rank)

    def end(self, how: dict) -> None:
        self.store.set(f"end/{self.rank}", json.dumps(how))
        sign_of_life(self.store, self.rank)


class Collector:
    """Rank 0's side of the row stream: writes the other ranks' rows to the run as they come, notes how each rank's
    share ended, and names a rank silent past the timeout hung (its unmeasured rows written FAIL)."""

    def __init__(self, store: dist.Store, run: Run, start: Start, timeout_s: float, advance: Callable[[str], None]):
        self.store, self.run, self.start, self.timeout_s, self.advance = store, run, start, timeout_s, advance
        others = list(range(1, len(start.labels)))
        self.read = {r: 0 for r in others}
        self.written: dict[int, set] = {r: set() for r in others}
        self.ends: dict[int, dict] = {}
        self.silence = Silence(store, others)

    def collect(self) -> None:
        """Write every row posted so far; note the ranks that ended, and those silent past the timeout."""
        sign_of_life(self.store, 0)
        for r in self.read:
            if r in self.ends:
                continue
            ended = self.store.check([f"end/{r}"])  # before the count: an ended rank has posted all its rows
            posted = int(self.store.add(f"rows/{r}", 0))
            for i in range(self.read[r], posted):
                row = json.loads(self.store.get(f"row/{r}/{i}"))
                self.store.delete_key(f"row/{r}/{i}")
                self.run.append(row)
                self.written[r].add(row_key(row))
                self.advance(f"{row['device']} {row['dtype']} {row['M']}×{row['N']} {row['variant']}")
            self.read[r] = posted
            if ended:
                self.ends[r] = json.loads(self.store.get(f"end/{r}"))
            elif self.silence.seconds(r) > self.timeout_s:
                self._hung(r)

    def _hung(self, rank: int) -> None:
        label = self.start.labels[rank]
        error = f"nothing from it for {self.timeout_s:g} s (--rank-timeout)"
        for row in sweep.failed_rows(self.start.shares[rank], self.written[rank], f"{label} hung: {error}",
                                     self.start.plan.op):
            self.run.append({**row, "device": label})
            self.advance(f"{label} hung")
        self.ends[rank] = {"status": "hung", "error": error}

    def wait(self) -> None:
        """Collect until every other rank has ended or been named hung."""
        while any(r not in self.ends for r in self.read):
            self.collect()
            time.sleep(POLL_S)


def measure_on_ranks(rank: Rank, store: dist.Store, start: Start, interpret: bool, timeout_s: int,
                     on_start: Callable[[int], None], advance: Callable[[str], None]) -> dict | None:
    """Measure this rank's share. Rank 0 writes every rank's rows as they come and returns the run's final
    metadata, each device's `status` in it (complete, failed, hung, interrupted, did not finish); the others
    return None once rank 0 has closed the run (RankHung when rank 0 went silent past the timeout)."""
    if not rank.writes_the_run:
        poster = Poster(store, rank.rank)
        how = measure_share(start, rank, interpret, poster.post, lambda what: None)
        poster.end({**how, "clocks_after": devices.clocks(interpret)})
        _wait_for_rank0(store, start.labels[0], timeout_s)
        return None

    run, meta = start.run, start.meta
    on_start(sum(sweep.row_count(share) for share in start.shares))
    collector = Collector(store, run, start, timeout_s, advance)

    def write_row(row: dict) -> None:
        run.append(row)
        collector.collect()

    signal.signal(signal.SIGTERM, _interrupt)  # torchrun stops the ranks with SIGTERM: keep what was measured
    try:
        how = measure_share(start, rank, interpret, write_row, advance)
        collector.ends[0] = {**how, "clocks_after": devices.clocks(interpret)}
        collector.wait()
    except BaseException:
        try:
            collector.collect()  # the rows the others posted before the stop
        except Exception:
            pass  # torchrun may have closed the store already
        _finish(meta, start.labels, {0: {"status": "interrupted"}, **collector.ends}, "interrupted")
        run.write_meta(meta)
        raise
    _finish(meta, start.labels, collector.ends, "complete")
    run.write_meta(meta)
    store.set("closed", "1")
    return meta


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _finish(meta: dict, labels: list[str], ends: dict[int, dict], status: str) -> None:
    by_label = {labels[r]: how for r, how in ends.items()}
    for entry in meta["devices"]:
        entry.update(by_label.get(entry["label"], {"status": "did not finish"}))
    meta.update(status=status, finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))


def _wait_for_rank0(store: dist.Store, label: str, timeout_s: int) -> None:
    silence = Silence(store, [0])
    while not store.check(["closed"]):
        if silence.seconds(0) > timeout_s:
            raise RankHung(f"rank 0 ({label}), which writes the run, has given no sign of life for {timeout_s} s: "
                             "stopping the job; the rows it wrote are kept (finish with --resume)")
        time.sleep(POLL_S)


def device_troubles(meta: dict) -> list[str]:
    """One line for each device of the run that did not finish its share normally."""
    return [f"{entry['label']} {entry['status']}" + (f": {entry['error']}" if entry.get("error") else "")
            + ("; its unmeasured cells are FAIL" if entry["status"] in ("failed", "hung") else "")
            for entry in meta.get("devices", []) if entry.get("status") not in ("complete", None)]


def any_hung(meta: dict) -> bool:
    return any(entry.get("status") == "hung" for entry in meta.get("devices", []))
