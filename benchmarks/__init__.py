"""Resource benchmarks of tensile-lite: wall and CPU time, peak RSS of the process tree, peak temporary disk,
output sizes, beside upstream TensileCreateLibrary's figures.

    python -m benchmarks list                 # every scenario, with what it measures
    python -m benchmarks run [NAME|PATTERN..] # e.g. `run yaml-load parse 'build-*-j2'`; writes results/*.json
    python -m benchmarks report               # results/REPORT.md (+ a PNG of the latest build, not committed)

Adding a scenario from another module: in `benchmarks/bench_<topic>.py` define
`SCENARIOS = (Scenario("name", "what it measures", func),)` with `Scenario`, `Context` and `Skip` from
`benchmarks.scenarios`; `func(ctx)` returns `{"metrics": {...}, "parts": {...}, "runs": [...]}` and can use
`benchmarks.runner.measure` / `measure_call`. Metric names the report tabulates are in
`store.METRIC_NAMES`; any other numeric metric is listed under "Other figures".
"""
