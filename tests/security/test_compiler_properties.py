"""Properties: the strict loader and the compiler never raise on any input, and slot
substitution never moves a request to another origin."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.diagnostics import Diagnostic
from compiler.pipeline import CompileOptions, compile_documents
from compiler.runtime.api.request import build_request, resolve_endpoint
from compiler.runtime.egress.http import check_same_origin
from compiler.runtime.errors import ToolCallRefused
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.read import ApiEndpoint, ArgumentBinding
from compiler.source.documents import parse_source

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Words the schemas and checks react to, so generated documents reach the deep checks.
KEYS = ["apiVersion", "kind", "code", "name", "type", "options", "description", "url",
        "method", "headers", "params", "path_params", "body", "body_template", "body_params",
        "files", "timeout", "max_response_bytes", "server_label", "server_url", "tool",
        "input_schema", "input_schema_patch", "pattern", "required", "default", "enum",
        "Authorization", "when", "codes", "allowed_tools", "require_approval", "$ref"]
VALUES = ["capc/v1", "Capability", "ToolOverride", "api", "mcp", "internal", "GET", "POST",
          "https://api.example.com/v1/{id}", "http://127.1/", "http://[::ffff:a9fe:a9fe]/",
          "Bearer ${TOKEN}", "${BAD", "{id}", "string", "integer", "(a+)+$", "never", "h"]

scalars = (st.sampled_from(VALUES) | st.text(max_size=20) | st.integers() | st.booleans()
           | st.none() | st.floats(allow_nan=True, allow_infinity=True))
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), children, max_size=6),
    max_leaves=30,
)


def _compile(path: str, raw: bytes, template: bool = False) -> list[Diagnostic]:
    """Load and compile one file the way the CLI does; return every diagnostic."""
    loaded, problems = parse_source(path, raw, {}, template=template)
    result = compile_documents(loaded, CompileOptions())
    errors = [*problems, *result.diagnostics]
    if result.manifest is not None and not problems:
        dump_manifest(result.manifest)  # what the CLI writes must serialise too
    assert (result.manifest is None) or not any(d.is_error for d in result.diagnostics)
    return errors


@PROPERTY_SETTINGS
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    _compile("a.yaml", raw)


@PROPERTY_SETTINGS
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text: str) -> None:
    _compile("a.yaml", text.encode("utf-8", errors="surrogatepass"))


@PROPERTY_SETTINGS
@given(st.text(alphabet=st.sampled_from(list("{}%#-+*~ab.()[]'\"\n|= 0129")), max_size=120))
def test_arbitrary_templates_never_raise(text: str) -> None:
    _compile("a.yaml.j2", text.encode(), template=True)


@PROPERTY_SETTINGS
@given(st.lists(documents, min_size=1, max_size=3))
def test_generated_documents_never_raise(generated: list[object]) -> None:
    text = yaml.safe_dump_all(generated, allow_unicode=True)
    diagnostics = _compile("a.yaml", text.encode())
    for diagnostic in diagnostics:
        assert diagnostic.line >= 1 and diagnostic.col >= 1 and diagnostic.message


@PROPERTY_SETTINGS
@given(documents)
def test_generated_capabilities_never_raise(options: object) -> None:
    document = {"apiVersion": "capc/v1", "kind": "Capability", "code": "h", "name": "h",
                "type": "api", "options": options}
    _compile("a.yaml", yaml.safe_dump(document).encode())


ENDPOINT = ApiEndpoint(
    method="GET",
    url="https://api.example.com:8443/v1/{first}/items/{second}",
    headers={},
    body_template=None,
    timeout=30.0,
    max_response_bytes=1 << 20,
    arguments={
        "first": ArgumentBinding("first", ("path",), "string"),
        "second": ArgumentBinding("second", ("path",), "string"),
        "third": ArgumentBinding("third", ("query",), "string"),
    },
    placeholders=(),
)


@PROPERTY_SETTINGS
@given(st.text(), st.text(), st.text())
def test_slot_substitution_never_changes_the_origin(first: str, second: str, third: str) -> None:
    resolved = resolve_endpoint(ENDPOINT, {})
    try:
        request = build_request(resolved, {"first": first, "second": second, "third": third})
    except ToolCallRefused:
        return  # refused before anything is built ("..", empty segments): also safe
    check_same_origin(request.url, ENDPOINT.url)


VALID_API_OPTIONS = {
    "description": "d", "url": "https://api.example.com/v1/{id}", "method": "POST",
    "path_params": {"id": {"type": "string"}}, "params": {"q": {"type": "integer"}},
    "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 10, "max_response_bytes": 1000,
}


EDGE_NUMBERS = st.sampled_from(
    [float("nan"), float("inf"), float("-inf"), -0.0, 0, -1, 1e308, 2**64, -(2**63), 1e-300]
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(sorted(VALID_API_OPTIONS)), EDGE_NUMBERS | scalars | documents)
def test_one_mutated_field_of_a_valid_capability_never_raises(key: str, value: object) -> None:
    options = {**VALID_API_OPTIONS, key: value}
    document = {"apiVersion": "capc/v1", "kind": "Capability", "code": "h", "name": "h",
                "type": "api", "options": options}
    _compile("a.yaml", yaml.safe_dump(document).encode())
