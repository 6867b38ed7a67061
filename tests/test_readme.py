"""The README's library example runs as written (keeps the README true)."""

from __future__ import annotations

import re

from conftest import ROOT


def test_readme_python_blocks_run(capsys):
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:  # from any working directory: the example reads bundled data only
        exec(compile(block, "README.md", "exec"), {})
    assert "nb" in capsys.readouterr().out
