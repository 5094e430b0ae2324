"""``OUT/runs.jsonl``: the result of every run a reproduction completed, one JSON line each,
so that a reproduction stopped part way (Ctrl-C, a failed study, a machine that went to
sleep) continues where it stopped: ``hetsched reproduce --resume``.

A run is known by its hash (:attr:`hetsched.runner.RunSpec.hash`: the function or
simulation and every argument, the seed included) and by the build that computed it
(:func:`build_id`). Only a result of the same run by the same build is taken: the engine is
deterministic, so that result is the one running it again would give, to the bit. A line
of another build is dropped when the journal is opened. A line that is not a journal
record (cut short by a kill or a full disk, nested past any record, not JSON) is dropped
too, with one warning naming the file and the line.

The journal is written as results arrive, one ``write()`` per line on a file opened for
appending, so what a reproduction completed before it was stopped is there even after
SIGKILL. A line is written whole or not at all: a write that fails part-way (the disk is
full) is cut back to the end of the last whole line, and the reproduction stops with one
line saying how many runs the journal keeps. (Only SIGKILL during the write itself, or a
cut that fails too, can leave a torn last line; the next reproduction drops it with its
warning.) (The sweep's :class:`hetsched.runner.RunStore` keeps flat rows in a Parquet file it
rewrites whole; a study's results hold lists and nested counters, and an append costs one
line, not the file.)"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

from hetsched.errors import InputError, OutputError
from hetsched.outputs import OutputSet, os_error

JOURNAL = "runs.jsonl"
_write = os.write  # (the tests replace it to fill the disk part-way through a line)



def journaled_runs(out_dir: Path) -> int:
    """The completed runs ``OUT/runs.jsonl`` holds (its lines; 0 where there is none or it
    cannot be read): what a stopped reproduction keeps, which ``--resume`` takes instead of
    running them again."""
    journal = Path(out_dir) / JOURNAL
    try:
        return sum(1 for _ in journal.open()) if journal.is_file() else 0
    except OSError:
        return 0

def build_id(root: Path | None = None) -> str:
    """What a run's result depends on besides its arguments, as 16 hex digits: every file
    of the installed hetsched package (``root``; the study code that runs in the workers,
    the built-in platforms and workloads, the compiled engine), Python's version and those
    of the numeric libraries the studies compute with."""
    import numpy
    import scipy

    root = Path(root) if root is not None else Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for p in sorted(f for f in root.rglob("*") if f.is_file() and "__pycache__" not in f.parts):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    h.update(f"{sys.version}\0{numpy.__version__}\0{scipy.__version__}".encode())
    return h.hexdigest()[:16]


class RunJournal:
    """``OUT/runs.jsonl`` opened for a reproduction. ``resume``: this build's results from
    earlier reproductions into OUT are offered to the runner (:attr:`stored`); without it
    they are kept in the file but not used, so forgetting ``--resume`` loses nothing.
    ``warn``: how to say that lines were dropped (the CLI's warning line; else
    :func:`warnings.warn`)."""

    def __init__(self, out_dir: Path, *, resume: bool, build: str | None = None, record: bool = True,
                 warn: Callable[[str], None] | None = None):
        self.path = Path(out_dir) / JOURNAL
        self.build = build or build_id()
        # False: runs are not journaled (a Ray cluster's workers run their own installs,
        # whose build this process cannot vouch for); the stored ones are still offered
        self.record = record
        self._warn = warn or (lambda message: warnings.warn(message, stacklevel=3))
        kept: dict[str, tuple[str, dict]] = {}  # run hash -> its line and result (the last wins)
        self.dropped = 0            # lines of other builds, or not journal records
        if self.path.is_dir():
            raise OutputError(str(self.path), "--out", f"{JOURNAL} to be a file or absent (it is a directory)",
                              directory=self.path.parent)
        if self.path.exists():
            try:
                text = self.path.read_text(errors="replace")
            except OSError as e:
                raise os_error(e, self.path, "--out", self.path.parent) from None
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            bad: list[tuple[int, str]] = []  # (line number, why) of lines that are not records
            for number, line in enumerate(lines, 1):
                rec, why = _record(line, f"{self.path}: line {number}")
                if rec is None:
                    torn = number == len(lines) and not text.endswith("\n")
                    bad.append((number, "cut short (the disk filled, or the process was killed, while it was "
                                        "written)" if torn else f"not a journal record ({why})"))
                elif rec["build"] == self.build:
                    kept[rec["run"]] = (line, rec["result"])
                self.dropped += rec is None or rec["build"] != self.build
            if bad:
                number, why = bad[0]
                more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
                self._warn(f"{self.path}: line {number}{more}: {why}: dropped, its run runs again")
            if self.dropped or not text.endswith("\n") and text:
                # the file again with this build's lines only, under a temporary name and renamed
                with OutputSet(self.path.parent, record=False) as outs:
                    outs.write(JOURNAL, "".join(line + "\n" for line, _ in kept.values()))
                    outs.commit()
        self.lines = len(kept)  # whole lines in the file
        self.stored: dict[str, dict] = {h: result for h, (_, result) in kept.items()} if resume else {}
        self._fd = -1  # opened at the first run journaled: a reproduction refused early leaves no file

    def add(self, run_hash: str, label: str, result: dict[str, Any]) -> bool:
        """Journal one completed run, its line whole or not at all; False (not journaled:
        it would run again on resume) if its result holds a value JSON would not give back
        as it is, or runs are not recorded. A full disk raises an OutputError saying what
        the journal keeps."""
        if not self.record:
            return False
        try:
            line = json.dumps({"run": run_hash, "build": self.build, "label": label, "result": result},
                              allow_nan=True)
        except (TypeError, ValueError):
            return False
        if not _same(json.loads(line)["result"], result):
            return False
        data = memoryview((line + "\n").encode())
        try:
            if self._fd < 0:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            end = os.fstat(self._fd).st_size  # the lock says no other process appends
        except OSError as e:
            raise self._error(e) from None
        try:
            while data:
                n = _write(self._fd, data)
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                data = data[n:]
        except OSError as e:
            try:
                os.ftruncate(self._fd, end)  # the part written goes: needs no room
            except OSError:
                pass  # left torn: the next reproduction drops it, with a warning
            raise self._error(e) from None
        self.lines += 1
        return True

    def _error(self, e: OSError) -> OutputError:
        n = self.lines
        kept = f"{n} completed run{'s' * (n != 1)} in {self.path} (continue with --resume)" if n else None
        return os_error(e, self.path, "--out", self.path.parent, kept=kept)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def _record(line: str, source: str) -> tuple[dict | None, str]:
    """A journal line's record, of any build, or None and why it is not one."""
    from hetsched import _input

    try:
        rec = _input.parse_json(line, source)  # nesting checked before the parser recurses
    except InputError as e:
        return None, e.expected
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    if not isinstance(rec.get("run"), str) or not isinstance(rec.get("result"), dict) or "build" not in rec:
        return None, "no run hash, build and result"
    return rec, ""


def _same(a: Any, b: Any) -> bool:
    """``a`` (read back from JSON) is ``b``, of the same types: a tuple that comes back a
    list, or a NumPy scalar that comes back a float, would print differently."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    return a == b
