"""softmax-bench: row softmax kernels in Triton, and an instrument that measures them against a device copy."""

import os

if os.environ.get("TRITON_INTERPRET") == "1":  # the CPU interpreter, at a launch's cost and not a helper call's
    from .interpreter import patch_language_once_a_launch, skip_the_dropped_overflow_check

    patch_language_once_a_launch()
    skip_the_dropped_overflow_check()

from . import library  # noqa: F401  registers softmax_bench::softmax and ::log_softmax with torch
from .cross_entropy import CrossEntropyLoss, causal_lm_loss, cross_entropy
from .dispatch import SoftmaxInputError, auto_choice, log_softmax, softmax
from .kernels import Backward, Traffic, Variant, backwards, variants

__all__ = ["softmax", "log_softmax", "cross_entropy", "CrossEntropyLoss", "causal_lm_loss", "variants", "backwards",
           "auto_choice", "Variant", "Backward", "Traffic", "SoftmaxInputError"]
__version__ = "0.1.0"
