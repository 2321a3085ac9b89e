#!/usr/bin/env bash
# issue 26: the fused ops over the default grid, auto beside torch.compile (Triton 3.8), after the tenth session's
# cluster changes
for spec in "scaled-masked scaled-masked-h200-c" "causal causal-h200-c" "key-padded key-padded-h200"; do
  SWEEP_TIMEOUT=175 bash evidence/experiments/2026-12-01-session9/s5.sh $spec
done
