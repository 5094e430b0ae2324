"""One exception hierarchy for everything hetsched raises on purpose.

The CLI catches :class:`HetschedError` once, prints ``str(err)`` on one line and exits
with status 2.  Every input error names the file (or the option) it came from, the field
inside it, and what was expected, so that a user can fix it without reading a traceback.

The native engine raises these same classes (crates/hetsched-py/src/error.rs maps each of
its errors to one), so nothing between it and the user re-wraps them:

* a spec, knob value or argument it cannot use -> :class:`InputError`, ``source`` being
  the engine's document (``platform``, ``workload``, ``policy``, ``energy model``);
  a document that does not parse has ``field == "json"``;
* a name it does not know (scheduler, governor, idle governor, kernel profile, knob) ->
  :class:`UnknownNameError` from the ``policy``, with ``choices``;
* a panic inside the engine -> :class:`EngineError`, with the panic's message and where.
"""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = [
    "HetschedError",
    "InputError",
    "UnknownNameError",
    "OutputError",
    "ClusterError",
    "EngineError",
    "PolicyError",
    "did_you_mean",
    "shorten",
]


class HetschedError(Exception):
    """Base class of every error hetsched reports to a user."""


class InputError(HetschedError):
    """A platform, workload, option or knob value that cannot be used.

    ``source`` is the file path or the command-line option the value came from,
    ``field`` the dotted path inside it (``clusters[1].opps[3].khz``),
    ``expected`` a short phrase ("a positive integer", "one of: a, b").
    """

    def __init__(self, source: str, field: str, expected: str, got: object = None):
        self.source = str(source)
        self.field = field
        self.expected = expected
        self.got = got
        # what the user wrote (a path, a field, a value) is shown shortened: one line,
        # whatever was given
        msg = (f"{shorten(self.source, 200)}: {shorten(str(field), 200)}: "
               f"expected {' '.join(str(expected).splitlines())}")
        if got is not None:
            try:
                shown = repr(got)
            except ValueError:  # an int too long to print (sys.get_int_max_str_digits)
                shown = f"<{type(got).__name__} too long to print>"
            if len(shown) > 60:
                shown = shown[:57] + "..."
            msg += f", got {shown}"
        super().__init__(msg)

    def __reduce__(self):
        # An exception pickles as cls(*self.args), and args is the message alone: a worker
        # process (the reproductions' pool) must hand the error back whole, attributes too.
        return (type(self), (self.source, self.field, self.expected, self.got))


def shorten(text: str, limit: int) -> str:
    """``text`` on one line and about ``limit`` characters at most: a longer one keeps its
    start and its end (a path's file name) around "...", and a character that does not
    print (a newline, a NUL) is shown escaped."""
    if len(text) > limit:
        head = (limit - 3) * 2 // 3
        text = text[:head] + "..." + text[len(text) - (limit - 3 - head):]
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.5)
    return close[0] if close else None


class UnknownNameError(InputError):
    """A name (platform, scheduler, governor, knob, workload) that is not registered."""

    def __init__(self, source: str, field: str, name: str, choices: Iterable[str]):
        choices = sorted(choices)
        hint = did_you_mean(name, choices)
        expected = "one of: " + ", ".join(choices)
        if hint:
            expected = f"{expected} (did you mean {hint!r}?)"
        super().__init__(source, field, expected, got=name)
        self.name = name
        self.choices = choices

    def __reduce__(self):
        return (type(self), (self.source, self.field, self.name, self.choices))


class OutputError(InputError):
    """An output file that could not be written: the disk is full, a directory stands
    where the file goes, the output directory was removed while the command ran
    (hetsched.outputs). ``source`` is the file, ``field`` the option that named its
    directory; ``directory`` the output directory; ``kept`` what the command had already
    kept elsewhere (journaled runs, a store's last rows), for its last line. Exit status 2
    like any input the command cannot use: the fix is in the user's environment."""

    def __init__(self, source: str, field: str, expected: str, got: object = None, *,
                 directory: object = None, kept: str | None = None):
        super().__init__(source, field, expected, got)
        self.directory = directory
        self.kept = kept

    def __reduce__(self):
        return (_output_error, (self.source, self.field, self.expected, self.got, self.directory, self.kept))


def _output_error(source, field, expected, got, directory, kept) -> OutputError:
    return OutputError(source, field, expected, got, directory=directory, kept=kept)


class ClusterError(InputError):
    """The Ray cluster a command ran on stopped answering while it ran (its head died, the
    network went): ``source`` is the option that named it, ``got`` what was seen;
    ``kept`` what the command kept (a sweep's rows), for its line. Exit status 2, as an
    OutputError: the fix is in the user's environment."""

    def __init__(self, source: str, field: str, expected: str, got: object = None, *, kept: str | None = None):
        super().__init__(source, field, expected, got)
        self.kept = kept

    def __reduce__(self):
        return (_cluster_error, (self.source, self.field, self.expected, self.got, self.kept))


def _cluster_error(source, field, expected, got, kept) -> ClusterError:
    return ClusterError(source, field, expected, got, kept=kept)


class EngineError(HetschedError):
    """The engine failed: a Rust panic inside it (a bug, never a bad input), caught at the
    boundary and reported with its message and source location. The simulation it
    happened in cannot go on; every later call on it raises this again."""


class PolicyError(HetschedError):
    """A scheduler policy written in Python (:class:`hetsched.Policy`) failed in a hook: it
    raised (``__cause__`` is that exception, with its traceback), or it returned what the
    engine cannot use (``why`` says what). The run stops there: the simulation's state is
    mid-event, so the Simulation refuses to go on and raises this again.

    The engine raises it (crates/hetsched-py/src/policy.rs) as
    ``PolicyError(policy, hook, why, raised, where)``, ``where`` being the class as
    ``FILE.py:CLASS`` (hetsched.policy.policy_label).
    """

    def __init__(self, policy: str, hook: str, why: str | None = None, raised: BaseException | None = None,
                 where: str | None = None):
        self.policy, self.hook, self.why, self.where = policy, hook, why, where
        who = f"policy {shorten(repr(policy), 100)}"
        if where and where != policy:
            who += f" ({shorten(where, 200)})"
        if raised is not None:
            # one line, where the policy's code failed: the innermost frame of its traceback
            first = str(raised).strip().splitlines()
            what = type(raised).__name__ + (f": {shorten(first[0], 200)}" if first else "")
            tb = raised.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            if tb is not None:
                from pathlib import Path

                what += f" (at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno})"
            msg = f"{who}: {hook} raised {what}"
        else:
            msg = f"{who}: {hook} {shorten(str(why), 300)}"
        super().__init__(msg)
        if raised is not None:
            self.__cause__ = raised  # `raise PolicyError(...) from raised`
