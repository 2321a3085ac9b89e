"""The loss's kernel with a softcap (every option on: class weights, label smoothing, a softcap, the z-loss, the
gradient), compiled for sm_90 without a GPU: registers, bytes spilled and SASS instructions a thread, for the
forty-fourth session's tanh (libdevice's tanhf, where 1 − 2 / (e^(2u) + 1) was).

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session44/softcap-sm90.py OUT_DIR   (no TRITON_INTERPRET)
"""

import subprocess
import sys

import torch
from triton.compiler import ASTSource

from softmax_bench.kernels import cross_entropy
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, registers_of, sass_instructions, signature_of

kernel = cross_entropy.cross_entropy_kernel
for V in (32000, 128256):
    for dtype, torch_dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        config = cross_entropy.launch_config(V, torch_dtype, True, True)
        constexprs = {"BLOCK": config["BLOCK"], "PER_LANE": config["PER_LANE"], "ON_CHIP": config["ON_CHIP"],
                      "VEC": 16 // torch_dtype.itemsize, "HAS_WEIGHT": True, "HAS_SMOOTHING": True,
                      "HAS_SOFTCAP": True, "HAS_Z": True, "WITH_GRAD": True}
        types = {"x_ptr": "*" + dtype, "dx_ptr": "*" + dtype, "weight_ptr": "*" + dtype, "target_ptr": "*i64",
                 "loss_ptr": "*fp32", "lse_ptr": "*fp32", "scale_ptr": "*fp32", "smoothing": "fp32",
                 "z_loss": "fp32", "softcap": "fp32"}
        aligned = {(kernel.arg_names.index(name),): [["tt.divisibility", 16]] for name in ("x_ptr", "dx_ptr")}
        source = ASTSource(fn=kernel, signature=signature_of(kernel, constexprs, types), constexprs=constexprs,
                           attrs=aligned)
        path = f"{sys.argv[1]}/ce-{dtype}-{V}.ptx"
        _, report, spilled, _ = compiled_for_sm90(source, {"num_warps": config["num_warps"]}, path)
        sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
        print(f"V={V} {dtype}: {registers_of(report, path)} registers, {spilled} bytes spilled, "
              f"{len(sass_instructions(sass))} SASS instructions")
