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

from dataclasses import dataclass, field
from typing import Any, dataclass_transform


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Frozen:
    """Each class deriving from it is a frozen, keyword-only dataclass of its annotated fields
    (equal by value and hashable; ``dataclasses.field`` sets a field's options)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True, kw_only=True)(cls)

