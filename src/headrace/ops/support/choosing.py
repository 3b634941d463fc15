"""The iterator of ops that take each element from the input dataset a choice names:
choose_from_datasets (choices read from a choice dataset) and sample_from_datasets (choices drawn
at random, with fixed weights or with a weights dataset's vectors).

An op fills in :meth:`~ChoosingIterator.refill`, a list of upcoming choices (one chunk's worth:
pulled or drawn at once, so no hook runs per element or per run), and
:meth:`~ChoosingIterator.bad_choice`, the error of a choice that names no dataset; this class serves
the choices in order, pulling each run of equal choices from its dataset in one ``next_chunk``,
skips or stops at exhausted datasets (``stop_on_empty_dataset``), holds an input's error after the
elements before it, and counts the choices used (``used``).
"""

from __future__ import annotations

from typing import Any

from ...core.node import NodeIterator, NodeT


class ChoosingIterator(NodeIterator[NodeT]):
    """``next_chunk(n)``: the elements of ``datasets[c]`` for the next choices ``c``. ``choices`` is
    the list :meth:`refill` made last, ``next`` the offset of its first choice not used yet."""

    datasets: list[NodeIterator]
    #: the node's ``stop_on_empty_dataset``: choosing an exhausted dataset ends the output (else the
    #: choice is skipped)
    stop: bool

    def start_choosing(self, exhausted: list[bool]) -> None:
        """Start an epoch: no choice pending, ``exhausted`` (one bool per dataset), not done unless all
        are exhausted."""
        self.exhausted = exhausted
        self.done = all(exhausted)
        self.choices: list = []  # from the last refill(); choices[next:] are not used yet
        self.next = 0
        self.used = 0  # choices used this epoch (served, skipped or failed)

    def refill(self, n: int) -> list:
        """About ``n`` (at least one) upcoming choices, each an int naming a dataset or anything else
        for a bad choice (:meth:`bad_choice` makes its error when its turn comes); StopIteration when
        there are no more (the output ends). The base sets ``choices`` and ``next``."""
        raise NotImplementedError

    def bad_choice(self, choice: Any, index: int) -> Exception:
        """The error for ``choice``, the ``index``-th choice of the epoch, which is not an int naming a
        dataset."""
        raise NotImplementedError

    def next_chunk(self, n: int) -> list:
        if self.owed:  # after an error: the elements gathered before it, or the error held
            owed = self.serve_owed(n)
            self.produced += len(owed)
            return owed
        out: list = []
        if self.done:
            raise StopIteration
        stop = self.stop
        datasets = self.datasets
        exhausted = self.exhausted
        size = len(datasets)
        choices = self.choices
        i = self.next
        used = self.used
        try:  # choices, next and used live in locals here: written back on every way out
            while True:
                if i >= len(choices):
                    try:
                        choices = self.refill(n - len(out))
                    except StopIteration:
                        self.done = True
                        break
                    except BaseException as exc:
                        return self.interrupted(out, exc)
                    i = 0
                c = choices[i]
                if type(c) is not int or not 0 <= c < size:
                    i += 1
                    used += 1
                    return self.interrupted(out, self.bad_choice(c, used - 1))
                if exhausted[c]:
                    if stop or all(exhausted):  # all ended: no choice can give an element (a restored
                        self.done = True  # state that says so, with done=False, spun here forever)
                        break
                    i += 1  # the choice is skipped
                    used += 1
                    continue
                # Consecutive equal choices, choices[i:j], are served with one chunk from that dataset.
                j = i + 1
                end = min(len(choices), i + n - len(out))
                if j < end and choices[j] == c:  # a run: scanned by a for loop (the fastest in Python)
                    for k in range(j + 1, end):
                        if choices[k] != c:
                            j = k
                            break
                    else:
                        j = end
                try:
                    got = datasets[c].next_chunk(j - i)
                except StopIteration:
                    exhausted[c] = True
                    if stop or all(exhausted):
                        self.done = True
                        break
                    continue  # the choice is skipped on the next turn
                except BaseException as exc:
                    i += 1  # the failing element used its choice; the run's others stay
                    used += 1
                    return self.interrupted(out, exc)
                i += len(got)
                used += len(got)
                out.extend(got)
                if len(out) >= n:
                    break
        finally:
            self.choices = choices
            self.next = i
            self.used = used
        if not out:
            raise StopIteration
        self.produced += len(out)
        return out

    def __next__(self) -> Any:
        return self.next_chunk(1)[0]
