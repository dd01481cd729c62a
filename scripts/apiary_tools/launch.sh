# Sourced by the entry scripts in scripts/ (multirun, compare, gb-export, sweep, plot, ...):
# runs `python -m apiary_tools TOOL COMMAND` (__main__.py: COMMAND names a module of
# apiary_tools/commands/; SIGINT and SIGTERM handled from the start) with the project venv,
# because the tools need numpy, scipy, matplotlib and jsonschema, which only the venv is sure
# to have.
# Usage inside an entry script: source ".../apiary_tools/launch.sh" TOOL COMMAND "$@"
apiary_tool=$1
apiary_command=$2
shift 2
apiary_scripts=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
apiary_python="$apiary_scripts/../.venv/bin/python"
if [ ! -x "$apiary_python" ]; then
  echo "$apiary_tool: the project venv (.venv) is missing: run scripts/install-deps.sh first" >&2
  exit 2
fi
export PYTHONPATH="$apiary_scripts${PYTHONPATH:+:$PYTHONPATH}"
exec "$apiary_python" -m apiary_tools "$apiary_tool" "$apiary_command" "$@"
