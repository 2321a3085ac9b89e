"""test_a_shared_mask_is_read_where_it_is[log_softmax-(1, 1, 4)-32769] failed on the H200 with cluster.LOG_AS_FORM on
(the log_softmax of a shared mask off x's 16-byte grid not bit for bit the expanded mask's). On the CPU, config_for
gives both the same configuration with the switch on or off (shared: fp32-held, 8 × 8; expanded: packed, 8 × 4), so
the prediction is that the switch does not matter: count the elements that differ, over seeds, with it off and on.
    PYTHONPATH=. python3 evidence/experiments/2026-12-03-session24/shared-mask-log.py"""
import torch

import softmax_bench
from softmax_bench.dispatch import clear_caches
from softmax_bench.kernels import cluster

N = 32769
for mask_shape in ((1, 1, 4), (2, 1, 1), (1, 3, 1)):
    for log_as_form in (False, True):
        cluster.LOG_AS_FORM = log_as_form
        clear_caches()
        differing = []
        for seed in range(12):
            torch.manual_seed(seed)
            x = torch.randn(2, 3, 4, N, dtype=torch.bfloat16, device="cuda")
            keep = torch.rand(*mask_shape, N, device="cuda") > 0.3
            keep[..., 0] = True
            y = softmax_bench.log_softmax(x, scale=0.125, mask=keep, variant="cluster")
            expanded = softmax_bench.log_softmax(x, scale=0.125, mask=keep.expand(x.shape).contiguous(),
                                                 variant="cluster")
            differing.append(int((y != expanded).sum()))
        print(mask_shape, "LOG_AS_FORM", log_as_form, "elements differing a seed:", differing, flush=True)
