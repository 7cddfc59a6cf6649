"""Running calls that could allocate without bound in a child process whose address space is capped.

A refusal made before allocating returns its message; an allocation that was not refused fails in the
child with a ``MemoryError`` (the cap) instead of exhausting the machine that runs the tests.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

#: The child's address-space cap: room for numpy, pandas, pyarrow and numba, far below the requests tested.
CAP_BYTES = 3 * 2**30

_RUNNER = """
import json, sys, traceback
from cocoviz.errors import CocovizError
results = []
for name, source in json.loads(sys.stdin.read()):
    try:
        exec(source, {})
        results.append([name, "ok", ""])
    except CocovizError as exc:
        results.append([name, "CocovizError", str(exc)])
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        results.append([name, type(exc).__name__, "".join(traceback.format_exception_only(exc)).strip()])
print(json.dumps(results))
"""


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))


def run_capped(cases: dict[str, str], timeout: float = 120) -> dict[str, tuple[str, str]]:
    """Run each case's Python source in one capped child; per case, the outcome (``"ok"``, ``"CocovizError"``
    or another exception's name) and its message."""
    payload = json.dumps([[name, textwrap.dedent(source)] for name, source in cases.items()])
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=payload,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_cap,
        env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {name: (outcome, message) for name, outcome, message in json.loads(done.stdout.splitlines()[-1])}
