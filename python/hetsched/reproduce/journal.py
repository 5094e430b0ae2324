"""``OUT/runs.jsonl``: the result of every run a reproduction completed, one JSON line each,
so that a reproduction stopped part way (Ctrl-C, a failed study, a machine that went to
sleep) continues where it stopped: ``hetsched reproduce --resume``.

A run is known by its hash (:attr:`hetsched.runner.RunSpec.hash`: the function or
simulation and every argument, the seed included) and by the build that computed it
(:func:`build_id`). Only a result of the same run by the same build is taken: the engine is
deterministic, so that result is the one running it again would give, to the bit. A line
of another build is dropped when the journal is opened; a line cut short by a kill is
ignored.

The journal is written as results arrive, one ``write()`` per line on a file opened for
appending, so what a reproduction completed before it was stopped is there even after
SIGKILL. (The sweep's :class:`hetsched.runner.RunStore` keeps flat rows in a Parquet file it
rewrites whole; a study's results hold lists and nested counters, and an append costs one
line, not the file.)"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

JOURNAL = "runs.jsonl"


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
    they are kept in the file but not used, so forgetting ``--resume`` loses nothing."""

    def __init__(self, out_dir: Path, *, resume: bool, build: str | None = None, record: bool = True):
        self.path = Path(out_dir) / JOURNAL
        self.build = build or build_id()
        # False: runs are not journaled (a Ray cluster's workers run their own installs,
        # whose build this process cannot vouch for); the stored ones are still offered
        self.record = record
        kept: dict[str, tuple[str, dict]] = {}  # run hash -> its line and result (the last wins)
        self.dropped = 0            # lines of other builds, or cut short
        if self.path.exists():
            for line in self.path.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                    ok = (rec["build"] == self.build and isinstance(rec["run"], str)
                          and isinstance(rec["result"], dict))
                except (ValueError, KeyError, TypeError):
                    ok = False
                if ok:
                    kept[rec["run"]] = (line, rec["result"])
                else:
                    self.dropped += 1
            # the file again with this build's lines only, under a temporary name and renamed
            tmp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")  # runner.remove_dead_temporaries
            tmp.write_text("".join(line + "\n" for line, _ in kept.values()))
            os.replace(tmp, self.path)
        self.stored: dict[str, dict] = {h: result for h, (_, result) in kept.items()} if resume else {}
        self._fd = -1  # opened at the first run journaled: a reproduction refused early leaves no file

    def add(self, run_hash: str, label: str, result: dict[str, Any]) -> bool:
        """Journal one completed run; False (not journaled: it would run again on resume)
        if its result holds a value JSON would not give back as it is, or runs are not
        recorded."""
        if not self.record:
            return False
        try:
            line = json.dumps({"run": run_hash, "build": self.build, "label": label, "result": result},
                              allow_nan=True)
        except (TypeError, ValueError):
            return False
        if not _same(json.loads(line)["result"], result):
            return False
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self._fd, (line + "\n").encode())
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


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
