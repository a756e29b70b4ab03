"""Schemathesis over the whole API (issue 12, break 6): generated requests for every
operation of the published OpenAPI schema, as staff and as a player; no response is a server
error, every status is one the schema documents, and every body matches its schema."""

from __future__ import annotations

from typing import Any

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from dicetable.server.app import create_app
from dicetable.server.demo import DEMO_PASSWORD
from dicetable.server.floor import Floor

TABLES = ("craps-pa-1", "craps-in-1", "props-pa-1", "minicraps-pa-1", "craps-pa-e1", "nowhere")
EXAMPLES = 6
"""Per operation: enough to reach each one's refusals, short enough for CI."""


def test_every_operation_conforms_and_never_fails(floor: Floor) -> None:
    app = create_app(floor, electronic_loop=False, verify_seconds=0)
    with TestClient(app) as http:
        tokens = [http.post("/api/login", json={"username": who, "password": DEMO_PASSWORD}
                            ).json()["token"] for who in ("pat", "dee", "sam", "alice")]
        api = schemathesis.openapi.from_asgi("/openapi.json", app)
        tried: list[str] = []
        seen: dict[int, int] = {}
        for result in api.get_all_operations():
            operation = result.ok()  # type: ignore[union-attr]  # an invalid schema raises
            if operation.path == "/api/logout":
                continue  # the fuzzer's own session stays open
            tried.append(f"{operation.method.upper()} {operation.path}")

            @given(case=operation.as_strategy(), table=st.sampled_from(TABLES),
                   bet=st.sampled_from(("b1", "b2", "b999")),
                   user=st.sampled_from(("carol", "pat", "nobody")),
                   token=st.sampled_from(tokens))
            @settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            def check(case: Any, table: str, bet: str, user: str, token: str) -> None:
                real = {"table_id": table, "bet": bet, "username": user}
                for name in case.path_parameters or {}:
                    if name in real:  # mostly real ids, so the handlers run, not just 404
                        case.path_parameters[name] = real[name]
                case.headers = {**(case.headers or {}), "authorization": f"Bearer {token}"}
                response = case.call()
                seen[response.status_code] = seen.get(response.status_code, 0) + 1
                case.validate_response(response, checks=[
                    not_a_server_error, status_code_conformance, response_schema_conformance])

            check()
        assert len(tried) > 40, tried
    print(f"\nschemathesis: {len(tried)} operations, {sum(seen.values())} responses by status "
          f"{dict(sorted(seen.items()))}")
    assert not [code for code in seen if code >= 500]
    assert {200, 403, 404, 409, 422} <= set(seen), seen  # it reached the successes and the refusals
