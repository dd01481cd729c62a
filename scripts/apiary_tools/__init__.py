"""The tools around `apiary run` and its JSON reports, in two floors: a library, the modules
directly in this package, and the commands, apiary_tools/commands/.

The commands, each a module (or a package, with the helpers only it uses) with a `main(argv)`,
run by an entry script in scripts/ with the project venv (launch.sh, __main__.py):

    multirun      repeated runs (or an interleaved A/B) and their statistics    scripts/multirun
    compare       two reports or sets, metric by metric, with a verdict         scripts/compare
    gbexport      reports as Google Benchmark JSON                              scripts/gb-export
    plot          figures of reports, or a sweep's again                        scripts/plot
    sweep         runs over the values of one option, a table and figures       scripts/sweep
    maxrate       the highest rate the node sustains                            scripts/find-max-rate
    ladder        Hive's optimization ladder, step by step                      scripts/ladder
    soak          one long run followed through its interval log                scripts/soak
    report_html   one self-contained HTML page of any tool's output             scripts/report-html
    perf_gate     the CI gate on instructions per transaction (ci: its reports) scripts/perf-gate
    history       the results history: ingest, list, detect, trend              scripts/history
    bisect        the commit that moved a metric                                scripts/bisect
    rc_tune       the RC parameters at a scale, by trials of apiary replay      scripts/rc-tune

The library in four floors, each importing only itself and the floors below it (FLOORS):

    base      common (errors, signals, every option type, formatting), proc (child
              processes), inputs (reading files strictly), outputs (writing them, checked
              first), schemas (what each file read must hold)
    data      metrics, stats, latency, reports (reports and sets), aggregates (a set's
              aggregate.json and summary.md), sequential, deciding (the metric that decides
              an A/B), profiles, gate (callgrind counts, the gate's workload and its replay),
              history_db, history_detect
    running   runner (plans of runs, passthrough options, writing sets), builds, fleet (a
              Dask cluster), rc_trials (rc-tune's trials and their analysis)
    results   kinds (the registry of result kinds: file, schema, reader), rc_search
              (rc-tune's search and tuning), comparison,
              figures, pages (the HTML page), ladders, soaks, sweeps, history_ingest,
              history (the --history option)

A command imports only the library, never another command: what two commands share belongs
in the library. No import circle, and no import inside a function to dodge one; an import
inside a function is there for start-up time (matplotlib, SQLAlchemy, distributed) and says
so. scripts/check-layers checks all of it; docs/tools.md explains how to add a tool.
"""

# Each library module's floor, lowest first (scripts/check-layers reads this table).
FLOORS = {
    "base": ("common", "proc", "inputs", "outputs", "schemas"),
    "data": ("metrics", "stats", "latency", "reports", "aggregates", "sequential", "deciding", "profiles", "gate",
             "history_db", "history_detect"),
    "running": ("runner", "builds", "fleet", "rc_trials"),
    "results": ("kinds", "rc_search", "comparison", "figures", "pages", "ladders", "soaks", "sweeps", "history_ingest",
                "history"),
}
