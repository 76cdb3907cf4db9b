"""Generated capability data → the YAML text of one reviewed file.

Deterministic: the same document and selection give the same bytes on every machine.
Keys come in one fixed order (a parameter reads type, description, required, then its
constraints, then its children), short leaf mappings are written in flow style, and the
comments above the document say where it came from, what the import could not keep and
which settings it needs. No comment can break the YAML: every line is cleaned of
control characters and line breaks first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.generate import GeneratedTool
from compiler.authoring.openapi.yaml_layout import (
    LINE_LIMIT,
    WIDTH,
    GeneratedResolver,
    fits,
    foldable,
    folded_lines,
)
from compiler.authoring.openapi.yaml_scalars import ScalarStyles
from compiler.authoring.openapi.yaml_writer import Unwritable, write_yaml
from compiler.runtime.manifest.parameters import PARAMETER_SECTIONS

_ENTRY_ORDER = ("type", "wire_name", "description", "required", "default", "enum", "nullable",
                "format", "minimum", "maximum", "min_length", "max_length", "pattern", "min_items",
                "max_items", "style", "multiple", "items", "properties",
                "additional_properties")
_ARGUMENT_TABLES = tuple(section.key for section in PARAMETER_SECTIONS)


_STR = "tag:yaml.org,2002:str"


class _Dumper(yaml.SafeDumper, GeneratedResolver):
    """Long text folded within 100 columns, block sequences indented under their key,
    flow style only for a collection that fits on its line: the output passes the
    repository's .yamllint. The Python emitter: libyaml's cannot indent a sequence under
    its key, nor fold text before a word that would overflow."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        """Indent a sequence under its key (yamllint's ``indent-sequences``)."""
        super().increase_indent(flow, False)

    def process_scalar(self) -> None:
        """Text that would run past the line limit is written folded, by words."""
        event = self.event
        assert isinstance(event, yaml.ScalarEvent)
        if self.analysis is None:
            self.analysis = self.analyze_scalar(event.value)
        if self.style is None:
            self.style = self.choose_scalar_style()
        value = event.value
        if (not self.simple_key_context and not self.flow_level and event.tag == _STR
                and self.style != "|" and self.analysis.allow_block and foldable(value)
                and (self.style == ">" or self.column + 3 + len(value) > LINE_LIMIT)):
            self._write_folded(value)
            self.analysis = None
            self.style = None
            return
        if (not self.simple_key_context and not self.flow_level and " " not in value
                and "\n" not in value and self.column + 3 + len(value) > LINE_LIMIT):
            # One long word (a URL, a JSON pointer): alone on the next line, where
            # .yamllint lets a word without spaces pass the limit.
            self.write_indent()
        super().process_scalar()

    def _write_folded(self, text: str) -> None:
        self.write_indicator(">" + self.determine_block_hints(text), True)
        self.write_line_break()
        for line in folded_lines(text, LINE_LIMIT - (self.indent or 0)):
            if line:
                self.write_indent()
                self.stream.write(line.encode(self.encoding) if self.encoding else line)
            self.write_line_break()


class _Flow(dict[str, Any]):
    """A mapping short enough to be written on its key's line."""


class _FlowList(list[Any]):
    """A sequence short enough to be written on its key's line."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, value, style=text_style(value))


def text_style(value: str) -> str | None:
    """The style render asks for a text: folded for several lines, but double-quoted for
    one with a line starting with a space or tab ("more indented": the emitter's folding
    breaks such a line so that it reads back otherwise, as Kubernetes' descriptions did;
    quoted, every break is an escape and the text reads back as it is)."""
    if "\n" not in value:
        return None
    return '"' if value[:1] in (" ", "\t") or "\n " in value or "\n\t" in value else ">"


def _flow_mapping(dumper: yaml.SafeDumper, value: _Flow) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=True)


def _flow_sequence(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)


def _block_mapping(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=False)


def _block_sequence(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=False)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(_Flow, _flow_mapping)
_Dumper.add_representer(_FlowList, _flow_sequence)
_Dumper.add_representer(dict, _block_mapping)
_Dumper.add_representer(list, _block_sequence)


def _styled(value: Any, column: int) -> Any:
    """``value`` with each collection marked flow (it holds only short scalars and fits
    on a line starting at ``column``, its key included) or block."""
    if isinstance(value, Mapping):
        if value and fits(value, column):
            return _Flow(value)
        return {key: _styled(child, column + 2) for key, child in value.items()}
    if isinstance(value, list):
        if value and fits(value, column):
            return _FlowList(value)
        return [_styled(child, column + 2) for child in value]
    return value


def _ordered_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    ordered = {key: entry[key] for key in _ENTRY_ORDER if key in entry}
    ordered.update({key: value for key, value in entry.items() if key not in ordered})
    if isinstance(ordered.get("items"), Mapping):
        ordered["items"] = _ordered_entry(ordered["items"])
    if isinstance(ordered.get("additional_properties"), Mapping):
        ordered["additional_properties"] = _ordered_entry(ordered["additional_properties"])
    if isinstance(ordered.get("properties"), Mapping):
        ordered["properties"] = {name: _ordered_entry(child)
                                 for name, child in ordered["properties"].items()}
    return ordered


def _ordered(data: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(data)
    options = dict(result.get("options", {}))
    for table in _ARGUMENT_TABLES:
        if isinstance(options.get(table), Mapping):
            options[table] = {name: _ordered_entry(entry)
                              for name, entry in options[table].items()}
    result["options"] = options
    return result


def comment_line(text: str) -> str:
    """One line of a YAML comment: visible characters only, no line break."""
    return clean_text(text, 400).replace("\n", " ")


# The repository's .yamllint allows 100 columns; a comment is folded to fit, never cut
# (a word longer than that, a URL say, stays whole on a line of its own).
COMMENT_WIDTH = 100
MAX_COMMENT = 4000
GENERATED_BY = "# Generated by `capc import openapi` from "
OPERATION_AFTER = ", operation "


def comment_lines(text: str, first: str = "# ", rest: str = "# ") -> list[str]:
    """``text`` as comment lines of at most :data:`COMMENT_WIDTH` columns (``first``
    starts the first line, ``rest`` the others); visible characters only."""
    words = clean_text(text, MAX_COMMENT).split()
    lines: list[str] = []
    line = first
    for word in words:
        if len(rest) + len(word) > COMMENT_WIDTH:
            # Longer than a line: alone after "# ", where .yamllint lets a word without
            # spaces pass the limit.
            lines += [line, f"# {word}"]
            line = rest
            continue
        start = line in (first, rest)
        if not start and len(line) + 1 + len(word) > COMMENT_WIDTH:
            lines.append(line)
            line = rest
            start = True
        line += word if start else " " + word
    lines.append(line)
    return [line.rstrip() for line in lines if line != rest or line == first]


def render_tool(tool: GeneratedTool, schema_reference: str, document_shown: str,
                styles: ScalarStyles | None = None) -> str:
    """The full text of the tool's file (``document_shown``: the document as recorded,
    see :func:`compiler.authoring.openapi.existing.document_record`; ``styles``: the
    import's choices of scalar styles so far, shared by its files)."""
    key = tool.operation.key
    lines = [f"# yaml-language-server: $schema={schema_reference}",
             "#",
             *comment_lines(f"{GENERATED_BY[2:]}{document_shown}{OPERATION_AFTER}"
                            f"{key.label}."),
             "# Re-importing regenerates this file: put your changes in a ToolOverride file."]
    if tool.settings:
        lines.append("# Settings to create:")
        for setting in tool.settings:
            lines += comment_lines(f"{setting.name}: {setting.meaning}", "#   ", "#     ")
    if tool.notes:
        lines.append("# Not kept as the document says:")
        for note in tool.notes:
            lines += comment_lines(note, "#   - ", "#     ")
    return "\n".join(lines) + "\n" + yaml_text(rendered_data(tool), styles)


def rendered_data(tool: GeneratedTool) -> dict[str, Any]:
    """The data of the tool's file as :func:`render_tool` writes it (keys in file order)."""
    return _ordered(tool.data)


def yaml_text(data: Mapping[str, Any], styles: ScalarStyles | None = None) -> str:
    """``data`` as YAML: the fast writer, or PyYAML's dumper for a shape it leaves.

    Proven equal by
    tests/authoring/openapi/test_yaml_writer.py::test_public_documents_render_the_same_bytes
    """
    try:
        return write_yaml(data, styles)
    except Unwritable:
        return dumped_yaml(data)


def dumped_yaml(data: Mapping[str, Any]) -> str:
    """``data`` as YAML through PyYAML's dumper (the general path)."""
    return yaml.dump(_styled(data, 0), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=WIDTH)
