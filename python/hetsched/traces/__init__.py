"""Real scheduler traces: read them (:func:`load_trace`), turn them into a replayable
WorkloadSpec (:func:`build_replay`), record one on this machine (:mod:`hetsched.traces.record`).
See docs/traces.md."""

from hetsched.traces.parse import Trace, load_trace, parse_text, trace_cmd_available
from hetsched.traces.replay import Replay, ReplayOptions, build_replay, compare, is_kthread

__all__ = ["Trace", "load_trace", "parse_text", "trace_cmd_available", "Replay", "ReplayOptions",
           "build_replay", "compare", "is_kthread"]
