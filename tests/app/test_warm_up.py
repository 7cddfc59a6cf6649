"""scripts/warm_up.py on a busy server: it waits for health, retries a warm-up Streamlit stopped after 60 s,
and says "ready" with plain sentences, never a traceback."""

from __future__ import annotations

import importlib.util
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("warm_up", ROOT / "scripts" / "warm_up.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def busy_server():
    """A server whose health answers 503 twice, and whose script health check times out twice, like
    Streamlit's on a loaded machine; then both answer 200."""
    calls = {"/_stcore/health": 0, "/_stcore/script-health-check": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            calls[self.path] = calls.get(self.path, 0) + 1
            ok = calls[self.path] > 2
            body = b"ok" if ok else (b"timeout" if "script" in self.path else b"unavailable")
            self.send_response(200 if ok else 503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], calls
    server.shutdown()
    server.server_close()


def test_a_busy_server_is_waited_for_warmed_after_retries_and_called_ready(busy_server, capsys):
    port, calls = busy_server
    module = _script()
    assert module.main(str(port)) == 0
    err = capsys.readouterr().err
    assert f"cocoviz is ready at http://localhost:{port}" in err
    assert "Traceback" not in err and err.count("warm-up is slow") == 2
    assert calls["/_stcore/script-health-check"] == 3


def test_a_server_that_never_answers_gets_one_plain_line():
    module = _script()
    assert module.wait_for_health("http://127.0.0.1:9", timeout=0.0) is False
    said = []
    assert module.warm_up("http://127.0.0.1:9", health_timeout=0.0, attempts=2, say=said.append) is False
    assert len(said) == 1 and said[0].startswith("warm-up skipped: the server at http://127.0.0.1:9 did not answer")
