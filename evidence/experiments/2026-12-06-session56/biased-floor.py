"""Issue 26's premise at the wide biased cells: can a kernel that moves biased softmax's bytes (x and the bias read,
y written: 3 tensors of x's size) run at 92 % of the cell's roofline, the time a copy (half read, half written)
takes per byte? On the H200 the cluster kernel's biased bf16 512×262144 reads 83.5 % of its roofline (fifty-fourth
session) and 80–85 % of a copy in every configuration cluster-configs.py tried (twenty-seventh session), where the
H100 reads 99. Timed in one process, each after a check against torch's result:
- torch's copy_ of the cell's two tensors' bytes (the roofline's basis, as the sweep times it: sweep.copy_timing);
- y = x + bias, three tensors: torch.add, and a Triton kernel of 16-byte vectors in 8 warps (8192 elements a program);
- the same Triton kernel as a copy (y = x, two tensors), against torch's copy_;
- softmax_bench.softmax(x, scale=0.125, bias=bias) as auto launches it (the cluster kernel), and its log.
% of the roofline: the bytes each moves over the copy's bandwidth, against its own time.

    python3 biased-floor.py [MxN:dtype ...]     (default: 512x262144:bf16 512x262144:fp32)
Written in the fifty-sixth session."""
import sys

import torch
import triton
import triton.language as tl

import softmax_bench
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=50)
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
BLOCK = 8192


@triton.jit
def add_kernel(x_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr, HAS_B: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    x = tl.load(x_ptr + offsets, mask=inside)
    if HAS_B:
        x = x + tl.load(b_ptr + offsets, mask=inside)
    tl.store(y_ptr + offsets, x, mask=inside)


def main() -> None:
    print("Triton", triton.__version__, torch.cuda.get_device_name(), flush=True)
    for cell in sys.argv[1:] or ["512x262144:bf16", "512x262144:fp32"]:
        shape, dtype_name = cell.split(":")
        M, N = map(int, shape.split("x"))
        dtype = DTYPES[dtype_name]
        x = torch.randn(M, N, dtype=dtype, device="cuda")
        bias = torch.randn(M, N, dtype=dtype, device="cuda")
        y = torch.empty_like(x)
        tensor_bytes = x.nbytes
        copy_ms = min(measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms for _ in range(3))
        gbps = 2 * tensor_bytes / copy_ms / 1e6
        grid = (triton.cdiv(M * N, BLOCK),)

        def triton_add(has_b: bool):
            add_kernel[grid](x, bias, y, M * N, BLOCK=BLOCK, HAS_B=has_b, num_warps=8)
            return y

        forms = {
            "torch copy_ (2 tensors)": (2, lambda: y.copy_(x), x),
            "Triton copy (2 tensors)": (2, lambda: triton_add(False), x),
            "torch.add (3 tensors)": (3, lambda: torch.add(x, bias, out=y), x + bias),
            "Triton add (3 tensors)": (3, lambda: triton_add(True), x + bias),
            "softmax_bench biased": (3, lambda: softmax_bench.softmax(x, scale=0.125, bias=bias),
                                     torch.softmax(x.float() * 0.125 + bias.float(), -1)),
            "softmax_bench biased log": (3, lambda: softmax_bench.log_softmax(x, scale=0.125, bias=bias),
                                         torch.log_softmax(x.float() * 0.125 + bias.float(), -1)),
        }
        print(f"{dtype_name} {M}x{N}: copy_ of {2 * tensor_bytes / 1e6:.0f} MB {copy_ms * 1e3:.1f} us, {gbps:.0f} GB/s",
              flush=True)
        for label, (tensors, call, expected) in forms.items():
            err = (call().float() - expected.float()).abs().max().item()
            figures = sorted(measure(call, SETTINGS, interpret=False).ms for _ in range(3))
            expected_ms = tensors * tensor_bytes / gbps / 1e6
            print(f"  {label:>26}: {figures[1] * 1e3:8.1f} us (of 3: {figures[0] * 1e3:.1f}-{figures[2] * 1e3:.1f}), "
                  f"{100 * expected_ms / figures[1]:5.1f} % of the roofline, max err {err:.2g}", flush=True)
        del x, bias, y, forms


if __name__ == "__main__":
    main()
