"""Wait until a Streamlit server answers its health check, warm its caches, then say it is ready.

Run:  python scripts/warm_up.py PORT      (scripts/run.sh does, right after starting the server)

The server is ready once ``/_stcore/health`` answers; that wait has no deadline short of
``health_timeout`` because a busy machine may take minutes to import everything.  Then one run of app.py
(``/_stcore/script-health-check``) loads the imports, numba's compiled kernels, the default data and its
release into the server's shared caches, so a first visitor waits no longer than a later one.  Streamlit
stops that run after 60 s and answers HTTP 503 "timeout"; what it finished stays cached, so the warm-up
asks again, a few times.  A slow or failed warm-up is said in one plain line, never as a traceback, and
"cocoviz is ready" is printed whenever the server is healthy.
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable


def wait_for_health(url: str, *, timeout: float = 1800.0, pause: float = 0.5) -> bool:
    """Poll ``url``'s health endpoint until it answers 200; False after ``timeout`` seconds.

    Examples
    --------
    >>> wait_for_health("http://127.0.0.1:9", timeout=0.0)
    False
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=10) as answer:
                if answer.status == 200:
                    return True
        except urllib.error.HTTPError as exc:  # 503 while starting: not up yet
            exc.close()
        except (OSError, ValueError):  # refused, a timeout: not up yet
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)


def warm_up(url: str, *, health_timeout: float = 1800.0, attempts: int = 5, say: Callable[[str], None] = print) -> bool:
    """Wait for the server's health, then run the app once through its script health check; True once a run
    finished without error.

    Each attempt waits at most Streamlit's own 60 s; the caches a stopped attempt filled are kept, so the
    next gets further.  Every outcome other than success is said with ``say`` in a plain sentence.
    """
    if not wait_for_health(url, timeout=health_timeout):
        say(f"warm-up skipped: the server at {url} did not answer its health check in {health_timeout:.0f} s.")
        return False
    for attempt in range(1, attempts + 1):
        try:
            with urllib.request.urlopen(url + "/_stcore/script-health-check", timeout=120) as answer:
                answer.read()
            return True
        except urllib.error.HTTPError as exc:
            with exc:
                reason = exc.read().decode(errors="replace").strip() or f"HTTP {exc.code}"
            if reason != "timeout":
                say(f"warm-up: a first run of the app ended with {reason!r}; open the page to see the message.")
                return False
            say(
                f"warm-up is slow on this busy machine (attempt {attempt} of {attempts} ran out of Streamlit's 60 s); "
                "what it loaded stays cached, trying again."
            )
        except (OSError, ValueError) as exc:
            say(f"warm-up: the server did not answer the warm-up run ({exc}); trying again.")
    say("warm-up did not finish: the first visitor may wait while the caches fill.")
    return False


def main(port: str = "8501") -> int:
    address = f"http://localhost:{port}"
    if not wait_for_health(address):
        print(f"cocoviz: the server at {address} did not answer its health check; see its log above.", file=sys.stderr)
        return 1
    warm_up(address, say=lambda text: print(text, file=sys.stderr))
    print(f"cocoviz is ready at {address}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))
