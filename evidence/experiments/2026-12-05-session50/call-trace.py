"""Issue 29: what Python runs in one compiled call, compiled_op against torch_compile (softmax 64x4000 bf16). Each
peer is made and warmed as host-cost.py's rows are, then one call is traced with sys.setprofile: every Python
function entered and every C function called from Python, in order. The timing of compiled-parts.py says where the
µs go (dynamo and AOTAutograd's wrappers 0.4-6.9 µs more for compiled_op, the launch 3.4-5.0); this says what code
is run there that torch_compile's call does not run.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session50/call-trace.py OUT_DIR

writes OUT_DIR/trace-PEER.txt (the calls in order, indented by depth) and prints, per peer, the calls by part of
the call (the file each is in), then the functions compiled_op's call enters more often than torch_compile's.
"""

import sys
from collections import Counter
from pathlib import Path

import torch

from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input


def trace(fn) -> list[tuple[int, str, str]]:
    events: list[tuple[int, str, str]] = []
    depth = 0

    def profile(frame, event, arg):
        nonlocal depth
        if event == "call":
            code = frame.f_code
            events.append((depth, "py", f"{Path(code.co_filename).name}:{code.co_name}"))
            depth += 1
        elif event == "return":
            depth -= 1
        elif event == "c_call":
            events.append((depth, "c", getattr(arg, "__qualname__", None) or getattr(arg, "__name__", repr(arg))))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return events


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = cell_input(64, 4000, torch.bfloat16 if device == "cuda" else torch.float32, device)
    print(f"torch {torch.__version__}, {device}")
    models = {name: PEERS[name].make(PLAIN) for name in ("torch_compile", "compiled_op")}
    for model in models.values():  # the second make() reset dynamo: each compiles again here
        for _ in range(50):
            model(x)
    if device == "cuda":
        torch.cuda.synchronize()
    counts = {}
    for name, model in models.items():
        events = trace(lambda: model(x))
        (out / f"trace-{name}.txt").write_text("".join(f"{'  ' * d}{kind} {what}\n" for d, kind, what in events))
        counts[name] = Counter(f"{kind} {what}" for _, kind, what in events)
        files = Counter(what.split(":")[0] if kind == "py" else "(C)" for _, kind, what in events)
        print(f"\n{name}: {sum(k == 'py' for _, k, _ in events)} Python calls, "
              f"{sum(k == 'c' for _, k, _ in events)} C calls")
        for file, n in files.most_common(25):
            print(f"  {n:4d}  {file}")
    print("\nentered more often by compiled_op's call than torch_compile's (compiled_op, torch_compile):")
    a, b = counts["compiled_op"], counts["torch_compile"]
    for what in sorted(set(a) | set(b), key=lambda w: b[w] - a[w]):
        if a[what] != b[what]:
            print(f"  {a[what]:3d} {b[what]:3d}  {what}")


if __name__ == "__main__":
    main()
