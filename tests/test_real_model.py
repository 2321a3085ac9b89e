"""A LlamaForCausalLM from a small random config (no weights downloaded) trained a few steps with the fused loss
swapped in by one line, against the same model and steps with transformers' own loss: the losses and every
parameter's gradient agree. Needs the `hf` extra (transformers); on CPU the loss runs through the interpreter."""

import pytest
import torch

import softmax_bench

from .conftest import DEVICE

transformers = pytest.importorskip("transformers")
STEPS = 3


def tiny_llama(vocab_size: int) -> torch.nn.Module:
    config = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to(DEVICE)


def train(model, input_ids, labels) -> list[tuple[float, dict]]:
    """(loss, every parameter's gradient) of STEPS steps of SGD."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    steps = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = model(input_ids=input_ids, labels=labels).loss
        loss.backward()
        steps.append((loss.item(), {name: p.grad.clone() for name, p in model.named_parameters()}))
        optimizer.step()
    return steps


@pytest.mark.parametrize("vocab_size", [160, 4097])  # one chunk; a partial second chunk of fp32 logits
def test_a_few_training_steps_match_transformers_loss(vocab_size):
    generator = torch.Generator().manual_seed(vocab_size)
    input_ids = torch.randint(0, vocab_size, (2, 12), generator=generator).to(DEVICE)
    labels = input_ids.clone()
    labels[0, :3] = -100  # a padded prompt
    theirs = train(tiny_llama(vocab_size), input_ids, labels)
    model = tiny_llama(vocab_size)
    model.loss_function = softmax_bench.causal_lm_loss  # the one line
    ours = train(model, input_ids, labels)
    for (their_loss, their_grads), (our_loss, our_grads) in zip(theirs, ours):
        assert our_loss == pytest.approx(their_loss, rel=1e-5)
        for name, grad in their_grads.items():
            torch.testing.assert_close(our_grads[name], grad, atol=1e-6, rtol=1e-4, msg=name)
