"""With no GPU, the Triton kernels run through Triton's CPU interpreter: set before softmax_bench loads them."""

import dataclasses
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from filelock import FileLock

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"
    # pytest-xdist starts a worker a core: on CPU a worker's torch, and the processes its tests start, then take one
    # thread, not one a core each (2 cores: the suite took 257 s with two threads a worker, 206–228 s with one)
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.setdefault("OMP_NUM_THREADS", "1").isdigit():
        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

import pytest  # noqa: E402
import triton  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from softmax_bench.cli import app  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# On CPU the CLI runs through Triton's interpreter; on a GPU the same tests run the real kernels.
MODE = ["--interpret"] if DEVICE == "cpu" else []
REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()


# Fixtures made once and read by many tests: the tests of each run on one pytest-xdist worker (`--dist loadgroup`,
# in pyproject.toml), so that it is made once (a module's fixture is made again on every worker its tests reach),
# and no other worker waits for it meanwhile: the smoke sweep (a minute of interpreter on CPU) and the
# multi-device runs of test_many_devices (15–20 s each).
SHARED_FIXTURES = {"smoke_run": "smoke", "sharded": "ranks", "replicated": "ranks", "killed": "ranks"}


# A test that counts what Triton ≥ 3.8's compiler makes of a kernel for sm_90 (the loads in flight at once, the
# instructions): the reference environment's code. Triton 3.6 builds the same kernels into other code.
TRITON_38 = tuple(int(part) for part in triton.__version__.split(".")[:2]) >= (3, 8)
SM90_CODE_OF_TRITON_38 = pytest.mark.skipif(
    not TRITON_38, reason=f"counts the sm_90 code Triton ≥ 3.8 builds; Triton {triton.__version__}'s is other code")


# A case that proves on CPU nothing a cheaper case does not (another width of the same code, compiled for sm_90 or
# interpreted): run on a GPU, where it is cheap and the GPU parts of the suite run it, and on CPU with --exhaustive.
EXHAUSTIVE = pytest.mark.exhaustive


def exhaustive_unless(kept, cases) -> list:
    """`cases` (tuples of a test's parameters) for parametrize, each case that `kept(*case)` does not keep marked
    EXHAUSTIVE; its id is its parameters', joined by "-"."""
    return [pytest.param(*case, id="-".join(map(str, case)), marks=() if kept(*case) else EXHAUSTIVE)
            for case in cases]


def pytest_addoption(parser):
    parser.addoption("--exhaustive", action="store_true",
                     help="on CPU, also run the cases marked exhaustive (a GPU machine runs them always)")


def pytest_configure(config):
    config.addinivalue_line("markers", "exhaustive: a case a cheaper one proves on CPU; run on a GPU or with "
                                       "--exhaustive")


def exhaustive_here(config) -> bool:
    return DEVICE == "cuda" or config.getoption("--exhaustive")


@pytest.fixture(scope="session")
def exhaustive(request) -> bool:
    """Whether this run takes the exhaustive cases (a GPU, or --exhaustive): for a fixture that makes cases."""
    return exhaustive_here(request.config)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the marks into each test's id
def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="exhaustive: a cheaper case proves this on CPU; run with --exhaustive")
    for item in items:
        groups = {SHARED_FIXTURES[f] for f in getattr(item, "fixturenames", ()) if f in SHARED_FIXTURES}
        for group in groups:
            item.add_marker(pytest.mark.xdist_group(group))
        if item.get_closest_marker("exhaustive") and not exhaustive_here(config):
            item.add_marker(skip)


def runnable_variants(triton_only: bool = False, zero_masked_only: bool = False) -> list[str]:
    """Names of the variants that run here (cluster needs Triton ≥ 3.8 and an sm_90 GPU: tests/test_cluster.py
    checks what it says elsewhere)."""
    import softmax_bench

    return [name for name, v in softmax_bench.variants().items()
            if v.supports(4096, torch.float32) and (v.triton or not triton_only)
            and (v.masked_rows_zero or not zero_masked_only)]


def triton_variants_here() -> list[str]:
    """The Triton variants that run here, cluster included where it runs (it takes only rows wider than
    runnable_variants asks about)."""
    import softmax_bench

    return [*runnable_variants(triton_only=True),
            *(["cluster"] if softmax_bench.variants()["cluster"].supports(65536, torch.bfloat16) else [])]


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    """Printed text with its line breaks undone: Rich wraps a title or caption at its table's width."""
    return " ".join(text.split())


def assert_usage_error(result, *words: str | tuple[str, ...]) -> None:
    """Exit 2, one line on stderr that says what is wrong, no traceback. A tuple of words: any one of them (click
    and Typer word a range or type error differently from version to version: typer 0.29 "Input should be greater
    than or equal to 1", 0.27 "-5 is not in the range x>=1")."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert "Value error" not in lines[0], lines[0]  # a parser's prefix, not ours
    for word in words:
        assert any(w in lines[0] for w in ((word,) if isinstance(word, str) else word)), lines[0]


@pytest.fixture
def device() -> str:
    return DEVICE


@pytest.fixture(autouse=True)
def _the_gpu_process_stays_off_the_interpreter():
    """On a GPU, a test that leaves TRITON_INTERPRET=1 behind (a CLI call with --interpret in this process) would
    have every kernel loaded after it run in the interpreter, in the tests that follow in this worker: that test
    fails instead (on the H200 such a leak made another test's copy baseline run interpreted for 240 s)."""
    yield
    if DEVICE == "cuda" and os.environ.pop("TRITON_INTERPRET", None) is not None:
        pytest.fail("this test set TRITON_INTERPRET in a GPU test process: run --interpret in a subprocess")


CACHED_GPU_BYTES_KEPT = 2 << 30


@pytest.fixture(autouse=True)
def _a_worker_gives_back_what_its_test_left_cached():
    """On a GPU, each xdist worker's caching allocator keeps the blocks its tests freed (a 2^31-element test
    frees 8 GiB): with 12 workers on an 80 GB H100, one held 28.5 GiB and another test's 594 MiB found no memory.
    A worker keeping more than CACHED_GPU_BYTES_KEPT unused after a test hands it back to the device."""
    yield
    if DEVICE == "cuda" and torch.cuda.is_initialized() \
            and torch.cuda.memory_reserved() - torch.cuda.memory_allocated() > CACHED_GPU_BYTES_KEPT:
        torch.cuda.empty_cache()


@dataclass
class Printed:
    """What a CLI call printed and returned, kept after the call: a CliRunner result's fields tests read."""

    exit_code: int
    output: str
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory, request):
    """One `sweep --preset smoke` (on CPU: `sweep --interpret`, whose default is the smoke preset), shared by the
    tests that read a fresh run: made once a session, by the first pytest-xdist worker to ask for it (a minute of
    interpreter on CPU), then copied into each worker's own folder, which its tests may change."""
    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker: the session's workers share the parent folder
        root = root.parent
    made, printed = root / "smoke-results", root / "smoke-printed.json"
    with FileLock(str(root / "smoke.lock")):
        if not printed.exists():
            result = invoke("sweep", *(MODE or ["--preset", "smoke"]), "--out", made)
            assert result.exit_code == 0, result.output
            printed.write_text(json.dumps(dataclasses.asdict(
                Printed(result.exit_code, result.output, result.stdout, result.stderr))))
    out_dir = tmp_path_factory.mktemp("results")
    shutil.copytree(made, out_dir, dirs_exist_ok=True)
    (run_dir,) = [p for p in out_dir.iterdir() if p.is_dir()]
    return out_dir, run_dir, Printed(**json.loads(printed.read_text()))
