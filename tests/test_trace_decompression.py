"""A gzipped trace is measured before it is read: decompressed once as a stream, nothing
kept, and refused once it passes MAX_TRACE_BYTES (hetsched.traces.parse._gunzipped_size).
A gzip bomb (a few MB that expand to gigabytes) then costs the time of decompressing the
bound and no memory, whichever reader it reaches: plain text, a Perfetto trace, a
trace.dat, a systrace page's viewer-data block read line by line or whole (JSON).

Each reader is tried with the bound lowered to 8 MiB and a bomb of 32 MiB, its peak of
Python allocations measured (tracemalloc); one case runs the command line with the real
bound (1 GiB) under a 1 GiB address-space limit, which a reader holding what it
decompressed would exceed.
"""

from __future__ import annotations

import base64
import os
import resource
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import pytest

import hetsched
from hetsched.errors import InputError
from hetsched.traces import parse
from hetsched.traces.parse import TRACE_DAT_MAGIC, load_trace

SMALL_BOUND = 8 << 20
SWITCH = ("  task-{pid} [000] d..3 {ts}: sched_switch: prev_comm=task prev_pid={pid} prev_prio=120 "
          "prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n")


def _bomb(head: bytes, filler: bytes, total: int) -> bytes:
    """A gzip stream of ``head`` then ``filler`` repeated to ``total`` bytes: one member of
    16 MiB compressed once and repeated (gzip reads members one after the other)."""
    block = (filler * ((1 << 24) // len(filler) + 1))[:1 << 24]
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = member.compress(block) + member.flush()
    first = zlib.compressobj(9, zlib.DEFLATED, 31)
    return first.compress(head) + first.flush() + one * (total // len(block) + 1)


def _html(payload: bytes) -> str:
    return ("<!DOCTYPE html>\n<html>\n<body>\n<script id=\"viewer-data\" type=\"text/plain\">\n"
            + base64.b64encode(payload).decode() + "\n</script>\n</body>\n</html>\n")


def _cases(tmp_path: Path) -> dict[str, Path]:
    total = 4 * SMALL_BOUND
    lines = SWITCH.format(pid=3, ts="1.000000").encode()
    files = {
        "ftrace text": ("t.txt.gz", _bomb(lines, lines, total)),
        "zeros": ("z.gz", _bomb(b"", b"\0", total)),
        "perfetto": ("t.perfetto-trace.gz", _bomb(b"\x0a\x80\x80\x80\x80\x04", b"\0", total)),
        "trace.dat": ("t.dat.gz", _bomb(TRACE_DAT_MAGIC, b"\0", total)),
    }
    out = {}
    for name, (fname, data) in files.items():
        out[name] = tmp_path / fname
        out[name].write_bytes(data)
    # a page whose viewer-data block is gzipped: ftrace lines (read line by line), and a
    # JSON document of one line (read whole)
    out["viewer-data lines"] = tmp_path / "lines.html"
    out["viewer-data lines"].write_text(_html(_bomb(lines, lines, total)))
    out["viewer-data json"] = tmp_path / "json.html"
    out["viewer-data json"].write_text(_html(_bomb(b'{"systemTraceEvents": "', b"a", total)))
    return out


@pytest.mark.parametrize("case", ["ftrace text", "zeros", "perfetto", "trace.dat", "viewer-data lines",
                                  "viewer-data json"])
def test_a_bomb_is_refused_at_the_bound_having_kept_nothing(tmp_path, monkeypatch, case):
    monkeypatch.setattr(parse, "MAX_TRACE_BYTES", SMALL_BOUND)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 64 << 10)
    path = _cases(tmp_path)[case]
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as e:
            load_trace(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = e.value
    assert err.source == str(path)
    assert "at most 8 MB once decompressed" in str(err) and "\n" not in str(err)
    assert err.field == ("gzip" if "viewer" not in case else "viewer-data block at line 4")
    # what was decompressed was never held: the peak is the page's copies (a few hundred
    # KB), far less than the bound, let alone the bomb's 32 MiB
    assert peak < SMALL_BOUND // 2, peak


def test_a_gzipped_trace_within_the_bound_reads_as_before(tmp_path, monkeypatch):
    import gzip

    text = "".join(SWITCH.format(pid=3 + i % 2, ts=f"{1 + i / 1000:.6f}") for i in range(2000))
    plain, packed = tmp_path / "t.txt", tmp_path / "t.txt.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)   # many chunks, lines across them
    a, b = load_trace(plain), load_trace(packed)
    assert a.lines == b.lines == 2000 and list(a.events) == list(b.events) and len(a.events) > 0


def test_a_long_line_in_a_gzipped_block_is_skipped_not_held(monkeypatch):
    long = "x" * (parse.MAX_LINE_CHARS * 3)
    data = zlib.compress(f"first\n{long}\nlast".encode(), wbits=31)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 1000)
    got = list(parse._gzip_lines(data, "t.html", "viewer-data block at line 1"))
    assert got == [(1, "first"), (2, "x" * (parse.MAX_LINE_CHARS + 1)), (3, "last")]


def test_the_command_line_refuses_a_real_bomb_in_bounded_memory(tmp_path):
    # 1.1 GiB of ftrace lines in 4.5 MB; before, a reader held up to what it decompressed
    lines = SWITCH.format(pid=3, ts="1.000000").encode()
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(_bomb(lines, lines, (1 << 30) + (100 << 20)))
    cap = 1 << 30

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(hetsched.__file__).resolve().parents[1])] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    proc = subprocess.run([sys.executable, "-m", "hetsched.cli", "replay", str(bomb), "--out", str(tmp_path / "o")],
                          env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"hetsched: error: {bomb}: gzip: expected a trace of at most 1024 MB once decompressed, "
        f"got more than {1 << 30} bytes (decompression stopped there)"]
    assert not (tmp_path / "o").exists()
