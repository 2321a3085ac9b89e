"""Issue 29: what a compiled call runs on the host, torch_compile's graph against compiled_op's (softmax_bench's
peers as host-cost.py times them; 64×4000 bf16, softmax and scaled-masked): the source of each generated graph's
`call` (the Python Inductor writes: allocations, launches and their arguments) and the guards dynamo checks before
it (torch._dynamo's guard manager, as printed), written to OUT_DIR, one file a peer and op.

    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/compiled-code.py OUT_DIR
Written in the fifty-sixth session."""
import inspect
import sys
from pathlib import Path

import torch
from torch._inductor.codecache import PyCodeCache

from softmax_bench import ops, peers

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
x = torch.randn(64, 4000, dtype=torch.bfloat16, device="cuda")
print("torch", torch.__version__, torch.cuda.get_device_name(), flush=True)
for op_name in ("softmax", "scaled-masked"):
    fusion = ops.get_op(op_name).fusion_for(x)
    for peer in ("torch_compile", "compiled_op"):
        before = len(PyCodeCache.modules)
        call = peers.PEERS[peer].make(fusion)
        for _ in range(3):
            call(x)
        torch.cuda.synchronize()
        text = []
        for module in PyCodeCache.modules[before:]:
            if hasattr(module, "call"):
                text.append(f"# {module.__file__}\n" + inspect.getsource(module.call))
            kernels = [line for line in open(module.__file__) if ".run(" in line or "async_compile.triton(" in line]
            text.append("".join(kernels))
        try:  # the guards of the frame dynamo compiled last (torch 2.11's cache entries)
            from torch._dynamo.eval_frame import _debug_get_cache_entry_list
            compiled = call if hasattr(call, "_torchdynamo_orig_callable") else next(
                cell.cell_contents for cell in call.__closure__ if hasattr(cell.cell_contents, "_torchdynamo_orig_callable"))
            code = compiled._torchdynamo_orig_callable.__code__
            entries = _debug_get_cache_entry_list(code)
            text.append(f"# {len(entries)} cache entries\n")
            for entry in entries:
                text.append(str(entry.guard_manager) + "\n")
        except Exception as e:  # noqa: BLE001
            text.append(f"# guards not read: {type(e).__name__}: {e}\n")
        path = out / f"compiled-code-{peer}-{op_name}.txt"
        path.write_text("\n".join(text))
        print(peer, op_name, "→", path.name, sum(t.count("\n") for t in text), "lines", flush=True)
