#!/usr/bin/env bash
# Installs what apiary needs, builds the release preset and runs the main job. Until the
# cycle test lands, the main job is the microbenchmark suite; extra arguments go to it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
exec build/release/bench/apiary_core_bench "$@"
