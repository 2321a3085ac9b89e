"""softmax-bench: row softmax kernels in Triton, and an instrument that measures them against a device copy."""

import os
import signal
import sys


def _stop_while_starting(signum, frame):
    """A Ctrl-C before the CLI has loaded: one line (none from a rank, whose launcher speaks), exit 130."""
    if "LOCAL_RANK" not in os.environ:
        os.write(2, b"softmax-bench: interrupted while starting; nothing was run\n")
    os._exit(130)


# The command line (`softmax-bench`, `python -m softmax_bench`, a rank of --gpus) spends its first seconds importing
# torch and Triton: a Ctrl-C there would print an import's traceback. cli.py gives Ctrl-C back to Python once loaded.
if (os.path.basename(sys.argv[0]) == "softmax-bench" or sys.argv[0] == "-m") and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _stop_while_starting)

if os.environ.get("TRITON_INTERPRET") == "1":  # the CPU interpreter, at a launch's cost and not a helper call's
    from .interpreter import (index_with_one_element_scalars, patch_language_once_a_launch, round_bf16_to_nearest,
                              skip_the_dropped_overflow_check)

    patch_language_once_a_launch()
    skip_the_dropped_overflow_check()
    round_bf16_to_nearest()
    index_with_one_element_scalars()

from . import library  # noqa: F401  registers softmax_bench::softmax and ::log_softmax with torch
from .cross_entropy import CrossEntropyLoss, causal_lm_loss, cross_entropy
from .dispatch import SoftmaxInputError, auto_choice, log_softmax, softmax
from .kernels import Backward, Traffic, Variant, backwards, variants

__all__ = ["softmax", "log_softmax", "cross_entropy", "CrossEntropyLoss", "causal_lm_loss", "variants", "backwards",
           "auto_choice", "Variant", "Backward", "Traffic", "SoftmaxInputError"]
__version__ = "0.1.0"
