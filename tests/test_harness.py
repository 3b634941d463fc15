"""The suite's own guards (tests/conftest.py), checked where they matter."""

import ast
import gc
import threading
from pathlib import Path


def test_threads_parsing_at_once_do_not_trip_the_ast_counter():
    # gh-106905 (CPython < 3.11.8 / 3.12.2): without conftest's turns, 8 threads parsing ast.py with
    # a gc callback that runs Python code fail within about a second on 3.11.7.
    source = Path(ast.__file__).read_text()
    errors: list[BaseException] = []

    def collecting(phase, info):
        sum(range(50))  # Python code inside a collection: a point where threads can switch

    def parse_some() -> None:
        try:
            for _ in range(6):
                ast.parse(source)
        except SystemError as exc:
            errors.append(exc)

    gc.callbacks.append(collecting)
    try:
        threads = [threading.Thread(target=parse_some) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(collecting)
    assert errors == []
