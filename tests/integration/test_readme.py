"""The README's Python block is a script that runs and prints, not only in a REPL."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_readme_python_block_runs_as_a_script_and_prints(tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(import cocoviz\n.*?)```", text, re.S).group(1)
    script = tmp_path / "first_release.py"
    script.write_text(block, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "consistent: True" in done.stdout
    assert "California, H[0..9]:" in done.stdout
    assert "Release(" in done.stdout
    assert (tmp_path / "release.parquet").exists()
