"""masking.phased_rows as a launch makes the copies, by words (phase_copies_words_kernel) against an element at a
time (COPIES_BY_WORDS = False: phase_copies_kernel in COPIES_LAUNCH), alternating, ROUNDS times, timed with the
project's timer (L2 clean before each call): key-padded's mask at 8192x50257 (128 rows of 50257 bytes; 8 copies
under bf16 x, 4 under fp32) and biased rows/64's bf16 bias (128 rows, 8 copies).

    python3 words-ab.py
"""

import torch

from softmax_bench.kernels import masking
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=25, rep_ms=100, l2="clean")
ROUNDS = 3
for name, dtype, vec in (("mask u8, 8 copies", torch.uint8, 8), ("mask u8, 4 copies", torch.uint8, 4),
                         ("bias bf16, 8 copies", torch.bfloat16, 8)):
    rows = (torch.rand(128, 50257, device="cuda") < 0.9).to(dtype)
    times = {True: [], False: []}
    for _ in range(ROUNDS):
        for by_words in (False, True):
            masking.COPIES_BY_WORDS = by_words
            times[by_words].append(1000 * measure(lambda: masking.phased_rows(rows, vec), SETTINGS, False).ms)
    masking.COPIES_BY_WORDS = True
    by_words = masking.phased_rows(rows, vec)
    masking.COPIES_BY_WORDS = False
    assert torch.equal(by_words, masking.phased_rows(rows, vec)), name
    masking.COPIES_BY_WORDS = True
    print(f"{name}: an element at a time {' '.join(f'{t:.1f}' for t in times[False])} µs; "
          f"by words {' '.join(f'{t:.1f}' for t in times[True])} µs")
