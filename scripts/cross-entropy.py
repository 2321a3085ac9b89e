"""The fused cross-entropy against its peers on a GPU (issue 27): each checked against torch's loss and gradient in
fp32, then timed with the project's timer; the forward as % of one read of the logits, the step (forward and
backward) as % of one copy of them, both against a copy timed in the same process.

    python3 scripts/cross-entropy.py OUT.csv [--dtype bf16|fp32] [--chunked-rows] [MxV ...]

Ours as the library runs it (vocabulary rows held across a cluster where the cluster variant runs and
kernels/cross_entropy.on_cluster sends them); --chunked-rows: with kernels/cross_entropy.CLUSTER_ROWS off, the
rows read in chunks (or held in one CTA), as before the fifteenth session.

ours_inplace: inplace_backward=True (the gradient over the logits, as Liger's). ours_dloss_0.3: our step with a
loss gradient of 0.3 (the backward writes the gradient again from the logits: kernels/cross_entropy.gradient).
"kernel" rows: our forward's launch alone with the gradient written (no autograd), as % of its own bytes' roofline
(kernels/cross_entropy.traffic: two reads and a write, or one of each for a row held on chip, at a copy's speed), to
split a step's time between the kernel and the rest; "gradient" rows: gradient_kernel alone at a loss gradient of
0.3, as % of a copy of the logits (one read, one write).
Peers: torch (F.cross_entropy on the logits), torch.compile (of F.cross_entropy(x.float(), t): transformers'
upcast), Liger (LigerCrossEntropyFunction) and Quack (quack.cross_entropy) where installed. Targets uniform at
random, every 7th ignored (-100). Rows of CSV: who, dtype, M, V, pass, ms, ms_p20, ms_p80, pct, max_err, status.
"""

import argparse

import torch
import torch.nn.functional as F

import softmax_bench
from config_timing import SETTINGS, copy_gbps, csv_rows
from softmax_bench.kernels import cross_entropy as kernel
from softmax_bench.timing import measure

SHAPES = ["8192x50257", "4096x128256", "2048x151936", "16384x32000"]
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def peers() -> dict:
    """name → loss(x, t), for the peers importable here."""
    found = {"ours": lambda x, t: softmax_bench.cross_entropy(x, t),
             "ours_inplace": lambda x, t: softmax_bench.cross_entropy(x, t, inplace_backward=True),
             "ours_dloss_0.3": lambda x, t: softmax_bench.cross_entropy(x, t) * 0.3,  # checked against 0.3 × torch's
             "torch": lambda x, t: F.cross_entropy(x, t),
             "torch_compile": torch.compile(lambda x, t: F.cross_entropy(x.float(), t))}
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction

        found["liger"] = lambda x, t: LigerCrossEntropyFunction.apply(x, t, None)[0]  # weight is positional
    except ImportError:
        pass
    try:
        from quack.cross_entropy import cross_entropy as quack_cross_entropy

        found["quack"] = lambda x, t: quack_cross_entropy(x, t)  # mean over the rows not ignored (-100)
    except ImportError:
        pass
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("shapes", nargs="*", default=SHAPES)
    parser.add_argument("--dtype", choices=DTYPES, default="bf16")
    parser.add_argument("--chunked-rows", action="store_true", help="kernels/cross_entropy.CLUSTER_ROWS off")
    args = parser.parse_intermixed_args()  # options anywhere: OUT --dtype fp32 SHAPES...
    if args.chunked_rows:
        kernel.CLUSTER_ROWS = False
    dtype = DTYPES[args.dtype]
    write = csv_rows(args.out, ["who", "dtype", "M", "V", "pass", "ms", "ms_p20", "ms_p80", "pct", "max_err",
                                "status"])
    for shape in args.shapes:
        M, V = (int(v) for v in shape.split("x"))
        x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
        t = torch.randint(0, V, (M,), device="cuda")
        t[::7] = -100
        x64 = x.float().clone().requires_grad_()  # a leaf of its own: .float() of fp32 logits is x itself
        expected = F.cross_entropy(x64, t)
        (expected_dx,) = torch.autograd.grad(expected, x64)
        nbytes = M * V * dtype.itemsize
        read_gbps, copy = copy_gbps(dtype, nbytes), copy_gbps(dtype, 2 * nbytes)
        for who, loss_of in peers().items():
            try:
                xg = x.clone().requires_grad_()
                loss = loss_of(xg, t)
                (dx,) = torch.autograd.grad(loss, xg)
                factor = 0.3 if who.endswith("0.3") else 1.0
                err = max((loss.float() - factor * expected).abs().item(),
                          (dx.float() - factor * expected_dx).abs().max().item())
                status = "ok" if err < 1e-2 else "FAIL"
            except Exception as e:  # a peer that refuses the shape
                write([who, args.dtype, M, V, "both", "", "", "", "", "", f"refuses: {type(e).__name__}"])
                continue
            forward = measure(lambda: loss_of(x, t), SETTINGS, interpret=False)

            scratch = x.clone()  # what a step overwrites when it writes the gradient in place (Liger, ours_inplace)

            def step():  # autograd.grad: .backward() on a leaf copies a gradient written over it (in place)
                xs = scratch.detach().requires_grad_()
                torch.autograd.grad(loss_of(xs, t), xs)

            both = measure(step, SETTINGS, interpret=False)
            write([who, args.dtype, M, V, "forward", forward.ms, forward.ms_p20, forward.ms_p80,
                   100 * nbytes / read_gbps / 1e6 / forward.ms, err, status])
            write([who, args.dtype, M, V, "step", both.ms, both.ms_p20, both.ms_p80,
                   100 * 2 * nbytes / copy / 1e6 / both.ms, err, status])
            print(f"{who:14s} {args.dtype} {M}x{V}: forward {forward.ms:.3f} ms, step {both.ms:.3f} ms, {status}",
                  flush=True)
        rows = x.view(M, V)
        fused = measure(lambda: kernel.launch(rows, t, None, -100, 0.0, 0.0, None, True, reduction="sum"), SETTINGS,
                        interpret=False)
        own_bytes = kernel.traffic(M, V, dtype, with_grad=True).total_bytes
        write(["ours", args.dtype, M, V, "kernel", fused.ms, fused.ms_p20, fused.ms_p80,
               100 * own_bytes / copy / 1e6 / fused.ms, "", "ok"])
        print(f"ours kernel    {args.dtype} {M}x{V}: forward with the gradient {fused.ms:.3f} ms", flush=True)
        _, lse, dx, _, scale = kernel.launch(rows, t, None, -100, 0.0, 0.0, None, True, reduction="mean")
        dloss = torch.tensor(0.3, device="cuda")
        again = measure(lambda: kernel.gradient(rows, t, None, lse, dloss, scale, -100, 0.0, 0.0, None, dx), SETTINGS,
                        interpret=False)
        pct_of_copy = 100 * 2 * nbytes / copy / 1e6 / again.ms  # one read and one write of the logits
        write(["ours", args.dtype, M, V, "gradient", again.ms, again.ms_p20, again.ms_p80, pct_of_copy, "", "ok"])
        print(f"ours gradient  {args.dtype} {M}x{V}: written again at 0.3 {again.ms:.3f} ms "
              f"({pct_of_copy:.1f} % of a copy)", flush=True)


if __name__ == "__main__":
    main()
