"""`python -m benchmarks {list,run,report}`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks import devset, report, scenarios, store


def _summary(result: dict) -> str:
    m = result.get("metrics", {})
    if result["status"] != "ok":
        return f"{result['scenario']}: {result['status']}: {result.get('reason')}"
    figures = []
    for key, show in (("wall_s", "{:.2f} s wall"), ("cpu_s", "{:.2f} CPU-s")):
        if isinstance(m.get(key), (int, float)):
            figures.append(show.format(m[key]))
    for key in ("peak_tree_rss", "peak_temp_disk"):
        if isinstance(m.get(key), (int, float)):
            figures.append(f"{key} {report.fmt_bytes(m[key])}")
    return f"{result['scenario']}: ok: " + ", ".join(figures)


def cmd_list(_args: argparse.Namespace) -> int:
    registry = scenarios.all_scenarios()
    width = max(len(n) for n in registry)
    for name, scenario in registry.items():
        print(f"{name:<{width}}  {scenario.help}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    try:
        chosen = scenarios.select_scenarios(scenarios.all_scenarios(), args.scenarios)
    except KeyError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 2
    failed = 0
    for scenario in chosen:
        print(f"running {scenario.name} ...", file=sys.stderr, flush=True)
        result = scenarios.run_scenario(scenario, interval=args.interval, keep_work=args.keep_work,
                                        logic_root=args.logic_root)
        if not args.no_write:
            path = store.write_result(args.results, result)
            print(f"  wrote {path}", file=sys.stderr)
        print(_summary(result), flush=True)
        failed += result["status"] == "failed"
    if args.report:
        cmd_report(args)
    return 1 if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    path, text, png = report.write_report(args.results, plot=not getattr(args, "no_plot", False))
    print(text)
    print(f"wrote {path}" + (f" and {png}" if png else ""), file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    devset.use_custom_kernels()  # the dev set names custom kernels; its builds read them from ../shared
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--results", type=Path, default=store.RESULTS_DIR,
                        help="folder of result JSON files (default: benchmarks/results)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list scenarios").set_defaults(func=cmd_list)
    run = sub.add_parser("run", help="run scenarios (all when none named; shell patterns allowed)")
    run.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    run.add_argument("--interval", type=float, default=0.1, help="sampling interval in seconds (default 0.1)")
    run.add_argument("--keep-work", action="store_true", help="keep each scenario's temporary work folder")
    run.add_argument("--no-write", action="store_true", help="print figures without writing JSON")
    run.add_argument("--report", action="store_true", help="regenerate the report afterwards")
    run.add_argument("--logic-root", type=Path, default=None,
                     help="a hipBLASLt logic tree (library/src/amd_detail/rocblaslt/src/Tensile/Logic/asm_full) "
                          "for the scenarios that build one, e.g. whole-gfx942; they skip without it")
    run.set_defaults(func=cmd_run)
    rep = sub.add_parser("report", help="write results/REPORT.md and a PNG of the latest build")
    rep.add_argument("--no-plot", action="store_true", help="skip the PNG")
    rep.set_defaults(func=cmd_report)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
