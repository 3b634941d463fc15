import pickle
import traceback

from headrace.runtime import worker


def _fails():
    raise ValueError("element 7 is bad")


def _caught() -> ValueError:
    try:
        _fails()
    except ValueError as exc:
        return exc
    raise AssertionError("unreachable")


def test_pack_error_keeps_type_message_and_traceback():
    data, kind, message, text = worker.pack_error(_caught())
    assert kind == "builtins.ValueError" and message == "element 7 is bad"
    assert "in _fails" in text and 'raise ValueError("element 7 is bad")' in text
    assert isinstance(pickle.loads(data), ValueError)


def test_a_traceback_that_cannot_be_formatted_still_reaches_the_parent(monkeypatch):
    # What CPython 3.11.7 does when two worker threads format tracebacks at once (gh-106905).
    def broken(*args, **kwargs):
        raise SystemError("AST constructor recursion depth mismatch (before=18, after=12)")

    monkeypatch.setattr(traceback, "format_exception", broken)
    _, kind, message, text = worker.pack_error(_caught())
    assert kind == "builtins.ValueError" and message == "element 7 is bad"
    assert text.startswith("Traceback (most recent call last):")
    assert "test_worker.py" in text and "in _fails" in text and "raise ValueError" in text
    assert text.rstrip().endswith("ValueError: element 7 is bad")
