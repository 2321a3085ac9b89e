#!/usr/bin/env bash
# The forty-ninth session's device steps: bash evidence/experiments/2026-12-05-session49/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step as the forty-eighth
# session's next.sh has it (biased, biased-rule, biased-evict, host-bar, parts, configs, grids, hard-cells, …).
# First on any GPU (docs/perf-notes.md, forty-ninth session): `PART_TIMEOUT=250 next.sh parts kernels backward` (the
# first GPU run of allow_in_graph, 7e13a56), then `HOWS="torch torch torch" next.sh compiled-order` (prediction:
# compiled_op's whole - graph within ±2 µs of torch_compile's, from 3.7-6.9 over), then `next.sh host-bar`.
# compiled-parts (issue 29): compiled-parts.py in three processes: compiled_op's and torch_compile's host µs a call,
#   whole, Inductor's graph `call` alone, and that call with its launches stubbed. Prediction: whole - graph (dynamo's
#   guards and AOTAutograd's wrappers) is 1-3 µs larger for compiled_op (73 guard lines against 30); most of the
#   8-10 µs gap is graph - no-launch, the launch of fused_rows_kernel through Triton's launcher (19 arguments).
# compiled-order (issue 29): compiled-parts.py as made first, reversed, after the other two ops' peers, and both;
#   then host-cost.py's compiled rows for softmax alone and for the three ops (host-bar's). Question: is host-bar's
#   compiled_op 1.17-1.29x an artifact of the peers' make() order and of three cache entries on one code object? The
#   first compiled-parts run (H100) had compiled_op's whole at 24-36 us against torch_compile's 36-53.
# host-bisect (issue 29): host-bisect.py's modes, each in its own process: which part of host-cost.py's making of
#   its rows turns compiled_op from under torch_compile (compiled-parts.py) to over it; and Python's collector.
# native (issue 29): py-spy --native over compiled_op's and torch_compile's calls (native-profile.py), each peer in
#   its own process, 15 s of its calls. Question: where in the wrappers (dynamo, AOTAutograd) and the launch do
#   compiled_op's extra µs go? Carry py-spy's wheel too (`pip download py-spy --no-deps -d .bundles`:
#   .bundles/py_spy-0.4.3-py2.py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl). With it the tree passes run's
#   64 MiB: move evidence/runs aside for the call (git status shows it deleted meanwhile), and back after.
set -u
if [[ $1 == native ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  python3 -m pip install -q --no-deps .bundles/py_spy-*.whl 2>&1 | grep -v WARNING; command -v py-spy || exit 1
  # py-spy runs the script (tracing a process that is not its child may not be allowed in the container), at 100
  # samples a second: at 1000, --native's unwinding fell a minute behind and nothing was written (this session).
  # Only the samples under the timed calls are read; the script compiles before them.
  for peer in compiled_op torch_compile; do
    timeout 200 py-spy record --native --rate 100 --format raw -o $OUT/native-$peer.txt -- env PYTHONPATH=$PYTHONPATH:scripts \
      python3 evidence/experiments/2026-12-05-session49/native-profile.py $peer 15 > $OUT/native-$peer.log 2>&1
    echo "$peer rc=$? at $SECONDS s"; grep -v "behind in sampling" $OUT/native-$peer.log | tail -3
    python3 evidence/experiments/2026-12-05-session49/native-profile.py --read $OUT/native-$peer.txt | head -40
  done
  gzip $OUT/native-*.txt
  exit 0
fi
if [[ $1 == host-bisect ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  for how in peers launches all all+nogc peers+nogc launches+nogc peers launches all; do
    timeout 90 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session49/host-bisect.py ${how//+/ } \
      > $OUT/bisect.txt 2>&1 || tail -3 $OUT/bisect.txt; grep "µs host" $OUT/bisect.txt
  done
  exit 0
fi
if [[ $1 == compiled-order ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  for how in ${HOWS:-plain reverse three reverse+three}; do  # HOWS: words of compiled-parts.py's, + joining two
    f=$OUT/compiled-order-${how//+/_}.txt
    timeout 100 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session49/compiled-parts.py ${how//+/ } > $f 2>&1
    echo "order '$how' rc=$? at $SECONDS s"; grep -E "µs|Error" $f
  done
  [[ -n ${HOWS:-} ]] && exit 0
  for ops in "--op softmax" "--op softmax --op scaled-masked --op log-softmax"; do
    timeout 150 python3 scripts/host-cost.py $OUT/host-order.csv $ops --rounds 5 --row compiled_op --row torch_compile \
      > $OUT/host-order.txt 2>&1; echo "host-cost $ops rc=$? at $SECONDS s"; grep -E "peer (compiled_op|torch_compile)" $OUT/host-order.txt
  done
  exit 0
fi
case $1 in compiled-parts) ;; *) exec bash evidence/experiments/2026-12-05-session48/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
for p in a b c; do
  timeout 150 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session49/compiled-parts.py \
    > $OUT/compiled-parts-$p.txt 2>&1
  echo "compiled-parts $p rc=$? at $SECONDS s"; grep -E "µs|kernels|Error" $OUT/compiled-parts-$p.txt
done
grep -h -E "\.run\(|empty_strided" $OUT/compiled-parts-a.txt
