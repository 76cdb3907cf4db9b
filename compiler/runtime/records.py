"""Records: dataclasses that compile one function per class, not six.

``dataclasses.dataclass`` writes each method of a class as Python source and compiles
it when the class is made: six functions for a frozen class, each a pass of the parser
and compiler. For the 55 classes a compile imports that was about 5% of a cold compile
of the bench corpus (229 M of its 4.29 G instructions under callgrind). :func:`record`
is ``dataclass`` with the same options, except that ``__repr__``, ``__eq__``,
``__hash__`` and a frozen class's ``__setattr__`` and ``__delattr__`` guards are closures
over the field names, made without compiling anything; only ``__init__`` (the hot one:
it runs for every entry and diagnostic) is compiled, as dataclass writes it. A frozen
class with a field ``__init__`` does not take positionally (``InitVar``, keyword-only,
``init=False``) or a frozen dataclass base keeps dataclass's frozen methods.

What the closures do is what ``dataclass`` writes, rule for rule (Python 3.11's
``dataclasses._process_class``): a method the class defines itself is kept; ``__repr__``
is the class's qualified name and each ``repr=True`` field as ``name=value``, ``...`` for
a recursive call; ``__eq__`` compares the tuples of the ``compare=True`` fields of two
instances of the very same class (else ``NotImplemented``); a frozen class without an
explicit ``__hash__`` hashes the tuple of its hashed fields, any other class gets
``__hash__ = None``; the frozen guards refuse a field (any name on the class as written)
with ``FrozenInstanceError``, and a slotted frozen class gets dataclass's state
functions for copy and pickle; ``__dataclass_params__`` says the options asked, so a
dataclass may derive from a record as from the dataclass (a frozen one from a frozen base).
Proven equal by tests/unit/test_records.py::test_records_behave_as_dataclasses.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from _thread import get_ident
from collections.abc import Callable
from operator import attrgetter
from types import MemberDescriptorType
from typing import Any, TypeVar, cast, dataclass_transform

Made = TypeVar("Made")


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(*, frozen: bool = False, slots: bool = False) -> Callable[[type[Made]], type[Made]]:
    """``dataclasses.dataclass(frozen=frozen, slots=slots)``, compiling ``__init__`` only
    (see the module)."""

    def make(cls: type[Made]) -> type[Made]:
        own = cls.__dict__
        # Read before dataclass runs: with slots it returns a new class.
        keep_repr, keep_eq = "__repr__" in own, "__eq__" in own
        class_hash = own.get("__hash__", dataclasses.MISSING)
        explicit_hash = not (class_hash is dataclasses.MISSING
                             or (class_hash is None and "__eq__" in own))
        guarded = frozen and _plain(cls)  # else dataclass's own frozen methods
        documented = bool(own.get("__doc__"))
        made = dataclasses.dataclass(cls, frozen=frozen and not guarded, init=not guarded,
                                     slots=slots, repr=False, eq=False)
        fields = dataclasses.fields(cast(Any, made))  # its own list: no ClassVar, no InitVar
        if guarded:
            _frozen_methods(cls, made, fields, slots)
            if not documented:  # dataclass's text, from the signature of this __init__
                made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(
                    " -> None", "")
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
        # The options the class was asked with, as dataclass records them: a dataclass
        # deriving from a record is checked against them (a frozen one from a frozen base).
        params = made.__dataclass_params__  # type: ignore[attr-defined]
        params.init = params.repr = params.eq = True
        params.frozen = frozen
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


def _plain(cls: type) -> bool:
    """Whether a frozen class's methods can be made here: no frozen dataclass or record
    base (dataclass checks frozenness along the bases), no
    ``InitVar``, ``KW_ONLY``, keyword-only or non-init field (every field a positional
    parameter of ``__init__``, in order)."""
    if any(getattr(getattr(base, "__dataclass_params__", None), "frozen", False)
           for base in cls.__mro__[1:]):
        return False
    for name, annotation in inspect.get_annotations(cls).items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        value = cls.__dict__.get(name)
        if "InitVar" in text or "KW_ONLY" in text or (isinstance(value, dataclasses.Field) and (
                value.kw_only is True or not value.init)):
            return False
    return True


def _frozen_methods(cls: type, made: type, fields: tuple[dataclasses.Field[Any], ...],
                    slots: bool) -> None:
    """A frozen class's ``__init__`` (one function compiled: what dataclass writes, the
    fields set with ``object.__setattr__``), its ``__setattr__`` and ``__delattr__``
    guards and, with slots, the state functions copy and pickle need (as dataclass's)."""
    names = tuple(field.name for field in fields)
    made.__init__ = _CompiledOnFirstUse(made, fields)  # type: ignore[misc]

    # ``cls``: the class as written, as in dataclass's guards (with slots, not ``made``).
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    _named(made, __setattr__)
    _named(made, __delattr__)
    if slots:
        setattr(made, "__getstate__", _getstate)  # noqa: B010 (mypy: a method of object)
        setattr(made, "__setstate__", _setstate)  # noqa: B010


class _CompiledOnFirstUse:
    """A frozen record's ``__init__`` until something reads it (an instance made, a
    signature asked for): compiled then (:func:`_init_of`), put in its place on the class
    and given instead. Most record classes a command imports make no instance in it, and
    compiling an ``__init__`` costs about 150 us (the 53 a compile imports: 8 ms)."""

    __slots__ = ("_fields", "_made")

    def __init__(self, made: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
        self._made = made
        self._fields = fields

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        init: Any = self._made.__dict__.get("__init__", self)
        if init is self:
            init = _init_of(self._made, self._fields)
            _named(self._made, init)
        return init.__get__(instance, owner)


class _Factory:
    """The default of a parameter whose field has a default factory (shown as dataclass
    shows its own: ``<factory>``)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = "__dataclass_HAS_DEFAULT_FACTORY__"


def _init_of(made: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """``__init__`` of a frozen class whose every field is a positional parameter.

    Each field is set with ``object.__setattr__``, as dataclass writes it; in a class with
    slots, an instance of the class itself (not of a subclass, which could define another
    attribute of that name) has each set by its slot's own ``__set__``, what that call
    finds and calls, in a third less time (it runs for every entry and location a compile
    makes: about 4% of its CPU)."""
    given: dict[str, Any] = {"__dataclass_setattr__": object.__setattr__, _FACTORY: _Factory()}
    slots = [made.__dict__.get(field.name) for field in fields]
    if fields and all(isinstance(slot, MemberDescriptorType) for slot in slots):
        given["__dataclass_own_class__"] = made
        given.update({f"__dataclass_set_{field.name}__": slot.__set__  # type: ignore[union-attr]
                      for field, slot in zip(fields, slots, strict=True)})
    parameters, lines, by_slot = ["self"], [], []
    defaulted = False
    for field in fields:
        value, default = field.name, f"__dataclass_dflt_{field.name}__"
        if field.default is not dataclasses.MISSING:
            given[default] = field.default
            parameters.append(f"{field.name}={default}")
        elif field.default_factory is not dataclasses.MISSING:
            given[default] = field.default_factory
            parameters.append(f"{field.name}={_FACTORY}")
            value = f"{default}() if {field.name} is {_FACTORY} else {field.name}"
        elif defaulted:
            raise TypeError(f"non-default argument {field.name!r} follows default argument")
        else:
            parameters.append(field.name)
        defaulted = defaulted or parameters[-1] != field.name
        lines.append(f"  __dataclass_setattr__(self, {field.name!r}, {value})")
        by_slot.append(f"  __dataclass_set_{field.name}__(self, {value})")
    if "__dataclass_own_class__" in given:
        lines = ["  if self.__class__ is __dataclass_own_class__:",
                 *(f" {line}" for line in by_slot), "  else:", *(f" {line}" for line in lines)]
    if hasattr(made, "__post_init__"):
        lines.append("  self.__post_init__()")
    source = (f"def __create_fn__({', '.join(given)}):\n"
              f" def __init__({', '.join(parameters)}):\n"
              + "\n".join(f" {line}" for line in lines or ["  pass"])
              + "\n return __init__")
    namespace: dict[str, Any] = {}
    exec(source, sys.modules[made.__module__].__dict__, namespace)
    init: Callable[..., None] = namespace["__create_fn__"](**given)
    init.__annotations__ = {**{field.name: field.type for field in fields}, "return": None}
    return init


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, field.name) for field in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for field, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, field.name, value)
