"""A trace's events as one DataFrame: a row per event line of ftrace text (a simulated
run's ``trace.txt``, or any ``trace-cmd report`` / tracefs text), every field of the
event's TP_printk text in a column of its own. The line grammar is parse.py's, which
reads the events a replay uses; this keeps every event and field."""

from __future__ import annotations

import os
import re
from pathlib import Path

from hetsched.errors import InputError
from hetsched.traces.parse import _LINE, _ns

__all__ = ["events_frame"]

# key=value, the value running to the next key (a comm may hold spaces)
_FIELD = re.compile(r"(\w+)=(.*?)(?=\s+\w+=|$)")
_HEADER = re.compile(r"^(version = \d+|cpus=\d+|CPU \d+ is empty|#.*|\s*)$")


def _value(text: str):
    try:
        return int(text)
    except ValueError:
        return text


def events_frame(source: str | os.PathLike):
    """The events of ftrace text ``source`` (the text itself, or a file's path) as a
    DataFrame: ``ts_ns``, ``cpu``, ``comm``, ``pid`` (the task running on that CPU),
    ``event``, then one column per field name seen (``prev_state``, ``next_pid``,
    ``target_cpu``, ``orig_cpu``, ``state``, ``cpu_id``, ...), integers where the text is
    one. A line that is no event is refused with its number."""
    import pandas as pd

    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source):
        name = os.fspath(source)
        try:
            text = Path(name).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(name, "trace", f"a readable ftrace text file ({getattr(e, 'strerror', None) or e})") \
                from None
    else:
        name, text = "trace", source
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if _HEADER.match(line):
            continue
        m = _LINE.match(line)
        if m is None:
            raise InputError(name, f"line {lineno}", "an event line 'COMM-PID [CPU] SECONDS: EVENT: FIELDS'",
                             got=line[:80])
        row = {"ts_ns": _ns(m["ts"]), "cpu": int(m["cpu"]), "comm": m["comm"].strip(), "pid": int(m["pid"]),
               "event": m["event"]}
        # sched_switch's text joins its two halves with an arrow
        for key, val in _FIELD.findall(m["body"].replace(" ==> ", " ")):
            row[key] = _value(val)
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["ts_ns", "cpu", "comm", "pid", "event"])
