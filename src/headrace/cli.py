"""The ``headrace`` command: ``headrace demo``, ``headrace --version`` and the tools of later areas."""

from __future__ import annotations

import argparse
import sys

from .core.errors import HeadraceError
from .profile import cli as profile_cli
from .version import __version__


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo  # the demo pulls in every area; keep `headrace --version` instant

    return run_demo(quick=args.quick, out=args.out)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="headrace", description="Fast, framework-free ML input pipelines.")
    parser.add_argument("--version", action="version", version=f"headrace {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo", help="generate a sample dataset and run a training-like loop over it")
    demo.add_argument("--quick", action="store_true", help="a smaller dataset, for tests")
    demo.add_argument(
        "--out",
        metavar="DIR",
        help="where to keep the profile pages, traces and TensorBoard files (default: a new temporary "
        "folder); the demo's data is always written to a temporary folder and deleted",
    )
    demo.set_defaults(handler=_demo)
    from .tools import io_cli  # noqa: PLC0415 (one edit at this marker)

    io_cli.add_commands(commands)
    profile_cli.add_commands(commands)
    return parser


def error_line(exc: BaseException) -> str:
    """One line for an error the user can fix: the file first, then what was wrong.

    >>> error_line(FileNotFoundError(2, "No such file or directory", "data/x.npy"))
    'data/x.npy: No such file or directory'
    """
    if isinstance(exc, OSError) and exc.filename is not None:
        text = f"{exc.filename}: {exc.strerror or exc}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    """Run the ``headrace`` command. Errors caused by the input (a bad file, a missing file, a full
    disk, an invalid value) print one line naming the file and return 1; bugs keep their traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return int(handler(args) or 0)
    except (HeadraceError, OSError) as exc:
        print(f"headrace {args.command}: error: {error_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"headrace {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
