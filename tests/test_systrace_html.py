"""Systrace / Catapult HTML pages as Android's tools write them (traces/parse.py's HTML reader).

Expected values are counted from the pages' text by other means (regular expressions over
the raw page, the trace viewer's own way of cutting the old pages' string into lines, and
Node.js evaluating that JavaScript string where Node is installed), or worked out by hand
for the small pages of tests/data/systrace/ (SOURCES.md there says which tool's layout each
follows, and where rows were taken from).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.traces import load_trace, parse_text
from hetsched.traces.parse import Switch, Wakeup, _read_systrace_html

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "realdata" / "traces"
DATA = REPO / "tests" / "data" / "systrace"
TAG = '  <script class="trace-data" type="application/text">\n'


def real(name: str) -> Path:
    p = TRACES / name
    if not p.is_file():
        pytest.skip(f"{p} is not available")
    return p


def count(lines, event: str) -> int:
    return sum(1 for ln in lines if f": {event}: " in ln)


def node_string(page: str) -> str:
    """The value of linuxPerfData as a JavaScript engine reads the page's <script>."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed")
    script = re.search(r"<script>\n(.*?)</script>", page, re.S).group(1)
    prog = ("const vm = require('vm'); let src = require('fs').readFileSync(0, 'utf8');"
            "process.stdout.write(JSON.stringify(vm.runInNewContext(src + ';linuxPerfData')));")
    out = subprocess.run([node, "-e", prog], input=script, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# --- the real pages ---------------------------------------------------------------------------

def test_trappy_page_every_scheduler_line_and_the_tgid_column():
    raw = real("trappy_android_surfaceflinger_systrace.html").read_text()
    start = raw.index(TAG) + len(TAG)
    block = raw[start:raw.index("</script>", start)].splitlines()
    tr = load_trace(real("trappy_android_surfaceflinger_systrace.html"))
    c = tr.counts()
    assert (c["switch"], c["wakeup"]) == (count(block, "sched_switch"), count(block, "sched_wakeup")) == (715, 421)
    # pid -> tgid of the column, first seen, on the lines of the events the reader keeps
    want: dict[int, int] = {}
    for ln in block:
        m = re.match(r"^\s*.+?-(\d+)\s+\(\s*(\d+)\)\s+\[\d+\].*?: (sched_switch|sched_wakeup|cpu_idle|cpu_frequency): ",
                     ln)
        if m and int(m.group(1)):
            want.setdefault(int(m.group(1)), int(m.group(2)))
    assert tr.tgids == want and len(want) == 74
    assert tr.thread_names == {} and tr.process_names == {}   # this page has no process dump


def catapult_lines(page: str) -> list[str]:
    """The 2012 page's trace lines the way the trace viewer cut them
    (_extractEventsFromSystraceHTML): the source lines between the string's opening line
    and </script>, less their "\\n\\" endings (the last line's "\\n";)."""
    lines = page.split("\n")
    first = lines.index('  var linuxPerfData = "\\') + 1
    last = next(i for i in range(first, len(lines)) if lines[i] == "  </script>")
    body = [ln[:-3] if ln.endswith("\\n\\") else ln for ln in lines[first:last]]
    assert body[-1].endswith('\\n";')
    body[-1] = body[-1][:-4]
    return body


def test_catapult_2012_page_reads_its_javascript_string():
    p = real("catapult_2cpu_launcher_2012.html")
    page = p.read_text()
    lines = catapult_lines(page)
    tr = load_trace(p)
    c = tr.counts()
    assert (c["switch"], c["wakeup"]) == (count(lines, "sched_switch"), count(lines, "sched_wakeup")) == (11074, 6827)
    ran = {int(m.group(1)) for ln in lines for m in [re.search(r": sched_switch: .* next_pid=(\d+) ", ln)] if m}
    ran.discard(0)
    assert {e.next_pid for e in tr.events if isinstance(e, Switch) and e.next_pid} == ran and len(ran) == 63
    assert tr.nr_cpus == 2 and tr.skipped["malformed line"] == 0
    # the string holds "\n" escapes and line continuations only: a JavaScript engine's
    # value of it is those lines
    assert node_string(page) == "\n".join(lines) + "\n"


# --- the layouts of the tools, by hand --------------------------------------------------------

def test_systrace_page_with_a_toybox_process_dump():
    """systrace's output_generator layout (as in 2019-2021 phone traces): PROCESS DUMP with
    the two snapshots, ftrace text with the tgid column, the controller's JSON."""
    tr = load_trace(DATA / "toybox_process_dump.html")
    assert tr.format == "systrace" and tr.nr_cpus == 8
    assert tr.counts() == {"switch": 7, "waking": 1, "wakeup": 1, "idle": 1}
    assert dict(tr.skipped) == {"event tracing_mark_write": 1}
    # the tgid column (990, 1021, 30778, 31010 -> 31000) and the dumps' listings; 30801 is
    # "(-----)" in the column and the second dump's RenderThread of 30778
    assert tr.tgids == {1: 1, 2: 2, 990: 990, 1021: 990, 1100: 990, 1101: 990, 30778: 30778, 30790: 30778,
                        30801: 30778, 31000: 31000, 31010: 31000}
    # the second snapshot names 30778 as it ended the trace, and adds 1101, 30801 and 31000
    assert tr.thread_names == {1: "init", 2: "kthreadd", 990: "surfaceflinger", 1021: "RenderEngine",
                               1100: "Binder:990_1", 1101: "Binder:990_2", 30778: "le.scroll",
                               30790: "Signal Catcher", 30801: "RenderThread", 31000: "ple.other:remote"}
    # [kthreadd]: ps brackets the comm of a process without a command line
    assert tr.process_names == {1: "init", 990: "surfaceflinger", 30778: "com.example.scroll",
                                31000: "com.example.other:remote"}


def test_systrace_page_with_a_toolbox_process_dump():
    """`ps` then `ps -t` of an old device (rows from Catapult's atrace_ps_dump): a thread's
    row gives its tid as PID and its process as PPID; no tgid column in the ftrace text."""
    tr = load_trace(DATA / "toolbox_process_dump.html")
    assert tr.counts() == {"switch": 5, "wakeup": 1} and not tr.skipped
    assert tr.tgids == {1: 1, 2: 2, 3: 3, 169: 169, 180: 180, 194: 194, 216: 169, 217: 169, 218: 169, 244: 169,
                        240: 180, 242: 180, 396: 180, 397: 180, 755: 194, 5633: 180}
    assert tr.thread_names == {216: "logd.reader", 217: "logd.writer", 218: "logd", 244: "logd.auditd",
                               240: "Binder_1", 242: "DispSync", 396: "GL updater", 397: "surfaceflinger",
                               755: "ApmTone", 5633: "Binder_5"}
    assert tr.process_names == {1: "init", 2: "kthreadd", 3: "ksoftirqd/0", 169: "logd", 180: "surfaceflinger",
                                194: "mediaserver"}
    assert [e.next_comm for e in tr.events if isinstance(e, Switch)][-2] == "GL updater"


def test_atrace_helper_process_dump():
    tr = load_trace(DATA / "atrace_helper_dump.html")
    assert tr.counts() == {"switch": 3}
    assert tr.tgids == {37: 37, 788: 788, 793: 788}
    assert tr.thread_names == {788: "system_server", 793: "Signal Catcher"}
    assert tr.process_names == {37: "kworker/5:0H", 788: "system_server"}


def test_systrace_legacy_block_with_escaped_newlines():
    tr = load_trace(DATA / "systrace_legacy_escaped.html")
    assert tr.counts() == {"switch": 3, "wakeup": 1} and not tr.skipped
    assert [(e.prev_pid, e.next_pid, e.next_prio) for e in tr.events if isinstance(e, Switch)] == \
        [(0, 419, 112), (419, 420, 112), (420, 0, 120)]


def test_javascript_string_escapes():
    page = (DATA / "linuxperfdata_escapes.html").read_text()
    tr = load_trace(DATA / "linuxperfdata_escapes.html")
    sw = [(e.ts, e.cpu, e.prev_comm, e.prev_pid, e.next_comm, e.next_pid) for e in tr.events if isinstance(e, Switch)]
    assert sw == [
        (100_000_100_000, 0, "swapper", 0, "App", 700),                  # \x41
        (100_000_300_000, 0, "App", 700, "ABC", 702),                    # \101\102 (legacy octal)
        (100_000_350_000, 1, "swapper", 0, "Worker", 701),               # second trace line of page line 18
        (100_000_400_000, 0, "ABC", 702, "Smile\U0001F600\U0001F600", 703),  # \u{1F600}, \uD83D\uDE00
        (100_000_500_000, 0, "Smile\U0001F600\U0001F600", 703, "it's \"q\" a\\b", 704),
        (100_000_600_000, 1, "Worker", 701, "swapper", 0)]
    wk = [e for e in tr.events if isinstance(e, Wakeup)]
    assert [(w.comm, w.pid, w.waker_pid) for w in wk] == [("Worker", 701, 700)]         # \u0057
    # the one line that is no trace line is page line 22; the clock-sync line is event "0"
    assert tr.first_bad_lines == [(22, "malformed line")] and dict(tr.skipped) == {"malformed line": 1, "event 0": 1}
    assert tr.lines == 9
    # a JavaScript engine's value of the string, cut at its newlines, reads the same
    js = node_string(page)
    assert js.count("\n") == 13   # the 4 header lines, then 9 event lines (page line 18 holds two)
    assert parse_text(js.split("\n"), str(DATA / "linuxperfdata_escapes.html"), "systrace").events == tr.events


def test_two_ftrace_blocks_make_one_trace(tmp_path):
    page = (DATA / "toybox_process_dump.html").read_text()
    more = ("# tracer: nop\n#\n"
            "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
            "          <idle>-0     (-----) [006] d..2  4999.000000: sched_switch: prev_comm=swapper/6 prev_pid=0 "
            "prev_prio=120 prev_state=R ==> next_comm=logd next_pid=545 next_prio=130\n"
            "            logd-545   (  545) [006] d..2  4999.000700: sched_switch: prev_comm=logd prev_pid=545 "
            "prev_prio=130 prev_state=S ==> next_comm=swapper/6 next_pid=0 next_prio=120\n"
            "garbage\n")
    at = page.index("<!-- END TRACE -->")
    p = tmp_path / "two.html"
    p.write_text(page[:at] + TAG + more + "  </script>\n" + page[at:])
    tr = load_trace(p)
    assert tr.counts()["switch"] == 9 and tr.events[0].ts == 4_999_000_000_000   # both blocks, in time order
    assert tr.tgids[545] == 545 and tr.thread_names[30801] == "RenderThread"
    garbage = page[:at].count("\n") + 2 + more.split("\n").index("garbage")
    assert tr.first_bad_lines == [(garbage, "malformed line")]


def _b64gz(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def test_trace2html_viewer_data_and_json_system_trace_events(tmp_path):
    """trace2html's blocks: base64 of gzip, text/plain (an agent's text) or application/json
    (a JSON trace, which may carry the ftrace text as "systemTraceEvents")."""
    page = (DATA / "toybox_process_dump.html").read_text()
    blocks = re.findall(r'<script class="trace-data" type="application/text">\n(.*?)</script>', page, re.S)
    dump, ftrace = blocks[0], blocks[1]
    doc = json.dumps({"traceEvents": [], "systemTraceEvents": ftrace})
    p = tmp_path / "t2h.html"
    p.write_text("<!DOCTYPE html>\n<html>\n<head></head>\n<body>\n"
                 f'<script id="viewer-data" type="text/plain">\n{_b64gz(dump)}\n</script>\n'
                 f'<script id="viewer-data" type="application/json">\n{_b64gz(doc)}\n</script>\n</body>\n</html>\n')
    tr = load_trace(p)
    want = load_trace(DATA / "toybox_process_dump.html")
    assert tr.events == want.events and tr.tgids == want.tgids
    assert tr.thread_names == want.thread_names and tr.process_names == want.process_names
    # systrace's --json output in a trace-data block: each agent's text under its name
    q = tmp_path / "json.html"
    doc = json.dumps({"systemTraceEvents": ftrace, "androidProcessDump": dump})
    q.write_text("<!DOCTYPE html>\n<html>\n<body>\n" + TAG + doc + "\n  </script>\n</body>\n</html>\n")
    tq = load_trace(q)
    assert tq.events == want.events and tq.process_names == want.process_names


def test_large_page_is_read_without_copies(tmp_path):
    """A page of 11 MB of trace text: reading it from the page's text takes no copy of the
    block nor a list of its lines (each would be as large as the text), only the events."""
    line = ("    RenderThread-9001  ( 9000) [003] ...1  7000.%06d: tracing_mark_write: "
            "B|9000|Record View#draw() of a long list item\n")
    n = 100_000
    sw = ("          <idle>-0     (-----) [003] d..2  7001.000000: sched_switch: prev_comm=swapper/3 prev_pid=0 "
          "prev_prio=120 prev_state=R ==> next_comm=RenderThread next_pid=9001 next_prio=110\n")
    text = ("<!DOCTYPE html>\n<html>\n<body>\n" + TAG + "# tracer: nop\n" + "".join(line % i for i in range(n))
            + sw + "  </script>\n</body>\n</html>\n")
    tracemalloc.start()
    try:
        tr = _read_systrace_html(text, "big.html")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tr.lines == n + 1 and tr.counts() == {"switch": 1}
    assert peak < 0.2 * len(text), (peak, len(text))


# --- bad and cut files ------------------------------------------------------------------------

def _cut(src: Path, dst: Path, at: str) -> Path:
    text = src.read_text()
    dst.write_text(text[:text.index(at)])
    return dst


def one_line_error(p: Path, *words: str) -> str:
    with pytest.raises(InputError) as e:
        load_trace(p)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(p)), msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


def test_a_trace_data_block_that_never_closes(tmp_path):
    p = _cut(real("trappy_android_surfaceflinger_systrace.html"), tmp_path / "cut.html",
             "538.064761: tracing_mark_write")
    one_line_error(p, "trace-data block at line 588", "never closes")


def test_a_javascript_string_that_never_ends(tmp_path):
    p = _cut(real("catapult_2cpu_launcher_2012.html"), tmp_path / "cut.html", "50262.5")
    one_line_error(p, "linuxPerfData (line 185)", "ends inside it")


def test_javascript_string_errors(tmp_path):
    page = (DATA / "linuxperfdata_escapes.html").read_text()
    p = tmp_path / "p.html"
    p.write_text(page.replace("#\\n\\\n", "#\\n\n", 1))          # page line 13 loses its continuation
    one_line_error(p, "linuxPerfData (line 13)", "without a backslash")
    p.write_text(page.replace("\\x41pp", "\\x4pp"))
    one_line_error(p, "linuxPerfData (line 16)", "\\x without its hex digits")


def test_bad_viewer_data(tmp_path):
    head = "<!DOCTYPE html>\n<html>\n<body>\n"
    p = tmp_path / "v.html"
    p.write_text(head + '<script id="viewer-data" type="text/plain">\nH4sIAAAAAAAA\n</script>\n')
    one_line_error(p, "viewer-data block at line 4", "gzip")
    p.write_text(head + '<script id="viewer-data" type="text/plain">\nabcde\n</script>\n')
    one_line_error(p, "viewer-data block at line 4", "base64")


def test_a_page_without_ftrace_text_says_what_it_has(tmp_path):
    page = (DATA / "toybox_process_dump.html").read_text()
    p = tmp_path / "dump_only.html"
    p.write_text(page[:page.index("# tracer: nop")] + "  </script>\n</body>\n</html>\n")
    one_line_error(p, "process dump (trace-data block at line 10)", "ftrace text")
    (tmp_path / "none.html").write_text("<!DOCTYPE html>\n<html><body>hello</body></html>\n")
    one_line_error(tmp_path / "none.html", "this page has: none")


def test_cli_refuses_a_cut_page_in_one_line(tools, tmp_path):
    p = _cut(real("catapult_2cpu_launcher_2012.html"), tmp_path / "cut.html", "50262.5")
    out = tmp_path / "out"
    proc = tools.run_cli(["replay", p, "--platform", "sdm845", "--out", out])
    tools.assert_one_line_error(proc, "cut.html", "linuxPerfData")
    tools.assert_no_outputs(out)
