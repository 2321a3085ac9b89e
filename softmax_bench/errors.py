"""The library's one exception for bad usage or unusable input: the CLI prints its message and exits 2."""


class BenchError(Exception):
    """A message for the user that says what went wrong and what to do."""
