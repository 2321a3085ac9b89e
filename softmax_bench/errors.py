"""The library's one exception for bad usage or unusable input: the CLI prints its message and exits 2."""


class BenchError(Exception):
    """A message for the user that says what went wrong and what to do."""


class RefusedByRank0(BenchError):
    """Under torchrun, rank 0 refused the sweep and said why; the other ranks stop without saying it again."""


class RankHung(BenchError):
    """Under torchrun, a rank gave no sign of life for the rank timeout: this rank stops (exit 1), and torchrun stops
    the others."""
