"""The rt-app files shipped with the package (examples/, provenance in examples/SOURCES.md).

``--workload rtapp_example3.json`` names a file. When no file of that name exists and the
name is bare (no directory in it), it names the shipped example of that name. So:

* a file the user has always wins: an example copied into the working directory and edited
  there, under the same name, is the one that runs, never the shipped original;
* a path with a directory in it is only ever that path: a mistyped path stays an error and
  is never replaced by an example that happens to share its last component;
* an example added to the package later cannot change what an existing file argument means.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["EXAMPLES", "example_path", "examples_dir", "rtapp_file"]

#: shipped file -> one line on what it runs (the listing of ``hetsched workloads``)
EXAMPLES: dict[str, str] = {
    "rtapp_example1.json": "one thread, run 20 ms then sleep 80 ms, 2 s (rt-app tutorial)",
    "rtapp_example2.json": "one thread, 10 ms of work every 100 ms on a timer: a 10 % periodic load, 2 s",
    "rtapp_example3.json": "12 threads at 10 % then 90 % of a 30 ms period, 0.3 s each, then exit",
    "rtapp_example4.json": "two threads waking each other in turn (resume/suspend), 10 ms of work each",
    "rtapp_example5.json": "two threads pinned to CPUs 0 and 1: a mutex, signal/wait, resume/suspend",
    "rtapp_example6.json": "CPU, memory (mem) and I/O (iorun) load, 2 s",
    "rtapp_example7.json": "two threads driving each other through barriers, 5 s",
    "rtapp_example8.json": "one thread whose CPU affinity changes per phase (CPUs 0, 1, 2)",
    "rtapp_example9.json": "fork: a thread that starts other threads as it runs, 2 s",
    "rtapp_spreading-tasks.json": "two threads alternating light (10 %) and heavy (70 %) phases of 10 ms periods, 60 s",
    "rtapp_mp3-short.json": "Android-style audio playback pipeline on a shared timer, 6 s",
    "rtapp_browser-short.json": "browser use case: threads synchronised by sync and signal/wait, 6 s",
    "rtapp_custom-slice.json": "a SCHED_DEADLINE task beside a SCHED_OTHER task with a custom slice, 2 s",
    "wa_camera-short.json": "camera pipeline, 57 threads on 33, 16.7 and 3 ms timers (Workload Automation), 6 s",
}


def examples_dir() -> Path:
    # a directory on disk: the package is installed unpacked (a wheel or an editable install)
    return Path(str(resources.files("hetsched.workloads").joinpath("examples")))


def example_path(name: str) -> Path | None:
    """The shipped example called ``name`` (``rtapp_example3.json``), or None."""
    if name not in EXAMPLES:
        return None
    path = examples_dir() / name
    return path if path.is_file() else None


def rtapp_file(arg: str) -> str | None:
    """The file a ``--workload`` argument names: the argument itself when it is a file, else
    the shipped example of that bare name, else None."""
    if os.path.isfile(arg):
        return arg
    if os.path.basename(arg) != arg or (os.altsep and os.altsep in arg):
        return None
    path = example_path(arg)
    return None if path is None else str(path)
