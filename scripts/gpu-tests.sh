#!/usr/bin/env bash
# The test suite on a GPU machine, in parts that each take under 8 minutes on an H200 (README, "Tests on a GPU").
#   scripts/gpu-tests.sh PART [pytest options…]    PART: kernels, backward, cluster, sweeps, instrument, or all
#   scripts/gpu-tests.sh --list                     each part's files
# kernels: every variant's numbers, fused forms and the bias, correct rounding, torch's OpInfo samples, a peer
# suite's properties, cross-entropy; backward: gradients, log_softmax, torch.compile, replayed calls, a small Llama
# trained with the fused loss; cluster: the Gluon kernels (Triton ≥ 3.8, sm_90; skipped elsewhere);
# sweeps: the CLI's sweeps, timed on the GPU, on one device and several; instrument: every other test file (plots,
# check, explain, bad input), so that a new file is in a part.
# With pytest-xdist installed (the test extra), a part runs in GPU_TEST_WORKERS processes (default 8): the time
# is mostly kernel compilation, which is per process and on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A PARTS=(
  [kernels]="tests/test_kernels.py tests/test_fusion.py tests/test_bias.py tests/test_rounding.py
             tests/test_torch_samples.py tests/test_peer_properties.py tests/test_cross_entropy.py"
  [backward]="tests/test_backward.py tests/test_log_softmax.py tests/test_compile.py tests/test_replay.py
              tests/test_launcher.py tests/test_replayed_cxx.py tests/test_real_model.py"
  [cluster]="tests/test_cluster.py tests/test_cluster_backward.py"
  [sweeps]="tests/test_cli.py tests/test_many_devices.py tests/test_sweep_passes.py"
)
# shellcheck disable=SC2086  # split into words: a part's files may span lines
named=" $(printf '%s ' ${PARTS[*]})"
PARTS[instrument]=$(for f in tests/test_*.py; do [[ $named == *" $f "* ]] || printf '%s ' "$f"; done)
PARTS[all]=tests
part=${1:-}
if [[ $part == --list ]]; then  # each part and its files, a line a part
  for name in kernels backward cluster sweeps instrument; do echo "$name:" ${PARTS[$name]}; done
  exit 0
fi
if [[ -z $part || -z ${PARTS[$part]+set} ]]; then
  echo "usage: scripts/gpu-tests.sh PART [pytest options];" \
    "PART is one of: kernels backward cluster sweeps instrument all" >&2
  exit 2
fi
shift
workers=()
if python3 -c "import xdist" 2>/dev/null; then workers=(-n "${GPU_TEST_WORKERS:-8}"); fi
# shellcheck disable=SC2086  # the part's files are words
exec python3 -m pytest -q -p no:cacheprovider "${workers[@]}" ${PARTS[$part]} "$@"
