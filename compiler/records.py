"""Records: dataclasses whose ``__repr__``, ``__eq__`` and ``__hash__`` are not compiled.

``dataclasses.dataclass`` writes each of a class's methods as Python source and compiles
it when the class is made: six functions for a frozen class, each a pass of the parser
and compiler. For the 55 classes a compile imports that was about 5% of a cold compile
of the bench corpus (229 M of its 4.29 G instructions under callgrind). :func:`record`
is ``dataclass`` with the same options, except that the comparison, hash and repr it adds
are closures over the field names, made without compiling anything; ``__init__`` (the
hot one: it runs for every entry and diagnostic) and a frozen class's ``__setattr__`` and
``__delattr__`` are still ``dataclass``'s own.

What the closures do is what ``dataclass`` writes, rule for rule (Python 3.11's
``dataclasses._process_class``): a method the class defines itself is kept; ``__repr__``
is the class's qualified name and each ``repr=True`` field as ``name=value``, ``...`` for
a recursive call; ``__eq__`` compares the tuples of the ``compare=True`` fields of two
instances of the very same class (else ``NotImplemented``); a frozen class without an
explicit ``__hash__`` hashes the tuple of its hashed fields, any other class gets
``__hash__ = None``. Proven equal by
tests/unit/test_records.py::test_records_behave_as_dataclasses.
"""

from __future__ import annotations

import dataclasses
from _thread import get_ident
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform

Made = TypeVar("Made")


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[Made]], type[Made]]:
    """``dataclasses.dataclass(frozen=frozen, slots=slots)``, its repr, eq and hash not
    compiled (see the module)."""

    def make(cls: type[Made]) -> type[Made]:
        own = cls.__dict__
        # Read before dataclass runs: with slots it returns a new class.
        keep_repr, keep_eq = "__repr__" in own, "__eq__" in own
        class_hash = own.get("__hash__", dataclasses.MISSING)
        explicit_hash = not (class_hash is dataclasses.MISSING
                             or (class_hash is None and "__eq__" in own))
        made = dataclasses.dataclass(cls, frozen=frozen, slots=slots, repr=False, eq=False)
        fields = dataclasses.fields(cast(Any, made))  # its own list: no ClassVar, no InitVar
        if not keep_repr:
            _named(made, _repr_of(tuple(field.name for field in fields if field.repr)))
        compared = tuple(field.name for field in fields if field.compare)
        if not keep_eq:
            _named(made, _eq_of(compared))
        if not explicit_hash:
            if frozen:
                _named(made, _hash_of(tuple(
                    field.name for field in fields
                    if (field.compare if field.hash is None else field.hash))))
            else:
                made.__hash__ = None  # type: ignore[assignment]
        return made

    return make


def _named(cls: type, function: Callable[..., Any]) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{function.__name__}"
    setattr(cls, function.__name__, function)


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an instance's ``names`` (as dataclass's ``(self.a,self.b,)``)."""
    if not names:
        return lambda instance: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda instance: (one(instance),)
    return attrgetter(*names)


def _eq_of(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_of(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _repr_of(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()  # per class, as dataclass's guard is per method

    def __repr__(self: Any) -> str:
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
