"""The phase copies as they were made before the seventy-eighth session (torch's strided copy_), patched into
masking for an A/B against phase_copies_kernel in one call: SWEEP_SET="import runpy; runpy.run_path('THIS')"."""

import math

import torch

from softmax_bench.kernels import masking


def phased_rows(rows: torch.Tensor, vec: int) -> torch.Tensor:
    G, N = rows.shape
    unit = math.lcm(vec, 16 // rows.element_size())
    L = -(-(N + vec) // unit) * unit
    phased = torch.empty(G * vec, L, dtype=rows.dtype, device=rows.device)
    phased.as_strided((G, vec, N), (vec * L, L + 1, 1)).copy_(rows[:, None, :].expand(G, vec, N))
    return phased


masking.phased_rows = phased_rows
