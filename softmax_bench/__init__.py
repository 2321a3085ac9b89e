"""softmax-bench: row softmax kernels in Triton, and an instrument that measures them against a device copy."""

from .dispatch import SoftmaxInputError, auto_choice, softmax
from .kernels import Traffic, Variant, variants

__all__ = ["softmax", "variants", "auto_choice", "Variant", "Traffic", "SoftmaxInputError"]
__version__ = "0.1.0"
