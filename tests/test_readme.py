"""The README's Python example and the package docstring examples run as written."""

import doctest
import re
from pathlib import Path

import hetsched.sim

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    for code in blocks:
        scope: dict = {}
        exec(compile(code, str(README), "exec"), scope)
        res = scope["res"]
        # the example's controller ran 50 steps of 100 ms
        assert res["sim_duration_s"] == 5.0
        assert res.energy_j > 0


def test_docstring_examples():
    failed, tried = doctest.testmod(hetsched.sim)
    assert tried > 0 and failed == 0
