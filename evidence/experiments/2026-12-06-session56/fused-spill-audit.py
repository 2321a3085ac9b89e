"""Every fused forward launch of the grid's causal, scaled, scaled-masked and biased cells, softmax and log, bf16 and
fp32, N = 512 … 32768 (M = 2^27 / N; 4096 at N = 4000), as fused.launch configures it (its launch intercepted on a
meta tensor), compiled for sm_90 without a GPU: warps, ptxas's register cap, registers, bytes spilled, and the
switches that shape the tile.
    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/fused-spill-audit.py [N ...]
Written in the fifty-sixth session (output: out-cpu/fused-spill-audit.txt, at 3d52c57's FOLD_SCALES)."""
import inspect
import sys

import torch
from triton.compiler import ASTSource
from softmax_bench.kernels import fused
from softmax_bench import ops
from tests import compile_sm90 as c

captured = []
fused.launch_kernel = lambda kernel, grid, *args, **kwargs: captured.append((kernel, args, kwargs))
WIDTHS = [int(w) for w in sys.argv[1:]] or [512, 1024, 2048, 4000, 4096, 8192, 16384, 32768]
for dtype in (torch.bfloat16, torch.float32):
    for N in WIDTHS:
        M = 4096 if N == 4000 else 2**27 // N
        x = torch.empty(M, N, dtype=dtype, device="meta")
        for op in ("causal", "scaled", "scaled-masked", "biased"):
            for log in (False, True):
                try:
                    fusion = ops.get_op(op).fusion_for(torch.empty(M, N, dtype=dtype), log=log)
                except Exception as e:
                    print(op, "fusion", e); continue
                captured.clear()
                try:
                    fused.launch(x, fusion)
                except Exception as e:
                    print(op, N, "launch", type(e).__name__, e); continue
                kernel, args, kwargs = captured[-1]
                names = kernel.arg_names
                values = dict(zip(names, args)) | kwargs
                constexprs = {p.name: values.get(p.name, p.default) for p in kernel.params if p.is_constexpr}
                constexprs = {k: v for k, v in constexprs.items() if v is not inspect.Parameter.empty}
                if values.get("bias_ptr") is None:
                    constexprs["bias_ptr"] = None
                tname = {torch.bfloat16: "bf16", torch.float32: "fp32"}[dtype]
                types = {"x_ptr": "*" + tname, "y_ptr": "*" + tname, "mask_ptr": "*u8" if fusion.mask is not None else "*" + tname,
                         "bias_ptr": "*" + tname, "scale": "fp32"}
                sig = {a: "constexpr" if a in constexprs else types.get(a, "i32") for a in names}
                divisible = [a for a in ("x_ptr", "y_ptr", "mask_ptr", "bias_ptr", "M", "N", "stride_x", "stride_y", "causal_m", "mask_stride", "bias_stride")
                             if a in sig and sig[a] != "constexpr" and (a.endswith("ptr") or N % 16 == 0)]
                source = ASTSource(fn=kernel, signature=sig, constexprs=constexprs,
                                   attrs={(names.index(a),): [["tt.divisibility", 16]] for a in divisible})
                options = {"num_warps": kwargs["num_warps"], **({"maxnreg": kwargs["maxnreg"]} if kwargs.get("maxnreg") else {})}
                path = f"/tmp/s56/audit-{tname}-{N}-{op}-{int(log)}.ptx"
                try:
                    ptx, report, spill, _ = c.compiled_for_sm90(source, options, path)
                except Exception as e:
                    print(tname, N, op, log, "compile", type(e).__name__, str(e)[:200]); continue
                regs = c.registers_of(report, path)
                sw = {k: v for k, v in constexprs.items() if k in ("BLOCK_N", "ROWS", "HALVINGS", "FOLD_SCALE", "EVICT", "MASK_SHARED")}
                print(f"{tname} {N:6} {op:14} {'log' if log else 'fwd'} warps {kwargs['num_warps']:2} cap {kwargs.get('maxnreg')} regs {regs:3} spill {spill:4} {sw}", flush=True)
