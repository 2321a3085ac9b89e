"""gradient_kernel (the loss's gradient written again from the logits, for a loss gradient other than 1), compiled
for sm_90 without a GPU, beside cross_entropy_kernel's chunked step: registers, bytes spilled, SASS instructions a
thread, and the PTX's 16-byte (v4) and 16-bit global loads and stores, for plain rows and rows with every option
(class weights, label smoothing, a softcap, the z-loss). At a commit without gradient_kernel, the step alone
(gradient-sm90-before.txt: 99ccc20, before the softcap's tanh).

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session44/gradient-sm90.py OUT_DIR   (no TRITON_INTERPRET)
"""

import re
import subprocess
import sys

import torch
from triton.compiler import ASTSource

from softmax_bench.kernels import cross_entropy
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, registers_of, sass_instructions, signature_of

POINTERS = {"target_ptr": "*i64", "loss_ptr": "*fp32", "lse_ptr": "*fp32", "scale_ptr": "*fp32", "dloss_ptr": "*fp32",
            "weights_ptr": "*fp32", "smoothing": "fp32", "z_loss": "fp32", "softcap": "fp32"}
for V in (50257, 128256):
    for every_option in (False, True):
        for dtype, torch_dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            config = cross_entropy.launch_config(V, torch_dtype, True, column_terms=True)
            flags = {"VEC": 16 // torch_dtype.itemsize, "HAS_WEIGHT": every_option, "HAS_SMOOTHING": every_option,
                     "HAS_SOFTCAP": every_option, "HAS_Z": every_option}
            kernels = {"gradient_kernel": {**flags, "BLOCK": config["BLOCK"], "UNLESS_ONE": True},
                       "cross_entropy_kernel (chunked step)": {**flags, "BLOCK": config["BLOCK"], "WITH_GRAD": True,
                                                               "PER_LANE": config["PER_LANE"], "ON_CHIP": False}}
            for name, constexprs in kernels.items():
                kernel = getattr(cross_entropy, name.split()[0], None)
                if kernel is None:
                    continue
                types = {**POINTERS, "x_ptr": "*" + dtype, "dx_ptr": "*" + dtype, "weight_ptr": "*" + dtype}
                aligned = {(kernel.arg_names.index(arg),): [["tt.divisibility", 16]] for arg in ("x_ptr", "dx_ptr")}
                source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                                   attrs=aligned)
                path = f"{sys.argv[1]}/{name.split()[0]}-{dtype}-{V}-{every_option}.ptx"
                ptx, report, spilled, _ = compiled_for_sm90(source, {"num_warps": config["num_warps"]}, path)
                sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
                counts = [len(re.findall(pattern, ptx)) for pattern in (
                    r"ld\.global[.\w:]*\.v4\.", r"st\.global[.\w:]*\.v4\.", r"ld\.global[.\w:]*\.b16 ",
                    r"st\.global[.\w:]*\.b16 ")]
                print(f"V={V} {dtype} {'every option' if every_option else 'plain':12s} {name:36s} "
                      f"{registers_of(report, path)} registers, {spilled} spilled, {len(sass_instructions(sass))} "
                      "SASS; v4 loads {}, stores {}; 16-bit loads {}, stores {}".format(*counts))
