"""``dicetable serve --certfile/--keyfile`` serves HTTPS, and the session cookie is then
``Secure`` (issue 12, transport)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from dicetable.server.demo import DEMO_PASSWORD
from tests.server.processes import start_serve, wait_until_serving


def _self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl for a test cert")
def test_serve_over_tls_with_secure_cookies(demo_db: Path, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    db = tmp_path / "floor.db"
    shutil.copyfile(demo_db, db)
    shutil.copyfile(f"{demo_db}.key", f"{db}.key")
    trust = ssl.create_default_context(cafile=str(cert))
    server = start_serve(["--db", str(db), "--certfile", str(cert), "--keyfile", str(key),
                          "--verify-every", "0"],
                         ready=lambda s: wait_until_serving(s, scheme="https", verify=trust))
    port = server.port
    try:
        with httpx.Client(verify=trust, base_url=f"https://127.0.0.1:{port}",
                          timeout=60) as client:
            reply = client.post("/api/login", json={"username": "alice",
                                                    "password": DEMO_PASSWORD})
            assert reply.status_code == 200, reply.text
            cookie = reply.headers["set-cookie"]
            assert "Secure" in cookie
            assert "HttpOnly" in cookie
        with pytest.raises(httpx.HTTPError):  # no plain HTTP on the TLS port
            httpx.get(f"http://127.0.0.1:{port}/api/me", timeout=5).raise_for_status()
    finally:
        server.stop(kill=True)


def test_plain_http_cookies_are_not_marked_secure(http: TestClient) -> None:
    reply = http.post("/api/login", json={"username": "alice", "password": DEMO_PASSWORD})
    assert "Secure" not in reply.headers["set-cookie"]
