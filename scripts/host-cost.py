"""Host cost per call of softmax_bench.softmax (issue 16): each variant, plain and with fusions, beside
torch.softmax, a bare Triton launch of fused's kernel and the peers (torch.compile, Liger, Quack) where installed.

Each row: `--warmup` calls, then `--rounds` rounds of `--calls` calls with time.perf_counter around each round; the
rows that launch kernels (torch.softmax's too) take their rounds in turn, so a slow spell falls on all alike.
host_us: per call, a round issued while the GPU sleeps (no launch waits for it): what the host spends issuing a
call. call_us: per call, a round with the GPU free, until it finished too (what a stream of eager calls costs:
the host's time or the GPU's, the larger). Both from the median round. vs_torch: host_us / torch's call of the op
(torch.log_softmax's for log-softmax, torch.softmax's for the others).
Each output is checked against a reference once before timing.

A second call of softmax_bench.softmax with an input like the first replays the first's launches
(softmax_bench.replay): the `softmax_bench` rows time that. The rows `a new width a call` time the calls no plan
serves: each on an input a column wider than the last, within x's power of two (a decoding step's attention rows,
a key longer each step), torch.softmax's and softmax_bench's taking their rounds in turn. Rows that run no kernel,
20000 calls a round: `no launch` — softmax_bench.softmax the long way (a call of a new kind) with every Triton
kernel replaced by a launch that does nothing (softmax_bench's own Python, without Triton's launcher); `dispatch` —
steps of the dispatch alone (the variant's choice, the fusion, the rows); `replay` — steps of a replayed call.

With no GPU the kernels run through Triton's interpreter (TRITON_INTERPRET=1, set here) on a tiny shape: the run
is labelled interpreted, and its numbers say only how much Python a call runs. `--dispatch-as GPU_NAME` times the
dispatch rows as on that GPU (its auto table; torch.cuda's name lookup answered without one), for a CPU machine.

    PYTHONPATH=. python3 scripts/host-cost.py OUT.csv                       # GPU: 64x4000 bf16, 400 calls
    PYTHONPATH=. python3 scripts/host-cost.py OUT.csv --shape 4096x4000
    PYTHONPATH=. python3 scripts/host-cost.py OUT.csv --op softmax --row compiled_op --row torch_compile
    PYTHONPATH=. python3 scripts/host-cost.py OUT.csv --only-python --dispatch-as "NVIDIA H200"   # CPU
    SOFTMAX_BENCH_OWN_LAUNCHER=0 PYTHONPATH=. python3 scripts/host-cost.py OUT.csv     # replays by Triton's launch
"""

import argparse
import csv
import os
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import partial
from typing import Callable

import torch

ON_GPU = torch.cuda.is_available()
if not ON_GPU:
    os.environ["TRITON_INTERPRET"] = "1"  # before softmax_bench (and Triton's kernels) load
    torch.set_num_threads(1)  # tiny tensors: no thread pool to wake, only the Python and dispatch a call runs

import softmax_bench  # noqa: E402
from softmax_bench import dispatch, library, replay  # noqa: E402
from softmax_bench.kernels import (DTYPES, PLAIN, Fusion, cluster, fused, next_power_of_2, online, split,  # noqa: E402
                                   two_pass)
from softmax_bench.kernels.masking import fusion_args  # noqa: E402
from softmax_bench.ops import OPS, call_kwargs, reference, user_call  # noqa: E402
from softmax_bench.peers import PEERS, PeerUnavailable  # noqa: E402
from softmax_bench.providers import cell_input, check  # noqa: E402
from softmax_bench.run_life import project_settings, settings_text  # noqa: E402
from softmax_bench.sweep import error_line  # noqa: E402

COLUMNS = ["what", "op", "dtype", "M", "N", "calls", "host_us", "call_us", "vs_torch", "interpreted", "note",
           "settings", "host_us_rounds"]
# settings: the process's project_settings() (SOFTMAX_BENCH_*, Inductor's static launch). host_us_rounds: a launching
# row's host µs in each round, in the order taken (its group's rows took theirs in turn: round k of one row and of
# another ran within one pass, so scripts/host-bar.py divides them round by round).
CHEAP_CALLS = 20000  # a round of a row that runs no kernel
# A round of calls that launch kernels stays under the ~1000 launches a CUDA stream queues before a launch blocks:
# behind a sleep of 200 µs a call (~400 K cycles at the H200's 1.98 GHz), none waits for the GPU.
LAUNCH_CALLS = 400
SLEEP_CYCLES_PER_CALL = 400_000
KERNELS = {fused: "fused_rows_kernel", two_pass: "two_pass_kernel", online: "online_kernel", split: "split_kernel",
           cluster: "cluster_kernel"}


@dataclass
class Row:
    what: str
    op: str
    fn: Callable[[], object] | None  # None: not run here, `note` says why
    fusion: Fusion | None = None  # what to check the output against (None: not checked)
    note: str = ""
    cheap: bool = False  # runs no kernel: CHEAP_CALLS a round, and no launch stubbed
    new_kinds: int = 0  # calls a round of a row whose every call is of a new kind (new_kind_rows'), timed with its like


def one_round(fn, calls: int, launches: bool) -> tuple[float, float]:
    """(host µs, call µs) per call of one round of `calls` calls of fn.

    host: the round issued while the GPU sleeps through it (torch.cuda._sleep queued first), so that no launch
    waits for the GPU: what the host spends issuing a call, whatever the kernel's time. call: a round with the GPU
    free, until it finished: the calls' rate when host and GPU keep up with each other (the larger of the two)."""
    sync = torch.cuda.synchronize if ON_GPU else (lambda: None)
    sync()
    if ON_GPU and launches:  # (a row that launches nothing would wait for the sleep: 4 s a round of 20000 calls)
        torch.cuda._sleep(SLEEP_CYCLES_PER_CALL * calls)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - start) / calls * 1e6
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return host, (time.perf_counter() - start) / calls * 1e6


def interleaved(fns: list, calls: int, warmup: int, rounds: int,
                launches: bool = True) -> list[tuple[float, float, list[float]]]:
    """(host µs, call µs, each round's host µs) of each fn, the first two the median of `rounds` rounds; the rounds
    of all fns taken in turn (round 1 of each, then round 2, ...), so that a slow spell of the machine falls on every
    row alike, torch's too."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, kept in zip(fns, times):
            kept.append(one_round(fn, calls, launches))
    median = lambda values: sorted(values)[len(values) // 2]  # noqa: E731
    return [(median([h for h, _ in kept]), median([c for _, c in kept]), [h for h, _ in kept]) for kept in times]


@contextmanager
def no_launch():
    """Every Triton kernel of the variants replaced by one whose launch does nothing (of the kernel's own type, so
    that softmax_bench still sees whether it is interpreted)."""
    dispatch.clear_caches()  # no plan recorded before: stubbed launches compile nothing, so none is recorded
    saved = {module: getattr(module, name) for module, name in KERNELS.items() if hasattr(module, name)}
    for module, kernel in saved.items():
        no_op = type("NoLaunch", (type(kernel),), {"__getitem__": lambda self, grid: lambda *args, **kwargs: None})
        setattr(module, KERNELS[module], object.__new__(no_op))
    try:
        yield
    finally:
        for module, kernel in saved.items():
            setattr(module, KERNELS[module], kernel)


def softmax_kwargs(x: torch.Tensor, op: str) -> dict:
    """The op's scale, mask and causal as softmax_bench.softmax takes them, for an M×N x."""
    return call_kwargs(OPS[op].fusion_for(x))


def replayed_launch(x: torch.Tensor) -> Callable[[], None] | None:
    """The launches of fused's replay plan for x, with x and an output put in their places once."""
    for _ in range(2):  # called once, then recorded
        softmax_bench.softmax(x, variant="fused")
    plan = replay.PLANS.get(replay.plan_key(x, -1, None, None, False, "fused"))
    if plan is None:  # interpreted: nothing recorded
        return None
    if not isinstance(plan, replay.Plan):  # (OWN_LAUNCHER) softmax_bench.launcher's Replay
        y, stream = torch.empty_like(x), plan.plan.stream_of(plan.plan.device_index)
        return lambda: [launch(stream, x, y, None, None) for launch in plan.launches]
    y, stream, steps = torch.empty_like(x), plan.stream_of(plan.device_index), []
    tensors = (x, y, None)  # as Plan gives them
    for launch, template, slots in plan.steps:
        args = template.copy()
        for position, source in slots:
            args[position] = tensors[source]
        steps.append((launch, args))
    return lambda: [launch(stream, args) for launch, args in steps]


def new_kind_rows(x: torch.Tensor, calls: int, warmup: int, rounds: int):
    """torch.softmax and softmax_bench.softmax (auto), each call on an input a column wider than the last, within
    x's power of two (the kernels' configuration unchanged): every call is of a new kind, as a decoding step's
    attention rows, a key longer each step, are, and no plan kept serves it; and auto again keeping a plan at every
    such call (plan_each_call: the A/B of replay.CALLED_ONCE). Each row's calls a round are as many as x's power of
    two holds widths for."""
    M, N = x.shape
    top = next_power_of_2(N)
    widths = range(top // 2 + 1, top + 1)
    calls = min(calls, (len(widths) - warmup - 1) // (2 * rounds))
    needed = warmup + 2 * rounds * calls + 1  # the calls a row makes: warm-up, each round's two, the first

    def inputs(rows: int) -> list[torch.Tensor]:
        return [cell_input(rows, width, x.dtype, x.device) for width in widths[len(widths) - needed:]]

    for what, call, rows in (("torch.softmax, a new width a call", partial(torch.softmax, dim=-1), M),
                             ("softmax_bench auto, a new width a call", softmax_bench.softmax, M),
                             # its own inputs (one row more): kinds the row above has not called
                             ("auto, a new width a call, a plan each", plan_each_call, M + 1)):
        if calls <= 0:
            yield Row(what, "softmax", None, note=f"x's power of two holds too few widths for {rounds} rounds")
            continue
        following = iter(inputs(rows)).__next__
        yield Row(what, "softmax", lambda call=call, following=following: call(following()), new_kinds=calls,
                  note=f"{calls} calls a round, each on an input a column wider (a decoding step's rows): no "
                       "replay; vs_torch against torch.softmax's row of new widths")


class EveryKey(set):
    """A replay.CALLED_ONCE that holds every key: each call of a kind records and keeps its plan."""

    def __contains__(self, key) -> bool:
        return True


def plan_each_call(x: torch.Tensor) -> torch.Tensor:
    """softmax_bench.softmax(x) keeping a plan at the first call of a kind, as before replay.CALLED_ONCE (fortieth
    session): the A/B of what a call of a new width saves by making none."""
    called_once, replay.CALLED_ONCE = replay.CALLED_ONCE, EveryKey()
    try:
        return softmax_bench.softmax(x)
    finally:
        replay.CALLED_ONCE = called_once


def calls_with_launches(x: torch.Tensor, ops: list[str]):
    M, N = x.shape
    registry = softmax_bench.variants()
    too_wide = registry["fused"].unsupported(N, x.dtype)
    if too_wide:
        yield Row("bare fused launch", "softmax", None, note=too_wide)
    else:
        y = torch.empty_like(x)
        config = fused.launch_config(M, N, x.dtype)
        grid = ((M + config["ROWS"] - 1) // config["ROWS"],)
        args = fusion_args(PLAIN, x)
        yield Row("bare fused launch", "softmax", lambda: fused.fused_rows_kernel[grid](
            x, y, M, N, x.stride(0), y.stride(0), **args, **config), note="kernel[grid](...), output preallocated")
    yield Row("replayed launch alone", "softmax", None if too_wide else replayed_launch(x),
              note=too_wide or "fused's recorded launch, its arguments ready, no output allocated: the floor of a "
              f"replayed call ({'softmax_bench.launcher' if replay.OWN_LAUNCHER else 'Triton'}'s launch)")
    needing = x.detach().requires_grad_()  # a call with a gradient to record: autograd's node, no backward
    yield Row("grad torch.softmax", "softmax", partial(torch.softmax, needing, -1), PLAIN,
              note="x needing a gradient (vs_torch: against the call without)")
    yield Row("grad softmax_bench auto", "softmax", partial(softmax_bench.softmax, needing), PLAIN,
              note="x needing a gradient: the ops' autograd formula without the op (library.EagerAutograd)")
    for op in ops:
        fusion = OPS[op].fusion_for(x)
        for name in ["auto", *registry]:
            reason = None if name == "auto" else registry[name].unsupported(N, x.dtype)
            note = f"picks {dispatch.resolve_variant(name, N, x.dtype, x.device, log=fusion.log).name}" \
                if name == "auto" else ""
            yield Row(f"softmax_bench {name}", op, None if reason else user_call(x, fusion, name), fusion,
                      reason or note)
        for peer in PEERS.values():
            if fusion.plain or peer.fuses:
                try:
                    yield Row(f"peer {peer.name}", op, partial(peer.make(fusion), x), fusion, peer.summary)
                except PeerUnavailable as e:
                    yield Row(f"peer {peer.name}", op, None, note=str(e))


def calls_without_launches(x: torch.Tensor, ops: list[str], as_gpu: str | None):
    N = x.shape[1]
    registry = softmax_bench.variants()
    for op in ops:
        fusion = OPS[op].fusion_for(x)
        for name in ["auto", *(name for name, v in registry.items() if v.triton)]:
            if name == "auto" or registry[name].supports(N, x.dtype):
                yield Row(f"no launch {name}", op, user_call(x, fusion, name), cheap=True,
                          note="softmax_bench's Python, the long way (a call of a new kind: no replay)")
    device, note = x.device, ""
    if as_gpu:
        torch.cuda.get_device_name = lambda device=None: as_gpu  # the table of that GPU, without one
        torch.cuda.is_current_stream_capturing = lambda: False
        device, note = torch.device("cuda", 0), f"dispatched as on {as_gpu} (its auto table; no GPU used)"
    for name in ("auto", "fused", "two_pass"):
        call = partial(dispatch.resolve_variant, name, N, x.dtype, device)
        yield Row(f"dispatch resolve_variant({name})", "softmax", call, note=note, cheap=True)
    yield Row("dispatch auto_choice", "softmax", partial(dispatch.auto_choice, N, x.dtype, device), note=note,
              cheap=True)
    mask = softmax_kwargs(x, "scaled-masked")["mask"]
    yield Row("dispatch fusion_for", "softmax", partial(dispatch.fusion_for, x, -1, None, None, False), cheap=True)
    yield Row("dispatch fusion_for", "scaled-masked", partial(dispatch.fusion_for, x, -1, 0.125, mask, False),
              cheap=True)
    yield Row("dispatch as_rows", "softmax", partial(dispatch.as_rows, x), cheap=True)
    yield Row("dispatch through_op", "softmax", partial(dispatch.through_op, x), cheap=True,
              note="whether the call goes through the registered op (compiling, or a gradient to record)")
    key = partial(replay.plan_key, x, -1, None, None, False, "auto")
    yield Row("replay plan lookup", "softmax", lambda: replay.PLANS.get(key()), cheap=True,
              note="the key of a call and its look-up")
    # a scale no row records: the key built and looked up, no plan found to run (on a GPU the auto rows' is kept)
    yield Row("replay replayed", "softmax", partial(replay.replayed, x, -1, None, 0.999, None, False, "auto", False,
                                                    None), cheap=True,
              note="what softmax asks first: a gradient to record or not, the key, its look-up (a miss: no launch)")
    yield Row("replay output", "softmax", partial(torch.empty_like, x), cheap=True,
              note="y allocated (torch.empty_like of a contiguous x, y of its dtype: Plan.like_x)")
    if ON_GPU:
        from triton.runtime import driver

        yield Row("replay stream", "softmax", partial(driver.active.get_current_stream, x.get_device()), cheap=True,
                  note="the current stream's handle, as a replayed call asks for it")


def launch_line(rows: list[dict], static: list[bool]) -> str | None:
    """How Inductor launched our kernels in compiled_op's graphs (static: a bool a launcher, True for its static
    launcher, False for Triton's: library.our_autotuners), beside compiled_op's timed rows (README, "The launch
    inside a compiled graph"); None where compiled_op was not timed or no graph launched one of ours."""
    timed = any(out["what"] == "peer compiled_op" and out["host_us"] is not None for out in rows)
    if not timed or not static:
        return None
    if all(static):
        return "compiled_op: Inductor launched softmax_bench's kernels through its static launcher, as its own"
    return (f"compiled_op: Inductor launched {static.count(False)} of softmax_bench's {len(static)} kernel launchers "
            "through Triton's launcher, its own through its static launcher (SOFTMAX_BENCH_STATIC_LAUNCH=0, or "
            "Inductor's check for a static launch refused them)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="where to write the rows")
    parser.add_argument("--shape", default=None, help="MxN (default 64x4000 on a GPU, 4x64 interpreted)")
    parser.add_argument("--dtype", default="bf16", choices=list(DTYPES))
    parser.add_argument("--calls", type=int, default=None,
                        help=f"timed calls a round (default {LAUNCH_CALLS}; 30 interpreted)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds a row (default 15: on the H200's host, auto's median of 5 rounds over torch's "
                             "was 0.84×, 0.94× and 1.23× in three processes)")
    parser.add_argument("--op", action="append", choices=list(OPS), help="ops to time (default: all)")
    parser.add_argument("--only-python", action="store_true", help="torch.softmax and the rows that run no kernel")
    parser.add_argument("--dispatch-as", metavar="GPU_NAME", help="dispatch as on this GPU (e.g. 'NVIDIA H200')")
    parser.add_argument("--row", action="append", metavar="TEXT",
                        help="time only the rows whose name holds TEXT (repeat; torch's own are always timed), "
                             "e.g. --row compiled_op --row 'softmax_bench auto'")
    args = parser.parse_args()
    if args.dispatch_as and ON_GPU:
        parser.error("--dispatch-as is for a machine with no GPU: on a GPU the dispatch rows use its own table")
    M, N = map(int, (args.shape or ("64x4000" if ON_GPU else "4x64")).lower().split("x"))
    calls = args.calls or (LAUNCH_CALLS if ON_GPU else 30)
    dtype = DTYPES[args.dtype]
    ops = args.op or list(OPS)
    x = cell_input(M, N, dtype, "cuda" if ON_GPU else "cpu")
    interpreted = not ON_GPU
    device = torch.cuda.get_device_name() if ON_GPU else "CPU (Triton interpreter)"
    print(f"{device}, torch {torch.__version__}, {args.dtype} {M}x{N}, {args.rounds} rounds of {calls} calls a row"
          + (": INTERPRETED, the numbers say how much Python a call runs" if interpreted else "")
          + "".join(f", {name}={value}" for name, value in project_settings().items()))
    print(f"{'what':34} {'op':14} {'host_us':>9} {'call_us':>9} {'vs_torch':>8}  note")
    todo = [Row("torch.softmax", "softmax", partial(torch.softmax, x, -1), PLAIN)]
    if "log-softmax" in ops:
        todo.append(Row("torch.log_softmax", "log-softmax", partial(torch.log_softmax, x, -1), Fusion(log=True)))
    todo += [] if args.only_python else list(calls_with_launches(x, ops))
    if not args.only_python and "softmax" in ops:
        todo += new_kind_rows(x, calls, args.warmup, args.rounds)
    todo += calls_without_launches(x, ops, args.dispatch_as)
    if args.row:
        todo = [row for row in todo if row.what.startswith("torch.") or any(text in row.what for text in args.row)]
    settings = settings_text()
    rows = [dict(what=row.what, op=row.op, dtype=args.dtype, M=M, N=N, calls=0, host_us=None, call_us=None,
                 vs_torch=None, interpreted=interpreted, note=row.note, settings=settings, host_us_rounds="")
            for row in todo]
    timed = []  # (row, its out) of the rows that launch kernels, checked: timed together, in turn
    new_kinds = []  # the same of the rows whose every call is of a new kind: timed together, after
    for row, out in zip(todo, rows):
        if row.fn is None:
            continue
        try:
            if row.fusion is not None:
                precise = torch.float64 if interpreted else torch.float32
                wrong = check(row.fn().detach(), reference(x, row.fusion, precise), dtype)[1]  # (grad rows)
                if wrong is not None:
                    raise ValueError(f"wrong output: {wrong}")
            if row.cheap:  # no kernel: timed alone (the stubbed launches must not reach the other rows)
                stubbed = row.what.startswith("no launch")
                if stubbed:
                    row.fn()  # compiled, and split's occupancy known, before the launches are stubbed
                with no_launch() if stubbed else nullcontext():
                    (host, call, _), = interleaved([row.fn], CHEAP_CALLS, args.warmup, args.rounds, launches=False)
                out.update(calls=CHEAP_CALLS, host_us=host, call_us=call)
            else:
                row.fn()
                (new_kinds if row.new_kinds else timed).append((row, out))
        except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
            out["note"] = f"failed: {error_line(e)}"
    for group, group_calls in ((timed, calls), (new_kinds, new_kinds[0][0].new_kinds if new_kinds else 0)):
        if group:
            print(f"timing {len(group)} rows that launch kernels, round by round ...", flush=True)
            fns = [row.fn for row, _ in group]
            for (row, out), (host, call, each) in zip(group, interleaved(fns, group_calls, args.warmup, args.rounds)):
                out.update(calls=group_calls, host_us=host, call_us=call,
                           host_us_rounds=" ".join(f"{us:.3f}" for us in each))
    # against torch's own call of the op: torch.log_softmax for log-softmax's rows, torch.softmax for the others
    # (of new widths for the rows of new widths)
    torch_us = {(out["op"], bool(row.new_kinds)): out["host_us"] for row, out in zip(todo, rows)
                if row.what.startswith("torch.")}
    for row, out in zip(todo, rows):
        if out["host_us"] is not None:
            versus = torch_us.get((out["op"], bool(row.new_kinds)), torch_us[("softmax", False)])
            out.update(host_us=round(out["host_us"], 2), call_us=round(out["call_us"], 2),
                       vs_torch=None if versus is None else round(out["host_us"] / versus, 2))
        versus_shown = "-" if out.get("vs_torch") is None else f"{out['vs_torch']:.2f}"  # torch's row failed: no ratio
        shown = "-" if out["host_us"] is None else f"{out['host_us']:9.2f} {out['call_us']:9.2f} {versus_shown:>8}"
        print(f"{row.what:34} {row.op:14} {shown:>28}  {out['note']}", flush=True)
    line = launch_line(rows, [getattr(launcher, "_is_static", False)
                              for tuner in library.our_autotuners() for launcher in tuner.launchers])
    if line:
        print(line)
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"written to {args.csv}")


if __name__ == "__main__":
    main()
