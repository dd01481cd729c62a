#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset: clang, ASan + UBSan, warnings as errors),
# replays each target's seed corpus once under ctest, then fuzzes every target for a few
# seconds, all at once, each from a scratch copy of its seeds. Fails on any finding and prints where libFuzzer
# saved the input that caused it (the scratch directory is then kept).
#
#   APIARY_FUZZ_SECONDS  seconds of fuzzing per target (default 10)
#
# Needs clang and libFuzzer's runtime (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${APIARY_FUZZ_SECONDS:-10}
case "$seconds" in
  '' | *[!0-9]* | 0)
    echo "fuzz-smoke: APIARY_FUZZ_SECONDS must be a positive whole number of seconds, not '$seconds'" >&2
    exit 2
    ;;
esac
export APIARY_WERROR=${APIARY_WERROR:-ON}
jobs=$(nproc)
targets=(transaction block custom_json)

echo "== fuzz: build =="
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs"

echo "== fuzz: replay the seeds =="
ctest --preset fuzz -j "$jobs"

echo "== fuzz: ${seconds} s per target, all at once =="
# Fuzzing adds inputs to its first corpus directory: a scratch copy, never tests/fuzz/corpus.
# The targets fuzz side by side, so the stage takes the seconds of one, not of all of them.
work=$(mktemp -d "${TMPDIR:-/tmp}/apiary-fuzz.XXXXXX")
keep=0
pids=()
trap '[ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; [ "$keep" = 1 ] || rm -rf "$work"' EXIT
for t in "${targets[@]}"; do
  dir=$work/$t
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp -R "tests/fuzz/corpus/$t/." "$dir/corpus/"
  # -timeout: one input running this long is a hang, so a finding too.
  args=(-max_total_time="$seconds" -timeout=10 -artifact_prefix="$dir/artifacts/")
  if [ -f "tests/fuzz/$t.dict" ]; then args+=(-dict="tests/fuzz/$t.dict"); fi
  "build/fuzz/tests/fuzz/apiary_fuzz_$t" "${args[@]}" "$dir/corpus" >"$dir/fuzz.log" 2>&1 &
  pids+=("$!")
done
failed=()
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  dir=$work/$t
  log=$dir/fuzz.log
  status=0
  wait "${pids[$i]}" || status=$?
  if [ "$status" -eq 0 ]; then
    # libFuzzer's last status line: runs, coverage, features, corpus, speed, memory.
    echo "$t: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 | tr -s '[:space:]' ' ')"
  else
    keep=1
    failed+=("$t")
    echo "$t: FINDING (exit status $status)"
    grep -E 'ERROR:|SUMMARY:|check failed|terminate called|Test unit written' "$log" | sed 's/^/  /' || true
    for a in "$dir"/artifacts/*; do
      if [ -e "$a" ]; then echo "  input: $a"; fi
    done
    echo "  log: $log"
  fi
done
pids=()

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz-smoke: findings in ${failed[*]}; reproduce with build/fuzz/tests/fuzz/apiary_fuzz_<target> <input>," \
    "and once fixed add the input to tests/fuzz/corpus/<target>/ as a regression seed" >&2
  exit 1
fi
echo "fuzz-smoke: no findings"
