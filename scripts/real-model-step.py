"""A causal LM's training step with each loss (issue 27's real model): a LlamaForCausalLM from a random config (no
weights downloaded), in bf16, its `loss_function` set to transformers' own (ForCausalLMLoss: the logits upcast to
fp32), to softmax_bench.causal_lm_loss (the one documented line), or to one around Liger's cross-entropy
(LigerCrossEntropyFunction, labels shifted as transformers shifts them). Each step: forward with labels, backward,
an SGD update. The losses at the first step are checked against transformers' own (same weights and batch); then
each loss's steps are timed (CUDA events around a step, after warm-up steps), the losses taking their rounds in turn
so that a slow spell falls on all alike, and the peak memory of a step is read. Rows of CSV: loss, round, step_ms,
peak_gib, first_loss.

    PYTHONPATH=. python3 scripts/real-model-step.py OUT.csv [--vocab 128256] [--tokens 8192] [--hidden 2048]
        [--layers 2] [--rounds 5] [--steps 5]

Without a GPU it runs a tiny model through Triton's interpreter (TRITON_INTERPRET=1, set here) in fp32, which says
only that the script runs.
"""

import argparse
import csv
import os
import statistics
import time

import torch

ON_GPU = torch.cuda.is_available()
if not ON_GPU:
    os.environ["TRITON_INTERPRET"] = "1"  # before softmax_bench (and Triton's kernels) load

import softmax_bench  # noqa: E402

transformers = __import__("transformers")


def liger_loss_function():
    """transformers' loss_function signature around LigerCrossEntropyFunction, or None where Liger is missing."""
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    except ImportError:
        return None

    def loss(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, shift_labels=None, **kwargs):
        if shift_labels is None:
            shift_labels = torch.nn.functional.pad(labels, (0, 1), value=ignore_index)[..., 1:]
        logits, shift_labels = logits.reshape(-1, vocab_size), shift_labels.reshape(-1).to(logits.device)
        reduction = "sum" if num_items_in_batch is not None else "mean"
        result = LigerCrossEntropyFunction.apply(logits, shift_labels, None, ignore_index, 0.0, 0.0, reduction)
        value = result[0] if isinstance(result, tuple) else result
        return value / num_items_in_batch if num_items_in_batch is not None else value

    return loss


def model_of(args, dtype: torch.dtype, device: str) -> torch.nn.Module:
    config = transformers.LlamaConfig(vocab_size=args.vocab, hidden_size=args.hidden,
                                      intermediate_size=2 * args.hidden, num_hidden_layers=args.layers,
                                      num_attention_heads=max(args.hidden // 128, 1),
                                      num_key_value_heads=max(args.hidden // 512, 1),
                                      max_position_embeddings=args.seq)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to(device=device, dtype=dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--vocab", type=int, default=128256 if ON_GPU else 300)
    parser.add_argument("--tokens", type=int, default=8192 if ON_GPU else 16, help="batch × sequence")
    parser.add_argument("--seq", type=int, default=2048 if ON_GPU else 8)
    parser.add_argument("--hidden", type=int, default=2048 if ON_GPU else 32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5 if ON_GPU else 1)
    parser.add_argument("--steps", type=int, default=5 if ON_GPU else 1, help="timed steps a round")
    args = parser.parse_args()
    device, dtype = ("cuda", torch.bfloat16) if ON_GPU else ("cpu", torch.float32)
    generator = torch.Generator().manual_seed(args.vocab)
    input_ids = torch.randint(0, args.vocab, (args.tokens // args.seq, args.seq), generator=generator).to(device)
    labels = input_ids.clone()
    labels[:, : args.seq // 8] = -100  # a prompt that is not trained on
    losses = {"transformers": None, "softmax_bench": softmax_bench.causal_lm_loss, "liger": liger_loss_function()}
    models, first = {}, {}
    for name, loss_function in losses.items():
        if name != "transformers" and loss_function is None:
            print(f"{name}: not installed here; skipped", flush=True)
            continue
        model = model_of(args, dtype, device)
        if loss_function is not None:
            model.loss_function = loss_function
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
        models[name] = (model, optimizer)
        first[name] = model(input_ids=input_ids, labels=labels).loss.item()  # same weights and batch for all
    for name, value in first.items():
        agree = abs(value - first["transformers"]) <= 2e-3 * abs(first["transformers"])
        print(f"{name}: first loss {value:.6f} ({'agrees with' if agree else 'DIFFERS from'} transformers')",
              flush=True)

    def step(model, optimizer):
        optimizer.zero_grad(set_to_none=True)
        model(input_ids=input_ids, labels=labels).loss.backward()
        optimizer.step()

    rows = []
    for name, (model, optimizer) in models.items():  # warm-up: compiles, autotunes, allocator pools
        for _ in range(2):
            step(model, optimizer)
    for round_ in range(args.rounds):
        for name, (model, optimizer) in models.items():
            if ON_GPU:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
            began = time.perf_counter()
            for _ in range(args.steps):
                step(model, optimizer)
            if ON_GPU:
                end.record()
                torch.cuda.synchronize()
                ms = start.elapsed_time(end) / args.steps
                peak = torch.cuda.max_memory_allocated() / 2**30
            else:
                ms, peak = (time.perf_counter() - began) * 1000 / args.steps, float("nan")
            rows.append({"loss": name, "round": round_, "step_ms": round(ms, 3), "peak_gib": round(peak, 3),
                         "first_loss": first[name]})
    with open(args.csv, "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    base = statistics.median(r["step_ms"] for r in rows if r["loss"] == "transformers")
    where = "GPU" if ON_GPU else "CPU (interpreted)"
    print(f"{where}: vocab {args.vocab}, {args.tokens} tokens, hidden {args.hidden}, {args.layers} layers, {dtype}; "
          f"median step of {args.rounds} rounds of {args.steps}:")
    for name in models:
        ms = statistics.median(r["step_ms"] for r in rows if r["loss"] == name)
        peak = max(r["peak_gib"] for r in rows if r["loss"] == name)
        print(f"  {name:14} {ms:9.2f} ms  ({base / ms:.2f}× transformers')  peak {peak:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
