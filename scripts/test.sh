#!/usr/bin/env bash
# Installs what apiary needs, then checks the formatting and the Python tools (ruff, mypy;
# scripts/lint --python), builds and runs every test: the release build (then clang-tidy and
# the function lengths, scripts/lint) and the ASan+UBSan build, both with warnings as errors
# (the Python tools' suite runs in the release build only: it tests the tools, and the
# harness tests run the binary under ASan; the tests labelled `measuring`, whose point is a
# rate or a clock that a sanitizer's slowdown changes, run in the release build only), then
# the threaded tests under TSan (queue, writer, colony, and the end-to-end runs labelled
# `cycle`: tests/harness/CMakeLists.txt), then a short libFuzzer run of the decoders, and last
# the performance gate: the parent commit's instruction count per transaction against this
# one's (scripts/perf-gate). Every stage's time is printed at the end; docs/testing.md says
# where CI's time goes.
#
#   scripts/test.sh           all of it, as CI runs it
#   scripts/test.sh --quick   a lane for development: the same checks of formatting and of the
#                             Python tools, then the release build and its ctest without the
#                             benchmarks' smoke runs and the Python tools' suite (labels
#                             scripts, fuzz); no sanitizers, no clang-tidy, no fuzzing, no gate
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=0
case "${1:-}" in
  '') ;;
  --quick) quick=1 ;;
  *) echo "test.sh: unknown argument '$1' (--quick, or nothing for every stage)" >&2; exit 2 ;;
esac

scripts/install-deps.sh
export APIARY_WERROR=ON
jobs=$(nproc)

# Each stage's start is printed as it begins, and every stage's time once the command ends,
# passed or not.
stage_names=()
stage_starts=()
stage() {
  stage_names+=("$1")
  stage_starts+=("$SECONDS")
  echo "== $1 == (${SECONDS} s in)"
}
stage_times() {
  local status=$? i end
  [ "${#stage_names[@]}" -gt 0 ] || return "$status"
  echo "test.sh: stage times ($([ "$status" -eq 0 ] && echo passed || echo "failed, exit $status")):"
  for i in "${!stage_names[@]}"; do
    end=${stage_starts[$((i + 1))]:-$SECONDS}
    printf '  %5d s  %s\n' "$((end - stage_starts[i]))" "${stage_names[$i]}"
  done
  printf '  %5d s  in all\n' "$SECONDS"
  return "$status"
}
trap stage_times EXIT

# One compiler cache for the builds of this run (the presets and the performance gate's build
# of the parent commit), in build/ccache unless CCACHE_DIR says otherwise: a clean clone starts
# with it empty. Paths are hashed relative to the checkout, so a build of another commit in its
# own worktree, at the same depth below it, finds the objects whose sources did not change.
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$PWD/build/ccache} CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
  # The precompiled headers (cmake/ApiaryTargets.cmake) are cached only with this.
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  launcher=()
fi
stage "lint: formatting and the Python checks"
scripts/lint --format
scripts/lint --python
if [ "$quick" -eq 1 ]; then
  stage "release (quick: unit and end-to-end tests)"
  cmake --preset release "${launcher[@]}" >/dev/null
  cmake --build --preset release -j "$jobs"
  ctest --preset release -j "$jobs" -LE 'scripts|fuzz' -E '^bench[.]'
  stage "done"
  exit 0
fi
for preset in release asan; do
  stage "$preset"
  cmake --preset "$preset" "${launcher[@]}" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  if [ "$preset" = release ]; then
    ctest --preset "$preset" -j "$jobs"
    stage "lint: clang-tidy and function lengths"
    scripts/lint --tidy
  else
    ctest --preset "$preset" -j "$jobs" -LE 'scripts|measuring'
  fi
done

stage "tsan (threaded tests)"
cmake --preset tsan "${launcher[@]}" >/dev/null
cmake --build --preset tsan -j "$jobs" --target apiary_queen_tests apiary_colony_tests apiary
ctest --preset tsan -j "$jobs" -L 'threaded|cycle'

stage "fuzz (libFuzzer: seeds replayed, then 10 s per target)"
scripts/fuzz-smoke.sh

stage "performance gate (instructions per transaction against the parent commit)"
# For the CI system beside the log: a JUnit report and a Markdown summary. With
# $APIARY_HISTORY (a file the CI job caches, or a postgresql:// URL) the gate also ingests its
# count and fails on a change point at the head (docs/ci.md).
scripts/perf-gate --junit build/perf-gate/junit.xml --markdown build/perf-gate/summary.md
stage "done"
