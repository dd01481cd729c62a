#!/usr/bin/env bash
# Installs what apiary needs, builds the release preset and runs the main job: the full
# block cycle test, `apiary run`, with the default config (configs/default.toml: 2 MB
# blocks of the typical mix, 2 producer threads, signing on; about a minute on 2 cores).
# Extra arguments go to `apiary run`, e.g. `scripts/run.sh --config configs/smoke.toml`.
# The summary goes to stdout, the JSON report to results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
exec build/release/harness/apiary run "$@"
