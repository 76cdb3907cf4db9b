"""One tool the tree's compile refuses never refuses the whole document (issue 35, item 2).

The class: when every error of the import's compile sits in files the import would write,
those operations are skipped (a located warning carrying the compile's reason) and the
rest imported, the smaller tree compiled again; the import still never writes a tree its
compile refuses, nor a partial one. The case that found it: Telnyx's ``GET
/porting_orders``, whose form-exploded query object ``filter[status]`` holds ``details``,
an array of objects (form has no encoding for one); that field is now left out with a
note, and the operation imported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from compiler.authoring.openapi.generate import IMPORTER_VERSION
from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.tree_compile import CompileRequest
from tests.authoring.openapi.corpus import on_server, werkzeug_request
from tests.authoring.openapi.directory_corpus import directory_document
from tests.authoring.openapi.helpers import (
    document,
    generated,
    get,
    hermetic,
    imported,
    messages,
    write,
)
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer

SECURED = {"security": [{"token": []}],
           "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}}}


def _strict_clean(out: Path) -> None:
    result = build([str(out)], options=CompileOptions(
        strict=True, allowed_networks=("127.0.0.0/8",)), cwd=out.parent, use_cache=False)
    assert not result.diagnostics, [str(d) for d in result.diagnostics]


async def test_telnyxs_porting_orders_are_imported_without_the_array_of_objects(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    spec = directory_document("telnyx")
    out = tmp_path / "out"
    base = loopback.url("/v2")
    outcome = imported(spec, out, "listPortingOrders", server=base,
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    params = generated(out, "list_porting_orders")["options"]["params"]
    assert "value" in params and "details" not in params
    text = (out / "list_porting_orders.yaml").read_text(encoding="utf-8")
    assert "query field 'details' of 'filter[status]'" in text
    (sent,) = await received(out, loopback, [("list_porting_orders", {
        "value": "ported", "filter_customer_reference": "a&b"})],
        settings={"TELNYX_API_BEARER_AUTH": "t"})
    query = sent.path.partition("?")[2].split("&")
    assert "value=ported" in query and "filter%5Bcustomer_reference%5D=a%26b" in query, query
    from openapi_core import Config, OpenAPI

    data = on_server(json.loads(spec.read_text(encoding="utf-8")), base)
    OpenAPI.from_dict(data, config=Config(spec_validator_cls=None)).validate_request(
        werkzeug_request(sent.method, loopback.url(sent.path), sent.headers, sent.body))


def _exploded(field: dict[str, Any], required: bool = False) -> dict[str, Any]:
    """``GET /things`` with a form-exploded query object ``filter`` holding ``field``
    (as ``bad``) beside a string ``state``."""
    schema = {"type": "object", "properties": {"state": {"type": "string"}, "bad": field}}
    if required:
        schema["required"] = ["bad"]
    parameter = {"name": "filter", "in": "query", "required": required, "schema": schema}
    return document({"/things": {"get": get("listThings", parameters=[parameter])},
                     "/other": {"get": get("listOther")}})


OBJECTS = {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}


async def test_a_form_exploded_object_sends_its_scalar_fields_and_leaves_out_the_rest(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    for name, field in (("objects", OBJECTS),
                        ("nested", {"type": "object", "properties": {"a": {"type": "string"}}})):
        out = tmp_path / name
        spec = write(tmp_path / f"{name}-doc", _exploded(field))
        outcome = imported(spec, out, server=loopback.url("/api"), allow_private_networks=True)
        assert outcome.exit_code == 0, messages(outcome)
        options = generated(out, "list_things")["options"]
        assert set(options["params"]) == {"state"}, options
        assert "query field 'bad' of 'filter'" in (out / "list_things.yaml").read_text()
        _strict_clean(out)
    scalars = write(tmp_path / "scalars-doc", _exploded({"type": "array",
                                                         "items": {"type": "string"}}))
    out = tmp_path / "scalars"
    assert imported(scalars, out, server=loopback.url("/api"),
                    allow_private_networks=True).exit_code == 0
    (sent,) = await received(out, loopback, [("list_things", {"state": "on",
                                                              "bad": ["x", "y z"]})])
    assert sent.path == "/api/things?bad=x&bad=y+z&state=on", sent.path


def test_a_required_field_that_form_cannot_send_skips_the_operation(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, _exploded(OBJECTS, required=True)), out)
    assert outcome.exit_code == 0, messages(outcome)
    assert sorted(p.name for p in out.iterdir()) == ["list_other.yaml"]
    assert "GET /things not imported: required query field 'bad' of 'filter'" \
        in messages(outcome)


def _two_servers() -> dict[str, Any]:
    """Two operations; ``getLegacy`` has its own plain-http server and a bearer token."""
    legacy = get("getLegacy", servers=[{"url": "http://legacy.example.com/v1"}])
    return document({"/pets": {"get": get("listPets")}, "/legacy": {"get": legacy}},
                    **SECURED)


def test_a_tool_the_compile_refuses_is_skipped_and_the_rest_imported(tmp_path: Path) -> None:
    spec = write(tmp_path, _two_servers())
    out = tmp_path / "out"
    outcome = imported(spec, out, strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert sorted(p.name for p in out.iterdir()) == ["list_pets.yaml"]
    (skipped,) = [d for d in outcome.diagnostics if "getLegacy" in d.message
                  or "/legacy" in d.message]
    assert skipped.code == "openapi-skipped" and skipped.severity.value == "warning"
    assert skipped.path == str(spec) and skipped.line > 1  # at the operation in the document
    assert "GET /legacy not imported: its tool does not compile: plain-http-secret" \
        in skipped.message
    assert any(line.startswith("1 tools written, 1 operations skipped") for line in outcome.lines)
    _strict_clean(out)
    checked = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                        **hermetic(out, strict=True)))
    assert checked.exit_code == 0, (checked.lines, messages(checked))


def test_every_tool_refused_is_still_a_refusal_and_nothing_is_written(tmp_path: Path) -> None:
    legacy = get("getLegacy")
    data = document({"/legacy": {"get": legacy}}, **SECURED)
    data["servers"] = [{"url": "http://legacy.example.com/v1"}]
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, strict=True)
    assert outcome.exit_code == 1
    assert "plain-http-secret" in {d.code for d in outcome.diagnostics if d.is_error}
    assert not out.exists()


def test_an_error_outside_the_generated_files_refuses_as_before(tmp_path: Path) -> None:
    spec = write(tmp_path / "doc", _two_servers())
    out = tmp_path / "tree" / "api"
    broken = tmp_path / "tree" / "broken.yaml"
    broken.parent.mkdir()
    broken.write_text(yaml.safe_dump({"apiVersion": "capc/v1", "kind": "Capability",
                                      "code": "Broken", "name": "x", "type": "api"}))
    outcome = imported(spec, out, strict=True, tree=CompileRequest(
        sources=(str(broken.parent),), use_cache=False))
    assert outcome.exit_code == 1, messages(outcome)
    # Both refusals said, nothing dropped: the hand-written file's and the generated one's.
    assert {Path(d.path).name for d in outcome.diagnostics if d.is_error} \
        == {"broken.yaml", "get_legacy.yaml"}
    assert not out.exists()
    assert not any("does not compile" in d.message for d in outcome.diagnostics)


def test_check_on_files_an_older_importer_wrote_says_so(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/pets": {"get": get("listPets")}}))
    out = tmp_path / "out"
    assert imported(spec, out).exit_code == 0
    written = out / "list_pets.yaml"
    text = written.read_text(encoding="utf-8")
    assert f"importer: {IMPORTER_VERSION}" in text
    written.write_text(text.replace(f"importer: {IMPORTER_VERSION}",
                                    "importer: capc-openapi/1"), encoding="utf-8")
    checked = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                        **hermetic(out)))
    assert checked.exit_code == 1
    assert f"generated by capc-openapi/1, not by this capc's importer ({IMPORTER_VERSION})" \
        in "\n".join(checked.lines), checked.lines
    assert imported(spec, out).exit_code == 0
    again = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                      **hermetic(out)))
    assert again.exit_code == 0 and not any("importer" in line for line in again.lines)
