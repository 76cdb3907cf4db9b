"""compiler/runtime/records.py: a record is the dataclass of the same class, method for method."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from typing import Any, ClassVar

import pytest

from compiler.runtime.records import record

_NAN = float("nan")


def _shapes(decorate: Any) -> dict[str, type]:
    """The same class bodies under ``decorate(frozen=..., slots=...)``."""

    @decorate(frozen=True, slots=True)
    class Point:
        """Two coordinates and a label."""

        x: int
        y: Any = 0
        label: str = dataclasses.field(default="p", repr=False, compare=False)
        tags: tuple[str, ...] = dataclasses.field(default=(), hash=False)
        KIND: ClassVar[str] = "point"

    @decorate(frozen=True, slots=True)
    class Empty:
        pass

    @decorate(frozen=True, slots=True)
    class One:
        value: Any

    @decorate(slots=True)
    class Box:
        items: list[Any] = dataclasses.field(default_factory=list)
        name: str = "box"

    @decorate(frozen=True, slots=True)
    class Own:
        value: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return True

    @decorate(frozen=True, slots=True)
    class OwnHash:
        value: int

        def __hash__(self) -> int:
            return 7

    @decorate(frozen=True, slots=True)
    class Child(Point):
        z: int = 3

    @decorate(frozen=True, slots=True)
    class Made:
        """Defaults made per instance, and a check after __init__."""

        value: int
        seen: dict[str, int] = dataclasses.field(default_factory=dict)
        more: list[int] = dataclasses.field(default_factory=list, compare=False)

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")
            self.seen["made"] = self.value

    @decorate(frozen=True, slots=True)
    class Keyword:
        """A keyword-only field: dataclass's own frozen methods."""

        value: int
        flag: bool = dataclasses.field(default=False, kw_only=True)

    return {"Point": Point, "Empty": Empty, "One": One, "Box": Box, "Own": Own,
            "OwnHash": OwnHash, "Child": Child, "Made": Made, "Keyword": Keyword}


def _samples(shapes: dict[str, type]) -> list[Any]:
    point, box = shapes["Point"], shapes["Box"]
    looped = box()
    looped.items.append(looped)
    return [point(1), point(1, 2), point(1, 2, "q"), point(1, 2, tags=("a",)),
            point(1, _NAN), point(True, 1.0), point(1, [1, 2]), shapes["Empty"](),
            shapes["One"](_NAN), shapes["One"](None), box(), box([1]), box([1], "b"),
            looped, shapes["Own"](1), shapes["OwnHash"](2), shapes["Child"](1, 2, z=4),
            shapes["Child"](1, 2), shapes["Made"](3), shapes["Made"](3, {"a": 1}, [2]),
            shapes["Made"](value=4, more=[1]), shapes["Keyword"](1),
            shapes["Keyword"](1, flag=True)]


def _behaviour(values: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for one in values:
        try:
            hashed: Any = hash(one)
        except TypeError as error:
            hashed = str(error)
        seen.append((repr(one), hashed, type(one).__hash__ is None,
                     [one == other for other in values], [one != other for other in values],
                     [field.name for field in dataclasses.fields(one)],
                     type(one).__match_args__, type(one).__doc__,
                     hasattr(one, "__dict__"), type(one).__slots__,
                     str(inspect.signature(type(one))), repr(copy.copy(one)),
                     repr(copy.deepcopy(one)), _refusals(one)))
    return seen


def _refusals(one: Any) -> list[str]:
    """What assigning or deleting a field and another name does (the error's type and
    text: every record is slotted)."""
    seen = []
    one = copy.copy(one)  # a non-frozen one is changed
    for name in ("value", "x", "items", "other"):
        for deleting in (False, True):
            try:
                if deleting:
                    delattr(one, name)
                else:
                    setattr(one, name, 1)
                seen.append("done")
            except (AttributeError, TypeError) as error:
                seen.append(f"{type(error).__name__}: {error}")
    return seen


def test_records_behave_as_dataclasses() -> None:
    made, reference = _shapes(record), _shapes(dataclasses.dataclass)
    assert _behaviour(_samples(made)) == _behaviour(_samples(reference))
    for name, cls in made.items():
        assert cls.__repr__.__qualname__.startswith(f"{cls.__qualname__}.") \
            or ("__repr__" in reference[name].__dict__ and name == "Own")


def test_a_frozen_record_refuses_assignment_and_is_replaced() -> None:
    made = _shapes(record)
    point = made["Point"](1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    with pytest.raises(ValueError, match="negative"):
        made["Made"](-1)
    assert made["Made"](2).seen == {"made": 2} and made["Made"](2).seen is not \
        made["Made"](2).seen, "a default made per instance"
    moved = dataclasses.replace(point, y=5)
    assert (moved.x, moved.y) == (1, 5) and moved != point
    assert made["Point"](1, float("nan")) != made["Point"](1, float("nan"))
    same = made["Point"](1, _NAN)
    assert same == same and math.isnan(same.y), "a tuple compares an item to itself as equal"


@record(frozen=True, slots=True)
class _Pickled:
    """A record pickle can find by name."""

    value: int
    tags: tuple[str, ...] = ()


def test_a_frozen_record_pickles() -> None:
    import pickle

    one = _Pickled(1, ("a",))
    assert pickle.loads(pickle.dumps(one)) == one
    assert copy.deepcopy(one) == one and copy.copy(one) == one


@pytest.mark.parametrize("decorate", [record, dataclasses.dataclass], ids=["record", "dataclass"])
def test_a_dataclass_derives_from_a_record_as_from_the_dataclass(decorate: Any) -> None:
    """A user's frozen policy deriving from a frozen runtime class (EgressPolicy's case):
    allowed and frozen; a non-frozen one refused, as dataclass refuses it."""

    @decorate(frozen=True, slots=True)
    class Base:
        limit: int = 1

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        extra: str = "x"

    made = Derived(2, "y")
    assert (made.limit, made.extra) == (2, "y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.limit = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="non-frozen dataclass from a frozen one"):
        @dataclasses.dataclass
        class Loose(Base):
            extra: str = "x"


@pytest.mark.parametrize("decorate", [record, dataclasses.dataclass], ids=["record", "dataclass"])
def test_a_subclass_attribute_of_a_field_name_is_set_as_dataclass_sets_it(decorate: Any) -> None:
    """A frozen slotted record's own instances have their slots set directly; a subclass's
    go through ``object.__setattr__``, as dataclass's ``__init__`` does, so a property
    the subclass puts under a field's name is called as it would be."""

    @decorate(frozen=True, slots=True)
    class Base:
        value: int
        made: list[int] = dataclasses.field(default_factory=list)

    seen: list[int] = []

    class Watched(Base):
        __slots__ = ()

        @property
        def value(self) -> int:  # type: ignore[override]
            return -1

        @value.setter
        def value(self, given: int) -> None:
            seen.append(given)

    one = Base(3)
    assert (one.value, one.made) == (3, []) and Base(3).made is not one.made
    assert Watched(4).value == -1 and seen == [4]


def test_a_frozen_records_init_is_compiled_when_first_read() -> None:
    """Compiled at its first use (an instance, a signature), then the class's own function:
    what any reader of ``__init__`` gets is the compiled one, as from dataclass."""

    @record(frozen=True, slots=True)
    class Lazy:
        """Documented (an undocumented class's text is made from its signature)."""

        value: int
        label: str = "x"

    @record(frozen=True, slots=True)
    class Asked:
        """Documented."""

        value: int

    assert not inspect.isfunction(Lazy.__dict__["__init__"])  # nothing compiled yet
    made = Lazy(1)
    assert inspect.isfunction(Lazy.__dict__["__init__"]) and (made.value, made.label) == (1, "x")
    assert Lazy.__init__ is Lazy.__dict__["__init__"]
    assert Lazy.__init__.__qualname__.endswith("Lazy.__init__")
    assert str(inspect.signature(Asked)) == "(value: 'int') -> None"  # (postponed annotations)
    assert inspect.isfunction(Asked.__dict__["__init__"]) and Asked(2).value == 2
