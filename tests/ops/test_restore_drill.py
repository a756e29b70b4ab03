"""The restore drill: back up a floor under load, keep playing, restore, and check that the
restored floor verifies, that the gap is reported exactly (every acknowledged command after
the backup listed, none before it), that the restore is recorded with two people's names, and
that play resumes - through the CLI and the real server (``dicetable serve``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from dicetable.server.demo import DEMO_PASSWORD
from dicetable.store import open_store
from dicetable.store.keys import read_key
from dicetable.store.operations_stream import STREAM, StoreRestored
from tests.demo_floor import copy_demo_db
from tests.server.processes import TIMEOUT, Server, login, start_serve

T = "craps-pa-1"


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dicetable.cli.main", *args], input=stdin,
                          capture_output=True, text=True, env={**os.environ}, timeout=600,
                          check=False)


class Players:
    """Two dealers' clients buying chips in a loop, each command with its own key; every
    acknowledged (200) command's key and the seq its answer names are kept."""

    def __init__(self, server: Server) -> None:
        self.base = server.base
        self.acked: dict[str, int] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.count = 0
        self.tokens = [login(server.port, "dee"), login(server.port, "dee")]
        self.threads = [threading.Thread(target=self._play, args=(i,), daemon=True)
                        for i in range(2)]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _play(self, i: int) -> None:
        with httpx.Client(base_url=self.base, timeout=TIMEOUT) as http:
            n = 0
            while not self.stop.is_set():
                n += 1
                key = f"drill-{i}-{n}"
                reply = http.post(f"/api/tables/{T}/chips",
                                  json={"player": "alice", "amount": 100},
                                  headers={"authorization": f"Bearer {self.tokens[i]}",
                                           "idempotency-key": key})
                if reply.status_code == 200:
                    with self.lock:
                        self.acked[f"dee:{key}"] = int(reply.json()["seq"])
                        self.count += 1

    def until(self, more: int) -> None:
        """Until ``more`` further commands were acknowledged."""
        with self.lock:
            target = self.count + more
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            with self.lock:
                if self.count >= target:
                    return
            time.sleep(0.05)
        raise AssertionError("the floor stopped answering")

    def halt(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)


def until_checkpointed(cp: Path, seq: int, *, after_line: int = 0) -> None:
    """Until a checkpoint after line ``after_line`` signs table ``T`` at ``seq`` or later: the
    server writes one after each periodic verification that finds no fault (``--verify-every
    1``), so a condition, not a pause that a loaded machine can outlast."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if _signed_seq(cp, after_line) >= seq:
            return
        time.sleep(0.05)
    raise AssertionError(f"no checkpoint signed {T} at seq {seq}")


def ready_once_verified(base: str) -> httpx.Response:
    """``/readyz`` once it answers 200, or its last answer after the deadline. Readiness also
    fails while the periodic verification lags (three periods without one completing), which a
    loaded machine can cause with nothing wrong; a fault keeps it failing, so the caller's
    assertions still catch one."""
    deadline = time.monotonic() + 300
    while True:
        ready = httpx.get(f"{base}/readyz", timeout=TIMEOUT)
        if ready.status_code == 200 or time.monotonic() > deadline:
            return ready
        time.sleep(0.1)


def _signed_seq(cp: Path, after_line: int) -> int:
    """The seq of ``T`` in the newest checkpoint after line ``after_line`` (0: none yet)."""
    lines = cp.read_text().splitlines()[after_line:] if cp.exists() else []
    for line in reversed(lines):
        try:
            heads = json.loads(line).get("heads")
        except ValueError:  # the line being written
            continue
        if isinstance(heads, dict) and T in heads:
            return int(heads[T][0])
    return 0


def test_restore_drill_under_load_loses_nothing_silently(demo_db: Path, tmp_path: Path) -> None:
    db = copy_demo_db(demo_db, tmp_path / "floor.db")
    cp = tmp_path / "checkpoints.jsonl"
    serve = ["--db", str(db), "--checkpoints", str(cp), "--verify-every", "1"]
    server = start_serve(serve)
    try:
        players = Players(server)
        players.start()
        players.until(20)
        made = cli("backup", "--db", str(db), "--to", str(tmp_path / "bk"),
                   "--checkpoints", str(cp))
        assert made.returncode == 0, made.stderr
        players.until(30)  # the floor kept playing after the backup
        players.halt()
        until_checkpointed(cp, max(players.acked.values()))  # the last command signed for
        # while the server serves the store a restore is refused, naming the rule, and
        # changes nothing
        busy = cli("restore", "--db", str(db), "--from", str(tmp_path / "bk"), "--by", "pat",
                   "--approved-by", "ann", "--reason", "drill", "--checkpoints", str(cp),
                   "--passwords-from-stdin", stdin=f"{DEMO_PASSWORD}\n{DEMO_PASSWORD}\n")
        assert busy.returncode == 2, busy.stdout
        assert "store.serving" in busy.stderr
        assert "a server is serving" in busy.stderr
        assert not list(tmp_path.glob("floor.db.before-restore-*"))
        assert ready_once_verified(server.base).status_code == 200
    finally:
        server.stop()
    manifest = json.loads((tmp_path / "bk" / "manifest.json").read_text())
    backed = manifest["heads"][T][0]
    after = {k: seq for k, seq in players.acked.items() if seq > backed}
    assert after, "commands were acknowledged after the backup"
    assert any(seq <= backed for seq in players.acked.values())

    # one person alone, or a wrong password, is refused and changes nothing
    alone = cli("restore", "--db", str(db), "--from", str(tmp_path / "bk"), "--by", "pat",
                "--approved-by", "pat", "--reason", "drill", "--checkpoints", str(cp),
                "--passwords-from-stdin", stdin=f"{DEMO_PASSWORD}\n{DEMO_PASSWORD}\n")
    assert alone.returncode == 2
    assert "restore.two_person" in alone.stderr or "different people" in alone.stderr
    wrong = cli("restore", "--db", str(db), "--from", str(tmp_path / "bk"), "--by", "pat",
                "--approved-by", "ann", "--reason", "drill", "--checkpoints", str(cp),
                "--passwords-from-stdin", stdin=f"{DEMO_PASSWORD}\nnot-it\n")
    assert wrong.returncode == 2, wrong.stdout
    assert not list(tmp_path.glob("floor.db.before-restore-*"))

    report = tmp_path / "report.json"
    done = cli("restore", "--db", str(db), "--from", str(tmp_path / "bk"), "--by", "pat",
               "--approved-by", "ann", "--reason", "drill: disk lost", "--checkpoints",
               str(cp), "--report", str(report), "--passwords-from-stdin",
               stdin=f"{DEMO_PASSWORD}\n{DEMO_PASSWORD}\n")
    assert done.returncode == 0, done.stderr
    gap = json.loads(report.read_text())
    listed = {r["request"]: r for r in gap["requests"] if r["request"].startswith("dee:drill-")}
    assert set(listed) == set(after)  # every acknowledged command after the backup; no other
    for key, seq in after.items():
        assert listed[key]["table"] == T
        assert listed[key]["last_seq"] == seq
    lost = gap["streams"][T]
    assert lost["backup_seq"] == backed
    assert lost["lost"] == max(after.values()) - backed
    assert lost["checkpointed_seq"] == max(after.values())  # the checkpoints vouch for it all
    assert all(e["checkpointed"] for e in gap["events"] if e["stream"] == T)

    chain_key = read_key(f"{db}.key")
    with open_store(db, create=False, key=chain_key) as store:
        assert store.head(T).seq == backed
        restored = [e for e in store.events(STREAM) if isinstance(e, StoreRestored)]
    assert len(restored) == 1
    assert (restored[0].actor, restored[0].approved_by) == ("pat", "ann")
    assert restored[0].lost_events == gap["lost_events"]
    assert restored[0].backup_digest == gap["backup_digest"]

    audit = cli("audit", "verify", str(db), "--checkpoints", str(cp))
    assert audit.returncode == 0, audit.stdout + audit.stderr

    server = start_serve(serve)  # verifies every stream, then serves
    try:
        ready = ready_once_verified(server.base)
        assert ready.status_code == 200, ready.text
        assert ready.json()["faulted"] == []
        token = login(server.port, "dee")
        reply = httpx.post(f"{server.base}/api/tables/{T}/chips",
                           json={"player": "alice", "amount": 100},
                           headers={"authorization": f"Bearer {token}",
                                    "idempotency-key": "after-restore"}, timeout=TIMEOUT)
        assert reply.status_code == 200, reply.text
        assert reply.json()["seq"] == backed + 1  # play resumes from the backup's head
        # a periodic check and checkpoint after the restore's first command: still no fault
        until_checkpointed(cp, backed + 1, after_line=len(cp.read_text().splitlines()))
        ready = ready_once_verified(server.base)
        assert ready.status_code == 200, ready.text
        assert ready.json()["faulted"] == []
    finally:
        server.stop()
