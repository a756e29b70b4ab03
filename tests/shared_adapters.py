"""One Pydantic ``TypeAdapter`` per distinct route field per test process.

FastAPI builds a ``TypeAdapter`` for every parameter, body and response of every route
(``fastapi._compat.v2.ModelField``): about 230 for dicetable's app, most of
``create_app``'s cost, and the tests build an app for most server tests. An adapter is
immutable and depends only on the field's annotation, metadata, attributes and config, so
fields equal in all four share the one built first. The key compares values with their types
(``0``, ``False`` and ``0.0`` stay apart) and a field whose parts cannot be hashed builds its
own. Production builds one app per process and keeps FastAPI's own path; the tests check the
adapters shared are the adapters built (``test_shared_adapters``: the OpenAPI document
byte for byte, and the answers).
"""

from __future__ import annotations

import threading
from typing import Any

from fastapi._compat import v2
from pydantic import TypeAdapter

_built: dict[object, TypeAdapter[Any]] = {}
_lock = threading.Lock()
_plain = v2.ModelField.__post_init__
counts = {"built": 0, "shared": 0}
"""How many adapters were built and how many fields shared one (tests count, never time)."""


def typed(value: object) -> object:
    """``value`` as a hashable key that tells its type (``1``, ``True``, ``1.0`` differ)."""
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(typed(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((typed(k), typed(v)) for k, v in value.items()))
    hash(value)  # TypeError: this field builds its own adapter
    return (type(value), value)


def _key(field: v2.ModelField) -> object:
    parts = v2.asdict(field.field_info)
    return (typed(parts["annotation"]), typed(list(parts["metadata"])),
            typed(parts["attributes"]), typed(field.config))


def _post_init(self: v2.ModelField) -> None:
    try:
        key = _key(self)
    except TypeError:
        _plain(self)
        return
    with _lock:
        adapter = _built.get(key)
    if adapter is not None:
        counts["shared"] += 1
        self._type_adapter = adapter
        return
    _plain(self)
    counts["built"] += 1
    with _lock:
        _built.setdefault(key, self._type_adapter)


def install() -> None:
    v2.ModelField.__post_init__ = _post_init  # type: ignore[method-assign]


def uninstall() -> None:
    v2.ModelField.__post_init__ = _plain  # type: ignore[method-assign]
