"""softmax-bench: row softmax kernels in Triton, and an instrument that measures them against a device copy."""

from . import library  # noqa: F401  registers softmax_bench::softmax and ::log_softmax with torch
from .dispatch import SoftmaxInputError, auto_choice, log_softmax, softmax
from .kernels import Backward, Traffic, Variant, backwards, variants

__all__ = ["softmax", "log_softmax", "variants", "backwards", "auto_choice", "Variant", "Backward", "Traffic",
           "SoftmaxInputError"]
__version__ = "0.1.0"
