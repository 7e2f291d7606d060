"""Every Python snippet of docs/guide/carrying.md runs as written, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reljac import robots

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "carrying.md"


@pytest.mark.skipif(robots.example_robot_data_dir() is None, reason="example-robot-data is not installed")
def test_the_balance_page_snippets_run():
    snippets = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(snippets) == 2
    namespace: dict = {}
    for snippet in snippets:
        exec(compile(snippet, str(PAGE), "exec"), namespace)
    carrying, stack = namespace["carrying"], namespace["stack"]
    assert len(carrying.payloads) == 1 and carrying.payloads[0].mass == 10.0
    assert stack.pelvis is not None and stack.pelvis.target[2] == 0.9
