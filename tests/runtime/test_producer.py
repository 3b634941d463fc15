"""runtime/producer.py: taking a producer's read-ahead back (the parallel interleave's inline verdict)."""

from __future__ import annotations

import time

from headrace.core.node import Context
from headrace.runtime.producer import END, Producer
from headrace.sources.range import RangeNode


def filled(producer: Producer, count: int) -> None:
    producer.start()
    deadline = time.monotonic() + 30
    while producer.occupancy() < count and not producer.ended:
        assert time.monotonic() < deadline, "the producer read nothing ahead"
        time.sleep(0.001)


def test_take_back_returns_what_was_read_ahead_and_stops_the_thread():
    source = RangeNode(100).iterator(Context())
    producer = Producer(source, capacity=4, name="test")
    first = [int(producer.get()[1]) for _ in range(3)]
    filled(producer, 4)
    values = producer.take_back()
    assert values is not None
    # The caller reads on from the source at once: take_back does not wait for the thread to exit,
    # and the stopped thread never calls the source again.
    rest = [int(v) for v in values] + [int(v) for v in source]
    assert first + rest == list(range(100))
    assert producer.thread is not None
    producer.thread.join(5)  # a hang guard: it exits on its own
    assert not producer.thread.is_alive()


def test_take_back_refuses_once_the_end_or_an_error_is_buffered():
    producer = Producer(RangeNode(2).iterator(Context()), capacity=4, name="test")
    filled(producer, 2)
    assert producer.take_back() is None  # the end is buffered: the thread goes on serving
    assert [producer.get()[1] for _ in range(2)] == [0, 1] and producer.get()[0] == END
    producer.shutdown()

    def broken():
        yield 1
        raise ValueError("bad record")

    class Source:  # the smallest source a producer reads: next() and get_state()
        def __init__(self):
            self.it = broken()

        def __next__(self):
            return next(self.it)

        def get_state(self):
            return {}

    producer = Producer(Source(), capacity=4, name="test")  # type: ignore[arg-type]
    producer.start()
    deadline = time.monotonic() + 30
    while len(producer.items) < 2:  # the value, then the error
        assert time.monotonic() < deadline
        time.sleep(0.001)
    assert producer.take_back() is None  # an error is buffered: it is handed over in order
    assert producer.get()[1] == 1
    producer.shutdown()
