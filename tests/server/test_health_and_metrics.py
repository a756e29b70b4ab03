"""Health, readiness, Prometheus metrics and the JSON request log (``server.observe``)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dicetable.application.integrity import CHECKPOINTS
from dicetable.server.app import create_app
from dicetable.server.floor import Floor
from dicetable.server.observe import REQUESTS, STALE_PERIODS, JsonLines, configure_logging
from tests.server.conftest import Client

T = "/api/tables/craps-pa-1"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_healthz_and_readyz_answer_without_a_session_and_are_never_shed(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        admission = app.state.admission
        admission.per_answer, admission.in_flight = 1.0, 10**6  # a server full to the brim
        assert http.get("/healthz").json() == {"status": "alive"}
        ready = http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert ready.json()["ready"] is True
        assert http.get("/metrics").status_code == 200
        assert admission.refused == 0  # none of them was counted as a command, or refused
        admission.in_flight = 0


def test_readyz_is_503_before_verification_on_a_store_wide_fault_and_while_draining(
        floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False, verify_seconds=10)
    readiness = app.state.readiness
    with TestClient(app) as http:
        readiness.verified_at = None
        reply = http.get("/readyz")
        assert reply.status_code == 503
        assert reply.json()["problems"] == ["start-up verification has not finished"]
        readiness.verified()
        assert http.get("/readyz").status_code == 200
        readiness.verified_at = readiness.clock() - STALE_PERIODS * 10 - 1
        assert "no verification completed" in http.get("/readyz").json()["problems"][0]
        readiness.verified()
        floor.faults.raise_fault(CHECKPOINTS, "truncated", "lines removed", "2026-01-01")
        reply = http.get("/readyz")
        assert reply.status_code == 503
        assert reply.json()["problems"] == ["store-wide fault: lines removed"]
        assert CHECKPOINTS in reply.json()["faulted"]
    assert readiness.draining  # the lifespan ended: a probe now would read 503
    assert "draining: the server is shutting down" in readiness.problems(floor)


def test_metrics_count_commands_by_kind_refusals_by_rule_503s_and_latency(
        floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        alice, pat = Client(http, "alice"), Client(http, "pat")
        assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
        refused = alice.post(f"{T}/bets", {"wager": "pass", "amount": 7})
        assert refused.status_code >= 400
        rule = refused.json()["rule"]
        admission = app.state.admission
        admission.per_answer, admission.in_flight = 1.0, 10**6
        assert alice.post(f"{T}/bets", {"wager": "field", "amount": 1000}).status_code == 503
        admission.in_flight = 0
        admission.beat = lambda late: None  # the loop's heartbeats held: the lag as set
        admission.lag = 0.0123
        load = pat.get("/api/floor/load").json()
        text = http.get("/metrics").text
    m = _samples(text)
    assert m[("dicetable_commands_total", (("kind", "bets"), ("status", "200")))] == 1
    assert m[("dicetable_commands_total",
              (("kind", "bets"), ("status", str(refused.status_code))))] == 1
    assert m[("dicetable_commands_total", (("kind", "bets"), ("status", "503")))] == 1
    assert m[("dicetable_refusals_total", (("rule", rule),))] == 1
    assert m[("dicetable_refusals_total", (("rule", "server.backpressure"),))] == 1
    assert m[("dicetable_responses_total", (("status", "503"),))] == 1
    assert m[("dicetable_request_seconds_count", (("route", "command"),))] == 3
    # the pit's load view and the metrics read the same figures
    assert m[("dicetable_load_refused_total", ())] == load["refused"] == 1
    assert m[("dicetable_pipeline_depth", ())] == load["pipeline_depth"] == 0
    assert m[("dicetable_custody_alerts", ())] == load["custody_alerts"]
    assert m[("dicetable_faults", ())] == load["faults"] == 0
    assert m[("dicetable_verification_lag_seconds", ())] >= 0
    assert m[("dicetable_loop_lag_seconds", ())] == load["loop_lag_ms"] / 1000 == 0.0123
    assert m[("dicetable_ms_per_answer", ())] == load["ms_per_answer"] == 1000.0
    assert load["verification_lag_s"] is not None


def test_a_generic_commands_kind_is_the_command_it_names(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        alice = Client(http, "alice")
        placed = alice.post(f"{T}/commands", {"command": "place-bet",
                                              "fields": {"wager": "pass", "amount": 1000}})
        assert placed.status_code == 200, placed.text
        alice.post(f"{T}/commands", {"command": "no-such-command", "type": "Made Up"})
        text = http.get("/metrics").text
    kinds = {labels for (name, labels) in _samples(text) if name == "dicetable_commands_total"}
    assert any(("kind", "place-bet") in labels for labels in kinds), kinds
    assert any(("kind", "commands") in labels for labels in kinds), kinds
    assert not any(("kind", "no-such-command") in labels or ("kind", "Made Up") in labels
                   for labels in kinds), kinds


def test_sec_5_the_metrics_keep_a_series_per_route_not_per_path_sent(floor: Floor) -> None:
    """A bet's id, or a path a client makes up, is never a label: each would be a series
    kept for ever, and anyone, logged in or not, could grow the registry without end."""
    with TestClient(create_app(floor, electronic_loop=False)) as http:
        alice = Client(http, "alice")
        for n in range(3):
            bet = alice.post(f"{T}/bets", {"wager": f"place{(4, 5, 9)[n]}", "amount": 1000})
            assert bet.status_code == 200, bet.text
            taken = alice.delete(f"{T}/bets/{bet.json()['events'][0]['bet']}")
            assert taken.status_code == 200, taken.text
        for n in range(40):
            http.post(f"{T}/made-up-{n}", json={})
            http.delete(f"{T}/bets/b{n}/deeper")
        text = http.get("/metrics").text
    kinds = {dict(labels)["kind"] for (name, labels) in _samples(text)
             if name == "dicetable_commands_total"}
    assert kinds == {"bets", "bets/{bet}", "other"}, kinds


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonLines())
    REQUESTS.addHandler(handler)
    level = REQUESTS.level
    REQUESTS.setLevel(logging.INFO)
    yield out
    REQUESTS.removeHandler(handler)
    REQUESTS.setLevel(level)


def test_one_json_line_per_command_with_its_idempotency_key_and_table(
        floor: Floor, json_log: io.StringIO) -> None:
    with TestClient(create_app(floor, electronic_loop=False)) as http:
        alice = Client(http, "alice")
        reply = http.post(f"{T}/bets", json={"wager": "pass", "amount": 1000},
                          headers={**alice.headers, "idempotency-key": "k-123"})
        assert reply.status_code == 200, reply.text
    lines = [json.loads(line) for line in json_log.getvalue().splitlines()]
    bets = [line for line in lines if line.get("path") == f"{T}/bets"]
    assert len(bets) == 1
    assert bets[0]["idempotency_key"] == "k-123"
    assert bets[0]["table"] == "craps-pa-1"
    assert bets[0]["kind"] == "bets"
    assert bets[0]["status"] == 200
    assert bets[0]["level"] == "info"


def test_log_format_is_text_or_json_and_anything_else_is_refused() -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        out = io.StringIO()
        configure_logging("json", out)
        logging.getLogger("dicetable.x").warning("hello %s", "there")
        assert json.loads(out.getvalue())["message"] == "hello there"
        with pytest.raises(Exception, match="server.log_format|--log-format"):
            configure_logging("xml")
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        REQUESTS.setLevel(logging.NOTSET)


def test_metrics_count_websocket_connections_and_messages(floor: Floor) -> None:
    from starlette.websockets import WebSocketDisconnect

    app = create_app(floor, electronic_loop=False)
    with TestClient(app) as http:
        alice = Client(http, "alice")
        with http.websocket_connect(f"/ws/tables/craps-pa-1?token={alice.token}") as ws:
            assert ws.receive_json()["type"] == "hello"
            assert alice.post(f"{T}/bets", {"wager": "pass", "amount": 1000}).status_code == 200
            assert [e["type"] for e in ws.receive_json()["events"]] == ["BetPlaced"]
            during = _samples(http.get("/metrics").text)
            ws.send_text("hello from the page")  # the page sends nothing; counted if it did
        with pytest.raises(WebSocketDisconnect), \
                http.websocket_connect("/ws/tables/craps-pa-1?token=nope") as ws:
            ws.receive_json()
        after = _samples(http.get("/metrics").text)
    assert during[("dicetable_websocket_open", ())] == 1
    assert after[("dicetable_websocket_open", ())] == 0
    assert after[("dicetable_websocket_connections_total", (("outcome", "accepted"),))] == 1
    assert after[("dicetable_websocket_connections_total", (("outcome", "refused"),))] == 1
    assert after[("dicetable_websocket_messages_total", (("direction", "out"),))] == 2
    assert after[("dicetable_websocket_messages_total", (("direction", "in"),))] == 1
