"""One position table per document: a mapping entry's key and value positions share its
path, and a value that is not located itself (an alias, a node too deep) keeps its key's
position while its value falls back to the nearest located ancestor, as it always did."""

from __future__ import annotations

from compiler.source.yaml_loader import MAX_DEPTH, load_documents


def test_a_mapping_entry_has_its_key_and_its_value_position() -> None:
    [document], problems = load_documents("top:\n  name:   Lookup\n  list:\n    - one\n")
    assert problems == []
    where = document.positions
    assert where.locate(("top", "name")) == (2, 11)
    assert where.locate(("top", "name"), key=True) == (2, 3)
    assert where.locate(("top", "list", 0)) == (4, 7)
    assert where.locate(("top", "list", 0), key=True) == (4, 7)  # an item has no key
    # An absent path: its nearest located ancestor, whose key when a key is asked for.
    assert where.locate(("top", "missing", "deeper")) == (2, 3)
    assert where.locate(("top", "missing", "deeper"), key=True) == (1, 1)
    assert where.locate(()) == (1, 1)


def test_an_alias_keeps_its_key_position_and_falls_back_for_its_value() -> None:
    [document], problems = load_documents("a: &x {b: 1}\nlater:\n  d: *x\n")
    assert problems == []
    where = document.positions
    assert where.locate(("later", "d"), key=True) == (3, 3)
    assert where.locate(("later", "d")) == (3, 3)  # not located: its parent's value
    assert where.locate(("later", "d", "b")) == (3, 3)


def test_a_node_too_deep_keeps_its_key_position() -> None:
    text = "".join("  " * depth + f"k{depth}:\n" for depth in range(MAX_DEPTH + 1))
    text += "  " * (MAX_DEPTH + 1) + "leaf: 1\n"
    [document], problems = load_documents(text)
    assert [problem.code.id for problem in problems] == ["yaml-too-deep"]
    path = tuple(f"k{depth}" for depth in range(MAX_DEPTH + 1))
    where = document.positions
    assert where.locate(path, key=True) == (MAX_DEPTH + 1, 2 * MAX_DEPTH + 1)
    assert where.locate(path) == where.locate(path[:-1])


def test_a_duplicate_key_names_the_first_key_line() -> None:
    _, problems = load_documents("a: 1\nb:\n  c: &y 2\n  c: 3\n  e: *y\n  e: 4\n")
    messages = [problem.message for problem in problems]
    assert messages == ["duplicate key 'c' (first at line 3)",
                        "duplicate key 'e' (first at line 5)"]
