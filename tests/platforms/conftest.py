"""Make ``hetsched`` importable from the source tree when it is not installed."""

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("hetsched") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
