"""Random client input never gets a 5xx: every operation of the published OpenAPI schema is
sent random bodies, paths and parameters by Hypothesis, as a player and as staff."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.profiles import examples
from tests.server.conftest import Login

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15),
                    st.text(max_size=12), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from(["3-4", "pass", "place6", "alice", "PA1-1", "dealer",
                                     "die-on-chips", "2/5", "b1", "improper-throw"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
FIELDS = ["wager", "amount", "base", "working", "player", "faces", "facts", "distance",
          "thrower", "serials", "grounds", "reason", "witness", "patron", "person", "role",
          "ground", "times", "seat", "username", "password"]
bodies = st.dictionaries(st.sampled_from(FIELDS), values, max_size=5)


_CLIENTS: dict[tuple[int, str], Any] = {}


def operations(http: TestClient) -> list[tuple[str, str]]:
    spec = http.get("/openapi.json").json()
    return [(method, path) for path, item in spec["paths"].items()
            for method in item if method in ("get", "post", "patch", "delete")]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_no_5xx_for_any_client_input(http: TestClient, login: Login, data: st.DataObject
                                     ) -> None:
    ops = operations(http)
    who = data.draw(st.sampled_from(["alice", "dee", "sam", "pat"]))
    key = (id(http), who)
    if key not in _CLIENTS:  # one login per account: Argon2 is slow on purpose
        _CLIENTS[key] = login(who)
    client = _CLIENTS[key]
    method, path = data.draw(st.sampled_from(ops))
    table = data.draw(st.sampled_from(["craps-pa-1", "props-pa-1", "craps-in-1", "nowhere",
                                       "../x", "%00"]))
    url = re.sub(r"\{table_id\}", table, path)
    url = re.sub(r"\{bet\}", data.draw(st.sampled_from(["b1", "b999", "x"])), url)
    url = re.sub(r"\{username\}", data.draw(st.sampled_from(["carol", "nobody"])), url)
    body: Any = data.draw(st.one_of(bodies, values))
    reply = http.request(method.upper(), url, json=body if method != "get" else None,
                         headers=client.headers,
                         params={"after": data.draw(st.integers(-5, 10**6)),
                                 "rounds": data.draw(st.integers(-5, 500))})
    assert reply.status_code < 500, (method, url, body, reply.text)
    if reply.status_code >= 400 and reply.headers.get("content-type", "").startswith(
            "application/json"):
        payload = reply.json()
        if isinstance(payload, dict) and "error" in payload:
            assert {"error", "message", "rule", "citation"} <= set(payload)
