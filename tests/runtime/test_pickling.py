"""Worker tracebacks name the user's file and line whatever cloudpickle version is installed."""

import pickle
import traceback

from headrace.runtime.pickling import dumps


def _failing(x):
    return {}["missing"] + x  # the line a worker traceback must show


def test_functions_keep_their_file_name_through_a_pickle():
    fn = lambda x: x + 1  # noqa: E731 (a lambda travels by value)
    loaded = pickle.loads(dumps(fn))
    assert loaded.__code__.co_filename == __file__
    assert loaded(1) == 2


def test_a_traceback_from_an_unpickled_function_shows_the_users_line():
    loaded = pickle.loads(dumps(lambda x: _failing(x)))
    inner = pickle.loads(dumps(_failing.__code__))  # code objects by value, as cloudpickle sends them
    assert inner.co_filename == __file__
    try:
        loaded(1)
    except KeyError as exc:
        text = "".join(traceback.format_exception(exc))
    assert __file__ in text
    assert 'return {}["missing"] + x' in text


def test_nested_code_objects_keep_their_file_names():
    def outer():
        def inner():
            return 1

        return inner

    loaded = pickle.loads(dumps(outer))
    assert loaded.__code__.co_filename == __file__
    assert loaded().__code__.co_filename == __file__
