#!/usr/bin/env bash
# Lists the functions of a module longer than a limit, counted from the line of the
# signature to the closing brace, and fails if there is one. clang-tidy's
# readability-function-size finds the long ones (over the sources of the module and the
# headers of its include folder, with the release build's compile_commands.json); it counts
# from the opening brace, so the lines of the signature up to it are added here.
#
#   scripts/function-size.sh [module ...]   modules: top-level folders (default: core)
#   APIARY_FUNCTION_LINES  the limit (default 80)
#   APIARY_FUNCTION_SHOW   also print this many of the longest functions (default 5)
#
# Needs clang-tidy and a configured release build (cmake --preset release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

limit=${APIARY_FUNCTION_LINES:-80}
show=${APIARY_FUNCTION_SHOW:-5}
for n in "$limit" "$show"; do
  case "$n" in
    '' | *[!0-9]*)
      echo "function-size: APIARY_FUNCTION_LINES and APIARY_FUNCTION_SHOW must be whole numbers, not '$n'" >&2
      exit 2
      ;;
  esac
done
if [ ! -f build/release/compile_commands.json ]; then
  echo "function-size: build/release/compile_commands.json is missing: run cmake --preset release" >&2
  exit 2
fi
modules=("$@")
[ "${#modules[@]}" -gt 0 ] || modules=(core)

# Functions from half the limit on, so that a long signature cannot hide one.
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $((limit / 2))}]}"
found=$(mktemp "${TMPDIR:-/tmp}/apiary-function-size.XXXXXX")
sized=$found.sized
trap 'rm -f "$found" "$sized"' EXIT
for m in "${modules[@]}"; do
  if [ ! -d "$m/src" ]; then
    echo "function-size: '$m' is not a module folder with a src/ folder" >&2
    exit 2
  fi
  # A warning names the function's line; its note says how many lines the body spans.
  clang-tidy -p build/release --quiet -checks='-*,readability-function-size' -config="$config" \
    -header-filter="$PWD/$m/include/.*" "$m"/src/*.cpp 2>/dev/null |
    awk -v root="$PWD/" '
      / warning: function .* exceeds recommended size/ {
        split($0, at, ":"); file = at[1]; line = at[2]; name = $0
        sub(/.*warning: function /, "", name); sub(/ exceeds.*/, "", name)
      }
      / note: [0-9]+ lines including whitespace/ && file != "" {
        body = $0; sub(/.* note: /, "", body); sub(/ lines.*/, "", body)
        sub(root, "", file); print file "\t" line "\t" body "\t" name; file = ""
      }' >>"$found"
done

# From the signature (a template<> line above it included) to the opening brace: the first
# line from the name on that ends with "{".
sort -u "$found" | while IFS=$'\t' read -r file line body name; do
  awk -v from="$line" -v body="$body" -v name="$name" -v file="$file" '
    NR == from - 1 && /^[[:space:]]*template[[:space:]]*</ { start = NR }
    NR >= from && brace == 0 && /\{[[:space:]]*$/ { brace = NR }
    END {
      if (start == 0) start = from
      if (brace == 0) brace = from
      printf "%d\t%s:%d\t%s\n", brace + body - start + 1, file, start, name
    }' "$file"
done | sort -t$'\t' -k1,1nr >"$sized"

over=$(awk -F'\t' -v limit="$limit" '$1 > limit' "$sized")
if [ "$show" -gt 0 ]; then
  echo "longest functions in ${modules[*]} (lines from the signature to the closing brace):"
  head -n "$show" "$sized" | awk -F'\t' '{ printf "  %4d  %s  %s\n", $1, $2, $3 }'
fi
if [ -n "$over" ]; then
  echo "function-size: functions over $limit lines:" >&2
  echo "$over" | awk -F'\t' '{ printf "  %4d  %s  %s\n", $1, $2, $3 }' >&2
  exit 1
fi
echo "function-size: no function in ${modules[*]} is over $limit lines"
