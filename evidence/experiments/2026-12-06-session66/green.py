"""softmax-bench's CLI on a share of the GPU's SMs, through a CUDA green context (torch.cuda.green_contexts).

    python green.py SMS sweep ARGS...   the CLI, every launch on SMS SMs (0: the whole GPU, no green context)
    python green.py SMS sms             which SMs a grid of 4096 programs ran on, as a check that the share holds
    python green.py SMS SCRIPT.py ARGS  a probe script, every launch on SMS SMs

Why: an H200 has the H100's 132 SMs at the same clock and ~1.4x its memory bandwidth, so each of its SMs must keep
~1.4x the bytes in flight. An H100 held to ~132/1.4 SMs asks the same of each SM (docs/perf-notes.md, sixty-sixth
session): a proxy, to be checked against cells measured on the H200, for the cells whose gap only the H200 shows.
"""
import sys

import torch
import triton
import triton.language as tl


def enter_green_context(sms: int) -> None:
    from torch.cuda.green_contexts import GreenContext

    torch.zeros(1, device="cuda")  # the primary context first (the green context retains it)
    global _context  # held for the process's life: destroyed, its launches would fall back to the whole GPU
    _context = GreenContext.create(num_sms=sms, device_id=torch.cuda.current_device())
    if hasattr(_context, "Stream"):  # torch ≥ 2.12: launches go to a stream of the context
        torch.cuda.set_stream(_context.Stream())
    else:  # torch 2.10–2.11 (set_context; make_current in 2.9): the context pushed, launches on its default stream
        (getattr(_context, "set_context", None) or _context.make_current)()


@triton.jit
def _record_sm(out_ptr):
    sm = tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r,r", [tl.program_id(0)], dtype=tl.int32, is_pure=False,
                                  pack=1)
    tl.store(out_ptr + tl.program_id(0), sm)


def sms_used() -> int:
    out = torch.full((4096,), -1, dtype=torch.int32, device="cuda")
    _record_sm[(4096,)](out, num_warps=1)
    torch.cuda.synchronize()
    return int(out.unique().numel())


if __name__ == "__main__":
    sms = int(sys.argv.pop(1))
    if sms:
        enter_green_context(sms)
    if sys.argv[1:] == ["sms"]:
        print(f"asked {sms or 'all'}: a grid of 4096 programs ran on {sms_used()} SMs "
              f"(the GPU has {torch.cuda.get_device_properties(0).multi_processor_count})")
        sys.exit(0)
    if sys.argv[1].endswith(".py"):
        import runpy

        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
        sys.exit(0)
    from softmax_bench.cli import app

    sys.argv[0] = "softmax-bench"
    app()
