#!/usr/bin/env bash
# Installs what apiary needs, then builds and runs every test: the release build and the
# ASan+UBSan build, both with warnings as errors, then the threaded tests (queue, writer,
# colony, the end-to-end runs) under TSan, then a short libFuzzer run of the decoders, and
# last the performance gate: the parent commit's instruction count per transaction against
# this one's (scripts/perf-gate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
export APIARY_WERROR=ON
jobs=$(nproc)
for preset in release asan; do
  echo "== $preset =="
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done

echo "== tsan (threaded tests) =="
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target apiary_queen_tests apiary_colony_tests apiary apiary_harness_tests
ctest --preset tsan -j "$jobs" -L 'threaded|harness'

echo "== fuzz (libFuzzer: seeds replayed, then 15 s per target) =="
scripts/fuzz-smoke.sh

echo "== performance gate (instructions per transaction against the parent commit) =="
scripts/perf-gate
