"""Traces read as a stream into columns (traces/store.py): the same events as the
in-memory readers, and a memory that is a fraction of the file's size."""

import gzip
import tracemalloc
from pathlib import Path

import pytest

from hetsched.traces.parse import Freq, Switch, Wakeup, _read_systrace_html, load_trace, parse_text
from hetsched.traces.store import EventStore

HERE = Path(__file__).parent
REAL = HERE.parents[1] / "shared" / "realdata" / "traces"
PAGES = sorted((HERE / "data" / "systrace").glob("*.html")) + sorted(REAL.glob("*.html"))
TEXTS = sorted(REAL.glob("*.txt"))


def same(a, b) -> None:
    assert len(a.events) == len(b.events) and a.events == list(b.events)
    assert (a.lines, a.used, a.skipped, a.first_bad_lines, a.nr_cpus, a.meta) == \
        (b.lines, b.used, b.skipped, b.first_bad_lines, b.nr_cpus, b.meta)
    assert (a.tgids, a.thread_names, a.process_names) == (b.tgids, b.thread_names, b.process_names)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_page_streamed_gives_the_events_of_the_whole_text(page):
    text = page.read_bytes().decode("utf-8", errors="replace")
    try:
        want = _read_systrace_html(text, str(page))
    except Exception as e:  # the same error either way
        with pytest.raises(type(e)) as got:
            load_trace(page)
        assert str(got.value) == str(e)
        return
    same(load_trace(page), want)


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.name)
def test_ftrace_text_streamed_and_gzipped_gives_the_events_of_its_lines(path, tmp_path):
    want = parse_text(path.read_text(errors="replace").splitlines(), str(path), "ftrace")
    got = load_trace(path)
    want.format = got.format  # the header decides it; parse_text is told
    same(got, want)
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()) + b"\0\0" + gzip.compress(b""))  # padding, a second member
    same(load_trace(gz), got)


def test_a_perfetto_trace_streamed_gives_the_events_of_its_bytes(tmp_path):
    pytest.importorskip("perfetto")
    from hetsched.traces.perfetto import read_perfetto

    path = REAL / "pixel6a_tensor_warm_startup.perfetto-trace"
    want = read_perfetto(path.read_bytes(), str(path))
    got = load_trace(path)
    same(got, want)
    assert got.counts() == want.counts() and got.counts()["switch"] > 10_000
    gz = tmp_path / "t.perfetto-trace.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    same(load_trace(gz), want)


def test_the_store_gives_back_the_objects_it_was_given():
    events = [Switch(5, 1, "a b", 7, 120, "S", "<...>", 9, 98), Wakeup(3, 0, "waking", 7, "a b", True, "c", 9, 120,
                                                                        None, False),
              Freq(5, 2, 2_000_000), Wakeup(4, 0, "wakeup_new", 0, "", False, "c", 9, 120, 3)]
    s = EventStore()
    for e in events:
        s.append(e)
    s.finish()
    want = sorted(events, key=lambda e: e.ts)
    assert list(s) == want and s == want and s[-1] == want[-1] and s[1:3] == want[1:3]
    assert s.kind_counts() == {"waking": 1, "wakeup_new": 1, "switch": 1, "freq": 1}
    assert s.comms.count("a b") == 1   # each name held once


def test_a_trace_of_a_few_mb_is_read_in_a_fraction_of_its_size(tmp_path):
    """The events of 6.6 MB of ftrace text, under twice its size (1.6 on 2026-11-28;
    columns of about 50 bytes an event and one chunk of text at a time). Read whole into
    Python objects, as before, it is about four times."""
    sw = ("  Thread-%d-%d  ( 100) [%03d] d..2  %d.%06d: sched_switch: prev_comm=Thread-%d prev_pid=%d "
          "prev_prio=120 prev_state=S ==> next_comm=Worker %d next_pid=%d next_prio=120\n")
    wk = ("  Thread-%d-%d  ( 100) [%03d] d..3  %d.%06d: sched_waking: comm=Worker %d pid=%d prio=120 "
          "target_cpu=%03d\n")
    path = tmp_path / "big.txt"
    with open(path, "w") as f:
        f.write("# tracer: nop\n")
        for i in range(24_000):
            a, b, cpu = 100 + i % 50, 200 + i % 40, i % 8
            f.write(wk % (a % 7, a, cpu, 10 + i // 1_000_000, i % 1_000_000, b % 7, b, cpu))
            f.write(sw % (a % 7, a, cpu, 10 + i // 1_000_000, i % 1_000_000, a % 7, a, b % 7, b))
    size = path.stat().st_size
    load_trace(path)  # imports, caches
    tracemalloc.start()
    try:
        tr = load_trace(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tr.events) == 48_000 and size > 4_000_000
    assert peak < 2 * size, (peak, size, peak / size)
