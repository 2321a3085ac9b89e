"""scripts/gpu-tests.sh, which runs the suite on a GPU in parts: every test file is in exactly one part, and a
wrong part is refused with the list of parts; and the suite's xdist groups, each on one worker."""

import subprocess
from pathlib import Path

import pytest

from .conftest import REPO

SCRIPT = ["bash", str(REPO / "scripts" / "gpu-tests.sh")]


def test_every_test_file_is_in_exactly_one_part():
    listed = subprocess.run([*SCRIPT, "--list"], capture_output=True, text=True, check=True).stdout.splitlines()
    parts = {line.split(":")[0]: line.split(":")[1].split() for line in listed}
    assert set(parts) == {"kernels", "backward", "cluster", "sweeps", "instrument"}
    files = [f for part in parts.values() for f in part]
    assert sorted(files) == sorted(f"tests/{p.name}" for p in Path(REPO, "tests").glob("test_*.py"))


def test_an_unknown_part_is_refused_with_the_parts():
    done = subprocess.run([*SCRIPT, "everything"], capture_output=True, text=True)
    assert done.returncode == 2 and "kernels backward cluster sweeps instrument all" in done.stderr


def test_the_gpu_ci_job_runs_every_part():
    workflow = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    perf_job = workflow[workflow.index("\n  perf:"):]
    for part in ("kernels", "backward", "cluster", "sweeps", "instrument"):
        assert f"bash scripts/gpu-tests.sh {part}\n" in perf_job


@pytest.mark.xdist_group("suite")
def test_tests_of_one_xdist_group_are_sent_to_one_worker(request):
    """Under pytest-xdist's --dist loadgroup (pyproject's addopts) a test of a group carries the group in its id,
    which is what the scheduler sends to one worker by: the fixtures that compile for sm_90 or start torchrun once
    for their group rely on it. pytest 9.2 with pytest-xdist 3.8 silently drops it (pyproject pins pytest < 9.2)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist's workers under --dist loadgroup")
    assert request.node.nodeid.endswith("@suite"), request.node.nodeid
