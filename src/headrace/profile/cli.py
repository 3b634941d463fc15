"""``headrace profile script.py [args...]``: run a training script and report on every pipeline it iterates."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

from .. import iterator as iterator_module
from .record import record_calls
from .stats import Stats


def _profile(args: argparse.Namespace) -> int:
    if any(arg == "--out" or arg.startswith("--out=") for arg in args.script_args):
        # argparse hands everything after the script to the script: say so before its own argument
        # parser rejects an option it never heard of.
        print(
            "headrace profile: '--out' after the script is passed to the script; headrace's options go "
            f"before it (headrace profile --out DIR {args.script} ...). Writing to {args.out!r}.",
            file=sys.stderr,
        )
    seen: list = []
    iterator_module.iterator_hooks.append(seen.append)
    sys.argv = [args.script, *args.script_args]
    exit_code = 0
    try:
        # Each stage call becomes a slice of the trace (the newest million calls are kept).
        with record_calls():
            runpy.run_path(args.script, run_name="__main__")
    except SystemExit as exit_:
        exit_code = exit_.code if isinstance(exit_.code, int) else 1
    except KeyboardInterrupt:
        # Ctrl-C is how long training runs end: the report and files are written all the same.
        print("\nheadrace profile: interrupted; reporting on what ran", file=sys.stderr)
        exit_code = 130
    except Exception:  # noqa: BLE001 (the script's own error: shown, then the report of what ran)
        traceback.print_exc()
        print("headrace profile: the script raised; reporting on what ran", file=sys.stderr)
        exit_code = 1
    finally:
        iterator_module.iterator_hooks.remove(seen.append)
    # Iterators are kept alive until the script ends so their counters can be read. One report per
    # pipeline, over all its runs (each epoch's iter(ds)): an epoch-1 report would show startup and
    # compile as if they were the pipeline's steady cost.
    runs: dict[str, list] = {}
    for it in seen:
        if it.produced:
            runs.setdefault(it.node.signature(), []).append(it)
    os.makedirs(args.out, exist_ok=True)
    if not runs:
        print("headrace profile: the script iterated no headrace pipeline", file=sys.stderr)
    for number, iterators in enumerate(runs.values(), 1):
        stats = Stats.combine([it.stats() for it in iterators])
        print(f"\n=== pipeline {number} of {len(runs)}: the whole run ({len(iterators)} x iter()) ===")
        print(stats.report())
        html = stats.save_html(os.path.join(args.out, f"pipeline{number}.html"))
        trace = stats.save_trace(os.path.join(args.out, f"pipeline{number}.trace.json"))
        stats.save_tensorboard(os.path.join(args.out, "tensorboard"), run=f"pipeline{number}")
        print(f"report with plots: open {html} in a browser")
        print(f"trace: drag {trace} onto https://ui.perfetto.dev or chrome://tracing")
    if runs:
        print(
            f"TensorBoard: tensorboard --logdir {os.path.join(args.out, 'tensorboard')} (Scalars, Profile tabs)"
        )
    for it in seen:
        it.close()
    return exit_code


def add_commands(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("profile", help="run a script and report on the pipelines it iterates")
    parser.add_argument("script", help="the Python training script to run")
    parser.add_argument(
        "script_args", nargs=argparse.REMAINDER, help="arguments passed to the script (all after it)"
    )
    parser.add_argument("--out", default="headrace-profile", help="folder for the HTML plots and traces")
    parser.set_defaults(handler=_profile)
