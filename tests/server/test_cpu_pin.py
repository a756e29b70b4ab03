"""A served process keeps its threads on one CPU (``server.cpu_pin``, industry-default,
``DICETABLE_CPU`` / ``dicetable serve --cpu``). Each pin is made in a process of its own: a
pinned test worker would stay pinned for the rest of the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dicetable.core.errors import InvalidInput
from dicetable.server.cpu_pin import pin
from tests.server.processes import TIMEOUT, login, start_serve

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                reason="the system cannot pin a process to a CPU")

CHILD = """
import json, os, sys, threading, time
from pathlib import Path
from dicetable.server.cpu_pin import pin, pinned
before = threading.Thread(target=time.sleep, args=(30,), daemon=True)
before.start()  # running when the process pins itself
cpu = pin(sys.argv[1], Path(sys.argv[2]))
after = threading.Thread(target=time.sleep, args=(30,), daemon=True)
after.start()
threads = {int(t): sorted(os.sched_getaffinity(int(t))) for t in os.listdir("/proc/self/task")}
print(json.dumps({"cpu": cpu, "pinned": pinned(), "threads": list(threads.values())}),
      flush=True)
sys.stdin.read()  # holds its claim until told to end
"""


@pytest.fixture
def children(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        child.kill()
        child.wait()


def _pinned_child(children: list[subprocess.Popen[str]], choice: str, folder: Path
                  ) -> dict[str, object]:
    child = subprocess.Popen([sys.executable, "-c", CHILD, choice, str(folder)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(child)
    assert child.stdout is not None
    said: dict[str, object] = json.loads(child.stdout.readline())
    return said


def test_server_cpu_auto_pins_every_thread_and_each_process_claims_its_own(
        tmp_path: Path, children: list[subprocess.Popen[str]]) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    first = _pinned_child(children, "auto", tmp_path)
    assert first["cpu"] == first["pinned"] == allowed[0]
    # the thread running before the pin and the one started after, and the main one
    assert first["threads"] == [[allowed[0]]] * 3
    if len(allowed) < 2:
        return
    second = _pinned_child(children, "auto", tmp_path)
    assert second["cpu"] == allowed[1]  # the first's CPU is claimed while it lives
    ended = children.pop(0)
    ended.kill()
    ended.wait()  # ended: its claim is let go
    third = _pinned_child(children, "auto", tmp_path)
    assert third["cpu"] == allowed[0]


def test_server_cpu_auto_pins_nothing_once_every_cpu_is_claimed(
        tmp_path: Path, children: list[subprocess.Popen[str]]) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    for cpu in allowed:
        assert _pinned_child(children, "auto", tmp_path)["cpu"] == cpu
    last = _pinned_child(children, "auto", tmp_path)
    assert last["cpu"] is None
    assert last["pinned"] is None
    assert last["threads"] == [allowed] * 3  # left as it was


def test_server_cpu_a_number_is_taken_whoever_claimed_it(
        tmp_path: Path, children: list[subprocess.Popen[str]]) -> None:
    cpu = sorted(os.sched_getaffinity(0))[-1]
    assert _pinned_child(children, "auto", tmp_path)["cpu"] is not None
    chosen = _pinned_child(children, str(cpu), tmp_path)
    assert chosen["cpu"] == cpu
    assert chosen["threads"] == [[cpu]] * 3
    assert _pinned_child(children, "none", tmp_path)["cpu"] is None


def test_server_cpu_auto_uses_no_claims_folder_it_does_not_own_alone(
        tmp_path: Path, children: list[subprocess.Popen[str]]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere)  # put there first by someone else, to have files made
    said = _pinned_child(children, "auto", linked)
    assert said["cpu"] is None
    assert list(elsewhere.iterdir()) == []  # nothing made where the link points
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # open to every user
    assert _pinned_child(children, "auto", shared)["cpu"] is None
    assert list(shared.iterdir()) == []


def test_server_cpu_refuses_a_cpu_the_process_may_not_run_on(tmp_path: Path) -> None:
    outside = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(InvalidInput, match="may run only on CPUs") as refused:
        pin(str(outside), tmp_path)
    assert refused.value.rule == "server.cpu"
    assert list(tmp_path.iterdir()) == []  # nothing claimed


def _threads_cpus(pid: int) -> set[str]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found.add(line.split(":", 1)[1].strip())
    return found


@pytest.mark.xdist_group("serve")
def test_server_cpu_dicetable_serve_keeps_to_one_cpu_and_says_which(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # claims of its own, apart from other runs
    cpu = sorted(os.sched_getaffinity(0))[-1]
    server = start_serve(["--db", str(tmp_path / "floor.db"), "--cpu", str(cpu)])
    try:
        assert _threads_cpus(server.proc.pid) == {str(cpu)}  # the loop, the tables, the store
        token = login(server.port, "pat")
        load = httpx.get(f"{server.base}/api/floor/load", timeout=TIMEOUT,
                         headers={"Authorization": f"Bearer {token}"})
        assert load.status_code == 200
        assert load.json()["cpu"] == cpu
    finally:
        server.stop()


@pytest.mark.parametrize(("choice", "said"), [
    ("many", "DICETABLE_CPU must be auto, none or a CPU's number, not 'many'"),
    ("4096", "DICETABLE_CPU is 4096, but this process may run only on CPUs")])
def test_server_cpu_dicetable_serve_refuses_a_bad_choice_before_opening_the_store(
        tmp_path: Path, choice: str, said: str) -> None:
    done = subprocess.run([sys.executable, "-m", "dicetable.cli.main", "serve", "--db",
                           str(tmp_path / "floor.db"), "--cpu", choice, "--port", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert said in done.stderr
    assert not (tmp_path / "floor.db").exists()  # refused before anything was made
