"""Output files, written all or none.

Every file a command leaves in its output directory goes through an :class:`OutputSet`:
``run``'s and ``replay``'s result, trace and time series, ``compare``'s tables, a sweep's
Parquet file, a study's tables and plots and ``report.html``, ``plot``'s figures, a
recorded trace. A set is written in four steps:

1. **staged**: each file under a temporary name beside its destination,
   ``DIR/.NAME.tmp-PID`` (:func:`remove_dead_temporaries` removes those of a writer that
   died before it could);
2. **checked**: every temporary closed without an error (a full disk shows at the latest
   in ``close()``, which writes what was buffered), every temporary still there (the
   directory was not removed while the command ran), every destination free or a file (a
   directory in the way is found here, before anything is renamed);
3. **renamed together**, a signal held back until the last rename. A rename that still
   fails part-way (the directory removed between the check and the rename) puts the
   earlier ones back: each destination that existed was hard-linked beside itself first,
   ``DIR/.NAME.tmp-PID.old``, and is restored from that link;
4. **cleaned up** on any failure: every temporary is closed and removed whatever the
   others do. Closing a file on a full disk fails (its buffer cannot be written), but the
   descriptor is released all the same, and removing a file never needs room.

Files of an earlier writer of the same kind that this set does not write again (a
``run --trace`` into a directory, then a ``run`` without it) are named by ``replaces``
and removed once the new files are in place: a directory holds one run's files, never a
trace of the last run beside the result of this one. :attr:`OutputSet.removed` lists
them, so that the command can say so.

Errors are :class:`~hetsched.errors.OutputError`: one line naming the file, the option
that named its directory and what the file system said (``No space left on device``),
exit status 2 like any input the command cannot use.

The blind spots: no ``fsync``, so a crash of the machine (not of the command) may leave a
renamed file empty on some file systems (the sweep's store alone syncs, for it is
rewritten while a long sweep runs); and a writer killed with SIGKILL during its renames
(a few microseconds) leaves some renamed and the rest as temporaries, which the next
writer removes.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterable, Iterator

from hetsched.errors import OutputError, shorten

__all__ = ["OutputSet", "RunFiles", "run_file_names", "timeseries_csv_rows", "recording", "describe",
           "remove_dead_temporaries", "os_error"]

_recorders: list[list[Path]] = []


@contextmanager
def recording(into: list[Path]) -> Iterator[list[Path]]:
    """Every file an :class:`OutputSet` renames into place inside the block is appended
    to ``into`` (the CLI's record of what a command kept, for its last line)."""
    _recorders.append(into)
    try:
        yield into
    finally:
        _recorders.remove(into)


def describe(paths: list[Path], limit: int = 4) -> str:
    """Files for a message: each of a few; past ``limit``, their count per directory."""
    if len(paths) <= limit:
        return ", ".join(shorten(str(p), 200) for p in paths)
    by_dir: dict[Path, int] = {}
    for p in paths:
        by_dir[p.parent] = by_dir.get(p.parent, 0) + 1
    return ", ".join(f"{n} file{'s' * (n != 1)} in {shorten(str(d), 200)}" for d, n in by_dir.items())


def os_error(e: OSError, path: Path | str, option: str, directory: Path | str | None = None,
             kept: str | None = None) -> OutputError:
    """An OSError met writing ``path`` as the one-line error: what the file needed, and
    what the file system said."""
    said = e.strerror or type(e).__name__
    if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        expected = "room for the file"
    elif e.errno == errno.EISDIR:
        expected = "a file name, not a directory"
    elif e.errno == errno.ENOENT:
        expected = "its directory to stay in place while the command runs (it was removed)"
        said = None
    elif e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        expected = "a writable directory"
    else:
        expected = "a file it can write"
    from hetsched._input import Shown

    return OutputError(shorten(str(path), 200), option, expected, Shown(said) if said else None,
                       directory=directory if directory is not None else Path(path).parent, kept=kept)


def _open(path: Path) -> IO[bytes]:
    """A temporary opened for writing (the tests replace this to fill the disk)."""
    return open(path, "wb")


_TEMPORARY = re.compile(r"\.tmp-(\d+)(?:\.old)?$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_dead_temporaries(directory: str | os.PathLike, name: str = "*") -> list[Path]:
    """Remove ``DIRECTORY/.NAME.tmp-PID`` and ``.NAME.tmp-PID.old`` (files, or a study's
    directory), the temporaries of writers that died (SIGKILL, power loss) before renaming
    them into place; those of a live process are its own business. ``name``: only those
    of this file (a directory that is not hetsched's own). Returns what was removed."""
    import shutil

    d = Path(directory)
    removed: list[Path] = []
    try:
        if not d.is_dir():
            return removed
        found = list(d.glob(f".{glob.escape(name) if name != '*' else '*'}.tmp-*"))
    except OSError:  # a path the writer itself will report (too long, no access)
        return removed
    for p in found:
        m = _TEMPORARY.search(p.name)
        if m is None or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
        except FileNotFoundError:
            pass
        except OSError:  # not ours to fight over: the writer reports what it cannot do
            pass
    return removed


class _Stream:
    """A staged file written as the command goes. An OSError (a full disk) comes out as
    the set's one-line error."""

    def __init__(self, owner: "OutputSet", name: str, f: IO[bytes]):
        self._owner, self.name, self._f = owner, name, f

    def write(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode()
        try:
            self._f.write(data)
        except OSError as e:
            raise self._owner.error(e, self.name) from None


class OutputSet:
    """The files one command writes into ``directory``, renamed into place together by
    :meth:`commit` or removed by :meth:`abort` (module doc). ``option`` names the
    directory in errors (``--out``); ``replaces``: names (globs, relative to the
    directory) of files an earlier writer of the same kind may have left, removed at the
    commit unless this set writes them; ``sync``: each file reaches the disk before it is
    renamed (a store rewritten while a long batch runs); ``record``: False for a file the
    command rewrites in passing (a journal), which is not reported to :func:`recording`;
    ``clean``: whose dead writers' temporaries to remove first (``*``: every one, in a
    directory of hetsched's own; a file's name in a directory of the user's). Use as a
    context manager, or call :meth:`abort` on any failure."""

    def __init__(self, directory: str | os.PathLike, *, option: str = "--out", replaces: Iterable[str] = (),
                 sync: bool = False, record: bool = True, clean: str = "*"):
        self.directory = Path(directory)
        self.option = option
        self.replaces = tuple(replaces)
        self.sync = sync  # fsync each file before its rename, and the directory after
        self.record = record  # reported to recording(): an output of the command, not a file it rewrites
        self._staged: dict[str, Path] = {}         # name -> its temporary, in the order written
        self._open: dict[str, IO[bytes]] = {}      # the temporaries still open
        self._made: list[Path] = []                # directories this set created
        self.removed: list[Path] = []              # files of an earlier writer, removed by commit
        self.not_removed: list[tuple[Path, str]] = []  # those that could not be (path, why)
        remove_dead_temporaries(self.directory, clean)

    # -- errors ------------------------------------------------------------------------
    def error(self, e: OSError, name: str | None = None) -> OutputError:
        return os_error(e, self.directory / name if name else self.directory, self.option, self.directory)

    def _in_the_way(self, name: str) -> OutputError:
        return OutputError(shorten(str(self.directory / name), 200), self.option,
                           f"{name} to be a file or absent (it is a directory)", directory=self.directory)

    # -- checking ------------------------------------------------------------------------
    def check(self, *names: str) -> None:
        """Refuse now a destination that a directory holds (before a long run that would
        fail at its end); :meth:`commit` checks every one again."""
        for name in names:
            final = self.directory / name
            try:
                st = os.lstat(final)
            except FileNotFoundError:
                continue
            except OSError as e:
                raise self.error(e, name) from None
            if stat.S_ISDIR(st.st_mode):
                raise self._in_the_way(name)

    # -- staging -------------------------------------------------------------------------
    def _mkdirs(self, d: Path) -> None:
        missing = []
        while not d.is_dir():
            missing.append(d)
            if d == d.parent:
                break
            d = d.parent
        for m in reversed(missing):
            try:
                m.mkdir()
            except FileExistsError:
                if not m.is_dir():
                    raise
                continue
            self._made.append(m)

    def _temporary(self, name: str) -> Path:
        if name in self._staged:
            raise ValueError(f"{name} is staged twice")
        self.check(name)
        final = self.directory / name
        tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
        try:
            self._mkdirs(final.parent)
        except OSError as e:
            if e.errno == errno.EEXIST or isinstance(e, NotADirectoryError):
                in_the_way = next((p for p in (final.parent, *final.parent.parents) if os.path.lexists(p)),
                                  final.parent)
                what = ("a symbolic link to a directory that does not exist" if in_the_way.is_symlink()
                        else "a file")
                raise OutputError(shorten(str(in_the_way), 200), self.option, f"a directory (it is {what})",
                                  directory=self.directory) from None
            raise self.error(e, name) from None
        self._staged[name] = tmp
        return tmp

    def stream(self, name: str) -> _Stream:
        """A file to write as the command goes (bytes, or text as UTF-8)."""
        tmp = self._temporary(name)
        try:
            self._open[name] = _open(tmp)
        except OSError as e:
            raise self.error(e, name) from None
        return _Stream(self, name, self._open[name])

    def write(self, name: str, data: bytes | str) -> Path:
        """A whole file, staged; returns its destination."""
        self.stream(name).write(data)
        self._close(name)
        return self.directory / name

    def adopt(self, name: str, path: Path) -> None:
        """A file written elsewhere on the same file system (a study's own staging
        directory), to be renamed to ``name`` with the others."""
        self._temporary(name)
        self._staged[name] = path

    def _close(self, name: str) -> None:
        f = self._open.pop(name)
        try:
            if self.sync:
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            try:
                f.close()
            except OSError:
                pass
            raise self.error(e, name) from None
        try:
            f.close()  # on an error the descriptor is released all the same
        except OSError as e:
            raise self.error(e, name) from None

    # -- committing --------------------------------------------------------------------------
    def commit(self) -> list[Path]:
        """Close, check, rename every file into place and remove what ``replaces`` names
        that this set did not write; the destinations, in the order staged. On any error
        nothing is renamed (or what was is put back) and the temporaries are removed."""
        from hetsched.runner import uninterrupted

        try:
            with uninterrupted():  # all renamed or none: a signal is taken after the last
                for name in list(self._open):
                    self._close(name)
                for name, tmp in self._staged.items():
                    if not os.path.lexists(tmp):  # its directory went away with it
                        raise self.error(OSError(errno.ENOENT, "removed"), name)
                    self.check(name)
                done = self._rename_all()
                if self.sync:
                    self._sync_directory()
                self._remove_replaced()
        except BaseException:
            self.abort()
            raise
        self._staged = {}
        self._made = []
        for r in _recorders if self.record else ():
            r.extend(done)
        return done

    def _rename_all(self) -> list[Path]:
        backups: dict[str, Path] = {}
        renamed: list[str] = []
        try:
            for name, tmp in self._staged.items():
                final = self.directory / name
                if os.path.lexists(final):
                    old = tmp.with_name(f".{final.name}.tmp-{os.getpid()}.old")
                    try:
                        os.unlink(old)
                    except FileNotFoundError:
                        pass
                    try:
                        os.link(final, old, follow_symlinks=False)
                        backups[name] = old
                    except OSError:  # no hard links here (or no room): it cannot be put back
                        pass
            for name, tmp in self._staged.items():
                try:
                    os.replace(tmp, self.directory / name)
                except OSError as e:
                    raise self.error(e, name) from None
                renamed.append(name)
        except BaseException:
            for name in reversed(renamed):  # put back what the earlier renames replaced
                final = self.directory / name
                try:
                    if name in backups:
                        os.replace(backups.pop(name), final)
                    else:
                        os.unlink(final)
                except OSError:
                    pass
            raise
        finally:
            for old in backups.values():
                try:
                    os.unlink(old)
                except OSError:
                    pass
        return [self.directory / name for name in self._staged]

    def _sync_directory(self) -> None:
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:  # the renames are done; a file system that cannot sync a directory
            pass
        finally:
            os.close(fd)

    def _remove_replaced(self) -> None:
        written = {os.path.normpath(n) for n in self._staged}
        emptied: set[Path] = set()
        for pattern in self.replaces:
            try:
                found = sorted(self.directory.glob(pattern))
            except OSError:
                continue
            for p in found:
                rel = os.path.normpath(p.relative_to(self.directory))
                if rel in written or p.name.startswith("."):
                    continue
                try:
                    if p.is_dir() and not p.is_symlink():
                        continue  # not a file of ours
                    p.unlink()
                except FileNotFoundError:
                    continue
                except OSError as e:
                    self.not_removed.append((p, e.strerror or type(e).__name__))
                    continue
                self.removed.append(p)
                if p.parent != self.directory:
                    emptied.add(p.parent)
        for d in emptied:  # plots/ that held only an earlier run's figures
            try:
                d.rmdir()
            except OSError:
                pass

    def removed_line(self, what: str = "run", this: str = "") -> str:
        """The line naming the files of an earlier ``what`` (run, comparison) that
        :meth:`commit` removed, "" if none: the files beside the new ones are then all
        this writer's, and a user who finds one gone reads why. Top-level files are named,
        plots counted (a run draws a dozen)."""
        if not self.removed:
            return ""
        names = [str(p.relative_to(self.directory)) for p in self.removed]
        top = [n for n in names if "/" not in n]
        plots = len(names) - len(top)
        shown = ", ".join(top) + (" and " if top and plots else "") + (f"{plots} plot{'s' * (plots != 1)}"
                                                                        if plots else "")
        return (f"removed {shown} of an earlier {what} in {self.directory}, which this {this or what} does not "
                "write")

    def left_lines(self, what: str = "run") -> list[str]:
        """A warning for each file of an earlier ``what`` that :meth:`commit` could not
        remove, and why: it now sits beside files of another writer."""
        return [f"{f}, an earlier {what}'s file, is left: {why}" for f, why in self.not_removed]

    # -- failing ---------------------------------------------------------------------------
    def abort(self) -> list[Path]:
        """Close and remove every temporary, then the directories this set created (if
        empty); each step is tried whatever the others did. Returns what could not be
        removed."""
        from hetsched.runner import uninterrupted

        with uninterrupted():  # a signal is taken once everything is removed
            return self._remove_all()

    def _remove_all(self) -> list[Path]:
        left: list[Path] = []
        for f in self._open.values():
            try:
                f.close()
            except Exception:  # the buffer could not be written (a full disk): the descriptor is closed anyway
                pass
        self._open = {}
        for tmp in self._staged.values():
            try:
                if tmp.is_dir() and not tmp.is_symlink():
                    import shutil

                    shutil.rmtree(tmp, ignore_errors=True)
                else:
                    os.unlink(tmp)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(tmp)
        self._staged = {}
        for d in reversed(self._made):
            try:
                d.rmdir()
            except OSError:
                pass
        self._made = []
        return left

    def __enter__(self) -> "OutputSet":
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is not None:
            self.abort()


# ----------------------------------------------------------------------------- a run's files

def timeseries_csv_rows(ts: dict) -> str:
    """Rows of a drained time series (``Simulation.drain_timeseries``) as CSV: the time in
    seconds, then the engine's columns in its order (the first is the time in ns)."""
    cols = list(ts)
    return "".join(f"{row[0] / 1e9!r},{','.join(map(str, row))}\n" for row in zip(*(ts[c] for c in cols)))


def run_file_names() -> tuple[str, ...]:
    """Every file a run or a replay may write into OUT (and the plots drawn from them): what
    another run into the same OUT replaces, whether it writes each again or not."""
    from hetsched.sim import TRACE_FORMATS

    return ("result.json", "phases.txt", "timeseries.csv", *TRACE_FORMATS.values(), "workload.json",
            "plots/run_*", "plots/run.html")


class RunFiles:
    """A run's files, all or none: result.json, timeseries.csv (if recorded), the trace (if
    asked: trace.perfetto-trace, trace.txt or trace.json by its format), phases.txt (rt-app's
    per-phase log) and any extra ones. The trace and the time series are written as the run
    goes, from what the engine recorded since the last step (:meth:`drain`, called between
    steps), so memory stays flat however long the run (docs/traces.md gives their sizes per
    simulated second). The files of an earlier run or replay in OUT that this one does not
    write are removed when its files are renamed into place (``outs.removed``)."""

    def __init__(self, out: Path, sim, timeseries: bool, extra: tuple[str, ...] = ()):
        from hetsched.sim import TRACE_FORMATS

        self.sim = sim
        self.outs = OutputSet(out, replaces=run_file_names())
        try:
            # a directory in the way of a file written at the end is refused before the run
            self.outs.check("result.json", "phases.txt", *extra)
            fmt = sim.trace_format
            self.trace = self.outs.stream(TRACE_FORMATS[fmt]) if fmt else None
            self.timeseries = self.outs.stream("timeseries.csv") if timeseries else None
        except BaseException:
            self.outs.abort()
            raise
        self.header = False

    def drain(self) -> None:
        """Write what the engine recorded since the last call to the trace and time series."""
        if self.trace is not None:
            self.trace.write(self.sim.drain_trace_bytes() or b"")
        if self.timeseries is not None:
            ts = self.sim.drain_timeseries() or {}
            if not self.header:
                self.timeseries.write(",".join(["t_s", *ts]) + "\n")
                self.header = True
            self.timeseries.write(timeseries_csv_rows(ts))

    def commit(self, res, extra: dict | None = None) -> list[Path]:
        """The run's last records, result.json, phases.txt and ``extra`` ({name: text}),
        renamed into place together; the files written."""
        from hetsched.workloads.rtapp import format_phase_log, phase_log

        self.drain()
        if self.trace is not None:
            self.trace.write(self.sim.take_trace_bytes() or b"")
        self.outs.write("result.json", res.to_json())
        self.outs.write("phases.txt", format_phase_log(phase_log(res.doc)))
        for name, text in (extra or {}).items():
            self.outs.write(name, text)
        return self.outs.commit()

    def abort(self) -> None:
        self.outs.abort()
