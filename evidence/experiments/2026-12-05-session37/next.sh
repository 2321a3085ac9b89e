#!/usr/bin/env bash
# The thirty-seventh session's device steps: bash evidence/experiments/2026-12-05-session37/next.sh STEP
# This session had no device either. Its changes run under the thirty-sixth session's steps, unchanged, which this
# dispatches (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], as the thirty-fifth session's next.sh says):
# own-launcher (issue 29): with SOFTMAX_BENCH_OWN_LAUNCHER=1 a recorded call's plan is now a launcher.Replay (the
#   plan run from C: y allocated, the stream asked, its Launches called). test_launcher's GPU test checks that a
#   plan is a Replay when the launcher is on and gives Triton's launch's output bit for bit. Prediction
#   (replayed-glue.csv: on this session's CPU, against a driver that does nothing, a replayed call 4.05 µs with
#   Triton's launch, 2.86 with the Launch called from Python, 2.69 with the Replay): auto's softmax, scaled-masked
#   and log-softmax host µs 1.3–1.8 lower with the launcher on than off (1.36 here, × 1.0–1.3 for the H200's
#   host); "replayed launch alone" as the thirty-sixth session predicted (~4.0, the Launch alone); every output
#   bit for bit.
# eager-grad (issue 29): an eager step's backward no longer goes through once_differentiable's wrapper in a plain
#   backward (grad-call-cost.txt: the step 41.4 → 35.1 µs on this CPU, torch's 23.8). Prediction: softmax_bench's
#   eager step ≤ 1.3× torch's host µs at 64×4000 bf16 in each form (the thirty-sixth session's bar, its margin
#   larger); the rows through the op ≥ 2× ours; the backward part of the suite passes (test_compile's
#   differentiate-twice test among them).
# host-cost (in own-launcher's runs) now also has the rows "a new width a call": torch.softmax and auto, each call on
#   an input a column wider than the last (a decoding step's rows; no plan serves them). Prediction: auto 60–90 µs
#   of host a call (15 µs of our Python here × 1.3–1.5, Triton's binding 35–60, the plan recorded) against
#   torch.softmax's ~7: 8–13×, the cost a decoding loop pays today. With SOFTMAX_BENCH_FAST_LAUNCHES=1 the binding's
#   part should go (worth a run of host-cost --row "new width" with it on, after fast-launches passes).
# Every other step (fast-launches, staged, x-staged, mask-early, ...) as the thirty-sixth session's next.sh has it.
exec bash evidence/experiments/2026-12-04-session36/next.sh "$@"
