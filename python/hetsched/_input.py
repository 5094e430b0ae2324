"""Checks shared by every place a user's input enters hetsched: the files it reads
(platform JSON, rt-app JSON, grids, learning state, traces) and the numbers it is given
(workload parameters, knob values, durations, seeds, controller options).

Each check raises :class:`~hetsched.errors.InputError` naming the file or option, the
field and what was expected, so that bad input is one line on stderr and exit status 2,
never a traceback, a hang or a run lost at its end.

The limits, and why they are what they are:

* :data:`MAX_FILE_BYTES`, 64 MB per file: the files hetsched reads are kilobytes (a
  platform, a grid, an rt-app file, a learning state); a file is read whole and parsed
  into Python objects of several times its size, so the cap keeps a wrong path (a disk
  image, ``/dev/zero``) from exhausting memory. Traces, which are rightly larger, have
  their own cap (traces/parse.py).
* :data:`MAX_NESTING`, 64 levels of ``[``/``{`` (or YAML blocks): Python's json and
  PyYAML parsers recurse once per level and die with a RecursionError near 1,000 levels
  (fewer when called deep in a stack); no hetsched document nests deeper than about 8
  (rt-app: tasks, task, phases, phase, event, fields), so 64 refuses only what no real
  file needs, with a message instead of a traceback.
* :data:`MAX_SIM_S`, 30 simulated days: a simulated day of phone-mix takes about 130 s
  of wall time on one core (60 s in 0.09 s), so 30 days is about an hour of work;
  beyond that a typo (``--duration 1e12``) would run for years, and the memory a run may
  keep (records, time series) grows with its length.
* :data:`MAX_SEED`, 2**63 - 1: a seed is stored in a sweep's and a comparison's Parquet
  rows as a signed 64-bit integer.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import stat
import sys
import tempfile
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable

from hetsched.errors import InputError, shorten

__all__ = ["MAX_FILE_BYTES", "MAX_NESTING", "MAX_SIM_S", "MAX_SIM_NS", "MAX_SEED", "Shown", "Range",
           "number", "duration_s", "seed", "knob_settings", "read_bytes", "decode_utf8", "read_text",
           "check_json_nesting", "parse_json", "load_json", "parse_yaml", "writable_file", "output_directory"]

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_NESTING = 64
MAX_SIM_S = 30 * 86_400
MAX_SIM_NS = MAX_SIM_S * 1_000_000_000
MAX_SEED = 2**63 - 1


class Shown:
    """A ``got`` value for InputError that prints as given (not quoted, not hidden when
    None): ``Shown("no such file")``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


# ----------------------------------------------------------------------------- numbers

@dataclass(frozen=True)
class Range:
    """The numbers a field accepts: finite, in ``[lo, hi]`` (``lo_open``: ``lo``
    excluded), integers only if ``integer``; ``unit`` follows the range in messages
    (bounds as ``:g`` prints them, as ``hetsched knobs`` does)."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    integer: bool = False
    unit: str = ""
    #: says what is expected instead of the generated phrase
    text: str = ""

    def expected(self) -> str:
        kind = "an integer" if self.integer else "a number"
        unit = f" {self.unit}" if self.unit else ""
        if self.text:
            return self.text
        lo, hi = f"{self.lo:g}" if self.lo is not None else "", f"{self.hi:g}" if self.hi is not None else ""
        if self.lo is not None and self.hi is not None:
            return f"{kind} in {'(' if self.lo_open else '['}{lo}, {hi}]{unit}"
        if self.lo is not None:
            if self.lo == 0:
                return ("a positive " if self.lo_open else "a non-negative ") + kind.split(" ", 1)[1] + unit
            return f"{kind} {'>' if self.lo_open else '>='} {lo}{unit}"
        if self.hi is not None:
            return f"{kind} <= {hi}{unit}"
        return f"a finite {kind.split(' ', 1)[1]}{unit}"

    def holds(self, v: float) -> bool:
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            return False
        return self.hi is None or v <= self.hi


_LARGEST_FLOAT = int(sys.float_info.max)


def _as_number(value: Any) -> float | int | None:
    """A finite int or float from a number or its text; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text)  # exact, where float() would round a large integer
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return None
    if isinstance(value, numbers.Integral):
        v = int(value)
        return v if abs(v) <= _LARGEST_FLOAT else None
    try:  # a float, numpy's numbers, Decimal, Fraction
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def number(value: Any, source: str, field: str, rng: Range = Range()) -> float | int:
    """``value`` (a number or its text) as a finite number within ``rng``: an int if
    ``rng.integer`` (``2.0`` and ``"2"`` are 2; ``2.5`` is refused), else a float. NaN,
    infinities, text that is not a number and values out of range are InputErrors."""
    v = _as_number(value)
    if v is None or not rng.holds(v):
        raise InputError(source, field, rng.expected(), got=value)
    if rng.integer:
        if isinstance(v, float):
            if not v.is_integer():
                raise InputError(source, field, rng.expected(), got=value)
            v = int(v)
        return v
    return float(v)


def duration_s(value: Any, source: str = "--duration", field: str = "duration_s") -> float:
    """A simulated duration in seconds: positive, finite, at most :data:`MAX_SIM_S`."""
    v = _as_number(value)
    if v is None or not 0 < v <= MAX_SIM_S:
        raise InputError(source, field, f"a positive number of simulated seconds, at most {MAX_SIM_S} "
                                        f"({MAX_SIM_S // 86_400} days)", got=value)
    return float(v)


def seed(value: Any, source: str = "--seed", field: str = "seed") -> int:
    """A seed: an integer (not a bool, not text) in ``[0, MAX_SEED]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value <= MAX_SEED:
        raise InputError(source, field, "a non-negative integer, at most 2**63 - 1", got=value)
    return int(value)


# ------------------------------------------------------------------------------- files

def knob_settings(sets: Iterable[str], source: str = "--set") -> dict[str, str]:
    """``knob=value`` strings (``--set``'s) as {knob: value}, each stripped; a later value
    of a knob wins. The knobs and values are checked where a simulation is built."""
    out = {}
    for s in sets:
        k, eq, v = s.partition("=")
        if not eq or not k:
            raise InputError(source, s, "knob=value")
        out[k.strip()] = v.strip()
    return out


def _source(path: str | os.PathLike, source: str | None) -> str:
    return source if source is not None else str(path)


def _no_nul(path: str | os.PathLike, source: str, field: str, what: str) -> None:
    """No file system takes a NUL byte in a path (os.stat raises ValueError on one)."""
    if "\0" in os.fsdecode(path):
        raise InputError(source, field, f"a {what} path without a NUL byte", got=os.fsdecode(path))


def read_bytes(path: str | os.PathLike, source: str | None = None, what: str = "file",
               limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file at ``path`` (at most ``limit``); ``what`` names the kind of
    file in messages ("platform JSON file")."""
    src = _source(path, source)
    _no_nul(path, src, "file", what)
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(src, "file", f"a {what}", got=Shown("a directory"))
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise InputError(src, "file", f"a {what} of at most {limit // 2**20} MB",
                             got=Shown(f"{st.st_size} bytes"))
        with open(path, "rb") as fh:
            # a device or a pipe has no size: read one byte past the limit to know
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise InputError(src, "file", f"an existing {what}", got=Shown("no such file")) from None
    except OSError as e:
        raise InputError(src, "file", f"a readable {what}", got=Shown(e.strerror or type(e).__name__)) from None
    if len(data) > limit:
        raise InputError(src, "file", f"a {what} of at most {limit // 2**20} MB",
                         got=Shown(f"more than {limit} bytes"))
    return data


def decode_utf8(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text; an encoding error names the byte offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(source, "file", "UTF-8 text",
                         got=Shown(f"byte 0x{data[e.start]:02x} at offset {e.start} ({e.reason})")) from None


def read_text(path: str | os.PathLike, source: str | None = None, what: str = "file",
              limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the file at ``path``: :func:`read_bytes`, then decoded."""
    return decode_utf8(read_bytes(path, source, what, limit), _source(path, source))


# JSON strings (which may hold brackets) and the brackets outside them
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_json_nesting(text: str, source: str, limit: int = MAX_NESTING) -> None:
    """Refuses JSON text nested deeper than ``limit`` (before a parser recurses into it).
    Comments must already be stripped (rt-app's JSON-C syntax)."""
    if text.count("[") + text.count("{") <= limit:
        return
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > limit:
        raise InputError(source, "json", f"at most {limit} levels of nested arrays and objects",
                         got=Shown(f"{depth} levels"))


def parse_json(text: str, source: str, **decoder: Any) -> Any:
    """JSON text -> Python, with the nesting limit; ``decoder``: json.loads's keywords
    (``object_pairs_hook``, ``parse_constant``). A syntax error names line and column."""
    import json

    check_json_nesting(text, source)
    try:
        return json.loads(text, **decoder)
    except json.JSONDecodeError as e:
        raise InputError(source, "json", f"valid JSON (line {e.lineno} col {e.colno}: {e.msg})") from None
    except RecursionError:
        raise InputError(source, "json", f"at most {MAX_NESTING} levels of nested arrays and objects") from None
    except ValueError as e:  # an integer of more than 4300 digits (sys.get_int_max_str_digits)
        first = (str(e).splitlines() or [""])[0].split(":")[0]
        raise InputError(source, "json", f"valid JSON ({first[:80]})") from None


def load_json(path: str | os.PathLike, source: str | None = None, what: str = "JSON file", **decoder: Any) -> Any:
    """The JSON document in the file at ``path``: size, encoding, nesting and syntax checked."""
    return parse_json(read_text(path, source, what), _source(path, source), **decoder)


def parse_yaml(text: str, source: str) -> Any:
    """YAML text -> Python (yaml.safe_load's types), refusing more than
    :data:`MAX_NESTING` levels of nesting; a syntax error names the line."""
    import yaml

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):  # the composer recurses once per level
            self.depth += 1
            try:
                if self.depth > MAX_NESTING:
                    mark = self.peek_event().start_mark
                    raise InputError(source, "YAML", f"at most {MAX_NESTING} levels of nesting",
                                     got=Shown(f"more at line {mark.line + 1}"))
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = str(getattr(e, "problem", None) or e).splitlines()[0][:120]
        raise InputError(source, "YAML", f"valid YAML ({problem}{where})") from None
    except RecursionError:
        raise InputError(source, "YAML", f"at most {MAX_NESTING} levels of nesting") from None
    except ValueError as e:  # an integer of more than 4300 digits
        first = (str(e).splitlines() or [""])[0].split(":")[0]
        raise InputError(source, "YAML", f"valid YAML ({first[:80]})") from None


def writable_file(path: str | os.PathLike, source: str, field: str, what: str = "file") -> Path:
    """Checks, before a run, that a file can be written at ``path`` at its end: not a
    directory, and its directory (or the nearest existing ancestor, which the writer
    creates the rest of) one a file can be created in. The ancestor is probed by creating
    and removing a directory in it (permissions alone say yes to root on a read-only or
    pseudo file system); nothing is left behind."""
    _no_nul(path, source, field, what)
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(source, field, f"a {what} path to write (not a directory)", got=str(path))
        if p.exists() and not os.access(p, os.W_OK):
            raise InputError(source, field, f"a writable {what}", got=str(path))
        parent = p.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise InputError(source, field, f"a {what} path in a directory (a parent is a file: "
                                            f"{shorten(str(parent), 200)})", got=str(path))
        os.rmdir(tempfile.mkdtemp(prefix=".hetsched-probe-", dir=parent))
    except OSError as e:
        raise InputError(source, field, f"a {what} path in a writable directory "
                                        f"({e.strerror or type(e).__name__})", got=str(path)) from None
    return p


def output_directory(path: str | os.PathLike, option: str = "--out") -> Path:
    """Checks, before a command runs anything, that its output directory can be written:
    a directory that is writable, or a path whose nearest existing ancestor is a
    directory one can be created in (the command makes the rest). A name too long for
    the file system (NAME_MAX, PATH_MAX) is refused here rather than at the run's end. The
    check probes by creating and removing a directory; nothing is left behind. The error
    names the path (shortened in its middle, so its end shows) and the option."""
    _no_nul(path, option, "directory", "directory")
    source = shorten(os.fsdecode(path), 120)
    p = Path(path)
    try:
        os.stat(p)  # ENAMETOOLONG, ELOOP and EACCES surface here, before any work
    except FileNotFoundError:
        pass
    except OSError as e:
        raise InputError(source, option, f"an output directory path ({e.strerror or type(e).__name__})") from None
    try:
        if p.is_symlink() and not p.exists():  # mkdir would say "File exists"
            raise InputError(source, option, f"an output directory (this is a symbolic link to "
                                             f"{shorten(os.readlink(p), 200)}, which does not exist)")
        if p.exists() and not p.is_dir():
            raise InputError(source, option, "an output directory (this is a file)")
        probe_in = p.absolute()
        while not probe_in.exists() and probe_in != probe_in.parent:
            if probe_in.is_symlink():
                raise InputError(source, option, f"a path in a directory ({shorten(str(probe_in), 200)} is a "
                                                 f"symbolic link to {shorten(os.readlink(probe_in), 200)}, "
                                                 "which does not exist)")
            probe_in = probe_in.parent
        if not probe_in.is_dir():
            raise InputError(source, option, f"a path in a directory (a parent is a file: "
                                             f"{shorten(str(probe_in), 200)})")
        if probe_in != p.absolute():
            # the names still to be made must fit the file system too
            limit = os.pathconf(probe_in, "PC_NAME_MAX")
            rest = p.absolute().relative_to(probe_in).parts
            if any(len(os.fsencode(part)) > limit for part in rest):
                raise InputError(source, option, f"directory names of at most {limit} bytes")
        os.rmdir(tempfile.mkdtemp(prefix=".hetsched-probe-", dir=probe_in))
    except OSError as e:
        raise InputError(source, option, f"a writable output directory ({e.strerror or type(e).__name__})") from None
    return p
