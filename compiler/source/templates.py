"""Render ``*.yaml.j2`` sources in Jinja2's sandbox, keeping a map back to template lines.

Templates are reviewed code, but their variables are data: rendering runs in an
:class:`~jinja2.sandbox.ImmutableSandboxedEnvironment` (no attribute escapes such as
``__class__``, no mutation of the caller's lists and dicts), with
:class:`~jinja2.StrictUndefined` (a misspelt variable is an error, not an empty string),
a step budget and bounded sizes and numbers (compiler/source/template_bounds.py), and a
cap on the size of the output. Every
failure becomes a located :class:`Diagnostic`, never a traceback.

Line mapping: before compiling, a marker naming the template line is placed in front of
every piece of top-level output. After rendering, the markers are cut out again and each
rendered line is mapped to the template line its first character came from, so a YAML
error in the rendered text can point into the template.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, Undefined, nodes
from jinja2.exceptions import SecurityError, UndefinedError

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.source.safe_read import MAX_SOURCE_BYTES, UnsafeFile, read_regular_file
from compiler.source.template_bounds import (
    CapabilityTemplateEnvironment,
    bound_loops,
)
from compiler.source.yaml_loader import decode_source, load_documents

TEMPLATE_ERROR = Code("template-error", "a template cannot be rendered")
TEMPLATE_INCLUDE = Code("template-include", "a template includes or imports another file")
TEMPLATE_SANDBOX = Code("template-sandbox", "a template is refused by the sandbox")
TEMPLATE_SYNTAX = Code("template-syntax", "a template is not valid Jinja")
TEMPLATE_TOO_LARGE = Code("template-too-large", "a rendered template is larger than the limit")
TEMPLATE_UNDEFINED = Code("template-undefined", "a template uses an undefined variable")
VARS_NOT_MAPPING = Code("vars-not-mapping", "the --vars file is not a mapping")
VARS_UNREADABLE = Code("vars-unreadable", "the --vars file cannot be read")
CODES = (
    TEMPLATE_ERROR, TEMPLATE_INCLUDE, TEMPLATE_SANDBOX, TEMPLATE_SYNTAX, TEMPLATE_TOO_LARGE,
    TEMPLATE_UNDEFINED, VARS_NOT_MAPPING, VARS_UNREADABLE,
)

MAX_OUTPUT_CHARS = 1 << 20
"""Rendered text beyond this many characters (1 MiB of ASCII) is refused."""


# Output inside these nodes is not written out directly: it becomes a value (a macro's
# return, a captured block) that the template may compare or transform, so it must stay
# exactly as written.
_CAPTURING_NODES = (nodes.Macro, nodes.CallBlock, nodes.AssignBlock, nodes.FilterBlock)

# Templates have no loader: one file is one template, so what a reviewer reads is all
# that renders.
_REFERENCE_NODES = (nodes.Include, nodes.Extends, nodes.Import, nodes.FromImport)
# What a template's own expressions can raise (1/0, "a" + 1, {}["x"], deep recursion).
_RENDER_ERRORS = (TemplateError, ArithmeticError, TypeError, ValueError, LookupError, RuntimeError)


@dataclass(frozen=True, slots=True)
class RenderedTemplate:
    """A rendered template: its text (None on error), findings, and the line map."""

    text: str | None
    diagnostics: tuple[Diagnostic, ...]
    line_map: tuple[int, ...] = ()

    def source_line(self, rendered_line: int) -> int:
        """The template line that produced 1-based ``rendered_line`` of :attr:`text`."""
        if not self.line_map:
            return max(rendered_line, 1)
        index = min(max(rendered_line, 1), len(self.line_map)) - 1
        return self.line_map[index]


def _json_default(value: Any) -> Any:
    if isinstance(value, Undefined):
        return str(value)  # StrictUndefined raises UndefinedError here, naming the variable
    raise TypeError(f"a {type(value).__name__} cannot be written as JSON")


def tojson(value: Any) -> str:
    """``value`` as JSON: a valid YAML flow value too, whatever quotes, colons or newlines
    it holds — the one safe way to put a variable into a YAML or JSON body."""
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def make_environment() -> CapabilityTemplateEnvironment:
    """The environment every ``*.yaml.j2`` source is rendered in."""
    environment = CapabilityTemplateEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["tojson"] = tojson  # bounded by the output cap: it adds no size
    return environment


def _instrument(node: nodes.Node, marker: str) -> None:
    """Put a line marker in front of every top-level output item below ``node``."""
    for child in node.iter_child_nodes():
        if isinstance(child, _CAPTURING_NODES):
            continue
        if isinstance(child, nodes.Output):
            instrumented: list[nodes.Expr] = []
            for item in child.nodes:
                kind = "d" if isinstance(item, nodes.TemplateData) else "e"
                instrumented.append(
                    nodes.TemplateData(f"{marker}{kind}{item.lineno}\x00", lineno=item.lineno)
                )
                instrumented.append(item)
            child.nodes = instrumented
        _instrument(child, marker)


def _strip_markers(raw: str, pattern: re.Pattern[str]) -> tuple[str, tuple[int, ...]]:
    """The text without markers, and the template line each rendered line starts on."""
    pieces: list[str] = []
    line_map: list[int] = []
    line_pending = True
    position = 0
    kind, line = "d", 1
    for match in [*pattern.finditer(raw), None]:
        segment = raw[position : match.start() if match else len(raw)]
        if segment:
            if line_pending:
                line_map.append(line)
            offset = segment.find("\n")
            while offset >= 0:
                if kind == "d":
                    line += 1
                if offset + 1 < len(segment):
                    line_map.append(line)
                offset = segment.find("\n", offset + 1)
            line_pending = segment.endswith("\n")
            pieces.append(segment)
        if match is not None:
            kind, line = match.group(1), int(match.group(2))
            position = match.end()
    return "".join(pieces), tuple(line_map)


def _template_line(error: BaseException, filename: str, template: Any) -> int:
    """The template line an exception raised while rendering comes from."""
    traceback = error.__traceback__
    lineno = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == filename:
            lineno = traceback.tb_lineno
        traceback = traceback.tb_next
    if lineno is None or template is None:
        return 1
    return int(template.get_corresponding_lineno(lineno))


def _render_chunks(template: Any, variables: Mapping[str, Any]) -> Iterator[str]:
    context = template.new_context(dict(variables), shared=False)
    yield from template.root_render_func(context)


def render_template(path: str, text: str, variables: Mapping[str, Any]) -> RenderedTemplate:
    """Render one template; errors come back as diagnostics located in the template."""
    environment = make_environment()
    # A fresh nonce per render: a variable value cannot forge a line marker.
    marker = f"\x00{secrets.token_hex(8)}"
    pattern = re.compile(re.escape(marker) + r"([de])(\d+)\x00")
    filename = f"<capc template {path}>"
    template = None
    chunk_line = 1
    try:
        tree = environment.parse(text, name=path, filename=filename)
        for reference in tree.find_all(_REFERENCE_NODES):
            message = "a capc template is self-contained: include, extends and import are refused"
            return _failure(path, reference.lineno, TEMPLATE_INCLUDE, message)
        _instrument(tree, marker)
        bound_loops(tree)
        code = environment.compile(tree, name=path, filename=filename)
        template = environment.template_class.from_code(
            environment, code, environment.make_globals(None), None
        )
        raw: list[str] = []
        size = 0
        for chunk in _render_chunks(template, variables):
            for found in pattern.finditer(chunk):
                chunk_line = int(found.group(2))
            raw.append(chunk)
            size += len(pattern.sub("", chunk))
            if size > MAX_OUTPUT_CHARS:
                message = f"rendered output exceeds {MAX_OUTPUT_CHARS} characters"
                return _failure(path, chunk_line, TEMPLATE_TOO_LARGE, message)
    except TemplateSyntaxError as error:
        return _failure(path, error.lineno or 1, TEMPLATE_SYNTAX, error.message or str(error))
    except SecurityError as error:
        line = _template_line(error, filename, template)
        return _failure(path, line, TEMPLATE_SANDBOX, f"refused by the sandbox: {error}")
    except UndefinedError as error:
        line = _template_line(error, filename, template)
        message = f"{error.message}; define it in a --vars file"
        return _failure(path, line, TEMPLATE_UNDEFINED, message)
    except _RENDER_ERRORS as error:
        line = _template_line(error, filename, template)
        return _failure(path, line, TEMPLATE_ERROR, f"{type(error).__name__}: {error}")
    rendered, line_map = _strip_markers("".join(raw), pattern)
    return RenderedTemplate(rendered, (), line_map)


def _failure(path: str, line: int, code: Code, message: str) -> RenderedTemplate:
    return RenderedTemplate(None, (Diagnostic.error(Location(path, line), code, message),))


def load_template_variables(paths: Sequence[str]) -> tuple[dict[str, Any], list[Diagnostic]]:
    """Merge the YAML mappings of ``--vars`` files; a later file's top-level keys win.

    They are read with the same strict loader as sources: a duplicate key or a YAML 1.1
    boolean in a variables file would change what every template renders.
    """
    merged: dict[str, Any] = {}
    diagnostics: list[Diagnostic] = []
    for path in paths:
        try:
            raw = read_regular_file(path, MAX_SOURCE_BYTES)
        except UnsafeFile as refused:
            diagnostics.append(Diagnostic.error(Location(path), VARS_UNREADABLE,
                                                f"{path} {refused.message}"))
            continue
        except OSError as error:
            reason = error.strerror or str(error)
            diagnostics.append(Diagnostic.error(Location(path), VARS_UNREADABLE, reason))
            continue
        text, problem = decode_source(raw)
        documents, problems = load_documents(text) if text is not None else ([], [])
        if problem is not None:
            problems = [problem]
        if problems:
            diagnostics += [Diagnostic.error(Location(path, p.line, p.col), p.code, p.message)
                            for p in problems]
            continue
        if not documents:
            continue
        if len(documents) > 1 or not isinstance(documents[0].data, dict):
            message = "a --vars file must hold one mapping"
            diagnostics.append(Diagnostic.error(Location(path), VARS_NOT_MAPPING, message))
            continue
        merged.update(documents[0].data)
    return merged, diagnostics
