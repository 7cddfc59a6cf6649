"""Wait until a Streamlit server answers, then run the app once so its caches are warm.

Run:  python scripts/warm_up.py PORT      (scripts/run.sh does, right after starting the server)

One run of app.py (``/_stcore/script-health-check``) loads the imports, numba's compiled kernels,
the default data and its release into the server's shared caches, so a first visitor waits no
longer than a later one.
"""

from __future__ import annotations

import sys
import time
import urllib.request


def warm_up(url: str, *, timeout: float = 300.0) -> None:
    """Poll ``url``'s health endpoint until it answers, then run the app once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not answer within {timeout:.0f} s") from None
            time.sleep(0.2)
    urllib.request.urlopen(url + "/_stcore/script-health-check", timeout=timeout).read()


if __name__ == "__main__":
    address = f"http://localhost:{sys.argv[1] if len(sys.argv) > 1 else 8501}"
    warm_up(address)
    print(f"cocoviz is ready at {address}", file=sys.stderr)
