"""The one way to declare a record that never changes once made: an event, a command, a group
of fields several of them share.

A class deriving from ``Frozen`` is made a frozen, keyword-only dataclass of the fields it
annotates, so no event or command restates the decorator (and none can differ from the rest by
forgetting part of it). Declaring such a class a dataclass again is an error when the class is
made, so a class still written the old way cannot pass unnoticed.

>>> class Noted(Frozen):
...     text: str
...     urgent: bool = False
>>> n = Noted(text="hello")
>>> n, n == Noted(text="hello"), hash(n) == hash(Noted(text="hello"))
(Noted(text='hello', urgent=False), True, True)
>>> Noted("hello")
Traceback (most recent call last):
TypeError: Noted.__init__() takes 1 positional argument but 2 were given
>>> n.text = "bye"
Traceback (most recent call last):
dataclasses.FrozenInstanceError: cannot assign to field 'text'
>>> @dataclass(frozen=True, kw_only=True)
... class Again(Noted):
...     more: str
Traceback (most recent call last):
TypeError: Cannot overwrite attribute __setattr__ in class Again
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, dataclass_transform


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Frozen:
    """Each class deriving from it is a frozen, keyword-only dataclass of its annotated fields
    (equal by value and hashable; ``dataclasses.field`` sets a field's options)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        written = "__init__" in cls.__dict__  # a class's own __init__ is kept, as dataclass does
        dataclass(frozen=True, kw_only=True)(cls)
        if not written:
            _filled_at_once(cls)


def _filled_at_once(cls: type[Any]) -> None:
    """Give ``cls`` an ``__init__`` that fills the new record's fields in one step, where the
    dataclass's does nothing else (no ``__post_init__``, field factory, field left out of
    ``__init__`` or init-only variable). A frozen dataclass's own sets each field through
    ``object.__setattr__``, one call a field: a third of what making an event with fifteen
    fields costs, and events and commands are made for every command a table decides. The
    parameters, their defaults and the errors for a wrong call are the dataclass's.

    >>> class Pair(Frozen):
    ...     left: int
    ...     right: int = 2
    >>> Pair(left=1), Pair(left=1, right=3).__dict__
    (Pair(left=1, right=2), {'left': 1, 'right': 3})
    >>> Pair(right=3)
    Traceback (most recent call last):
    TypeError: Pair.__init__() missing 1 required keyword-only argument: 'left'
    >>> class Doubled(Frozen):  # a class's own __init__ is its own
    ...     n: int
    ...     def __init__(self, n: int) -> None:
    ...         object.__setattr__(self, "n", 2 * n)
    >>> Doubled(3)
    Doubled(n=6)
    """
    fields = dataclasses.fields(cls)
    made = cls.__init__
    code = made.__code__
    if hasattr(cls, "__post_init__") or any(
            not f.init or f.default_factory is not dataclasses.MISSING for f in fields) \
            or code.co_argcount != 1 or code.co_kwonlyargcount != len(fields):
        return  # more to do than fill the fields (an init-only variable adds an argument)

    def first(self: Any, *args: Any, **kwargs: Any) -> None:
        # Written when the class is first made, not when it is declared: compiling one for
        # each of the hundreds of records the package declares slowed every import of it.
        cls.__init__ = _written(cls, fields, made)
        cls.__init__(self, *args, **kwargs)

    cls.__init__ = functools.wraps(made)(first)  # its signature and name, for a reader


def _written(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...],
             made: Callable[..., None]) -> Callable[..., None]:
    """The one-step ``__init__`` of ``cls`` (``_filled_at_once``)."""
    defaults = {f"_default_{f.name}": f.default for f in fields
                if f.default is not dataclasses.MISSING}
    params = ", ".join(f.name if f.default is dataclasses.MISSING
                       else f"{f.name}=_default_{f.name}" for f in fields)
    values = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
    namespace: dict[str, Any] = {"_put": object.__setattr__, **defaults}
    exec(f"def __init__(self, *, {params}):\n    _put(self, '__dict__', {{{values}}})\n",
         namespace)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(made.__annotations__)
    return init
