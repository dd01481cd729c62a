"""Tools around `apiary run`'s JSON reports: repeated runs and their statistics (multirun),
side-by-side comparison with a significance test (compare), Google Benchmark JSON export
(gbexport), parameter sweeps with plots (sweep, plot), the search for the highest sustainable
rate (maxrate) and the decision part of an instruction-count performance gate (gate).

Each command is a module with a `main(argv)`; the entry scripts in scripts/ run them with
the project venv (see launch.sh). Shared pieces: common (errors, paths, number formatting),
outputs (every file a tool writes, and the checks before any work that no output replaces
an input or another output), inputs (reading JSON files and interval logs strictly), schemas
(what each file read must hold), reports (loading reports and sets, flattening metrics), stats (summaries and two-sample
comparisons), latency (merging the reports' latency histograms and their percentiles),
metrics (which metrics matter and which direction is better), runner (plans of
`apiary run`s with progress), proc (every child process: its own process group, SIGINT and
SIGTERM passed on, a timeout).
"""
