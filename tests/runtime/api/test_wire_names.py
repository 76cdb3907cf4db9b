"""Wire names and header arguments (SPEC §11): the model sees identifiers, the server the
exact names of the document (``$filter``, ``api-version``, ``X-Request-Id``,
``@odata.type``), in the query, the headers, the body and nested fields.

Each tool is compiled from YAML by the real pipeline, loaded by the runtime and called
against a recording server on 127.0.0.1; the assertions are on what the server read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runtime import RecordingServer, recording_server
from tests.support.structured import call_tool, manifest_file

TOOLS = """\
apiVersion: capc/v1
kind: Capability
code: list_users
name: List users
type: api
options:
  description: List a tenant's users
  url: BASE/v1.0/users/{user_id}
  params:
    filter: {type: string, description: OData filter, wire_name: $filter}
    select: {type: array, items: {type: string}, style: comma, wire_name: $select}
    api_version: {type: string, required: true, wire_name: api-version}
  header_params:
    x_request_id: {type: string, description: Correlation id, wire_name: X-Request-Id}
    consistency_level: {type: string, enum: [eventual], wire_name: ConsistencyLevel}
    if_match: {type: string, required: true, wire_name: If-Match}
---
apiVersion: capc/v1
kind: Capability
code: create_group
name: Create group
type: api
options:
  description: Create a group
  method: POST
  url: BASE/v1.0/groups
  body:
    odata_type: {type: string, required: true, wire_name: '@odata.type'}
    display_name: {type: string, wire_name: displayName}
    owner:
      type: object
      properties:
        odata_bind: {type: string, wire_name: '@odata.bind'}
        user_name: {type: string, wire_name: user.name}
    members:
      type: array
      items:
        type: object
        properties:
          odata_id: {type: string, wire_name: '@odata.id'}
"""


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running


@pytest.fixture
def manifest(tmp_path: Path, server: RecordingServer) -> Path:
    return manifest_file(tmp_path, TOOLS, server.base_url)


async def test_query_and_header_arguments_travel_under_their_wire_names(
        manifest: Path, server: RecordingServer) -> None:
    await call_tool(manifest, "list_users", {
        "user_id": "u 1", "filter": "startswith(displayName,'a')", "select": ["id", "mail"],
        "api_version": "2024-01-01", "x_request_id": "r-1", "if_match": '"etag-7"'})
    request = server.last()
    assert request.path == "/v1.0/users/u%201"
    # Declared arguments go out in name order (api_version, filter, select).
    assert request.query == ("api-version=2024-01-01"
                             "&%24filter=startswith%28displayName%2C%27a%27%29&%24select=id,mail")
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["x-request-id"] == "r-1"
    assert headers["if-match"] == '"etag-7"'
    assert "consistencylevel" not in headers  # optional and not given: not sent


async def test_a_header_argument_with_a_line_break_is_refused_before_any_request(
        manifest: Path, server: RecordingServer) -> None:
    answer = await call_tool(manifest, "list_users", {
        "user_id": "u", "api_version": "1", "if_match": "x\r\nX-Injected: 1"})
    assert answer.startswith("Error")
    assert "if_match" in answer and "line break" in answer
    assert server.received == []


async def test_body_fields_nested_ones_included_travel_under_their_wire_names(
        manifest: Path, server: RecordingServer) -> None:
    await call_tool(manifest, "create_group", {
        "odata_type": "#microsoft.graph.group", "display_name": "Ops",
        "owner": {"odata_bind": "users/1", "user_name": "ann"},
        "members": [{"odata_id": "users/2"}, {"odata_id": "users/3"}]})
    assert json.loads(server.last().body) == {
        "@odata.type": "#microsoft.graph.group", "displayName": "Ops",
        "owner": {"@odata.bind": "users/1", "user.name": "ann"},
        "members": [{"@odata.id": "users/2"}, {"@odata.id": "users/3"}]}


def test_the_manifest_records_each_wire_name(manifest: Path) -> None:
    capabilities = json.loads(manifest.read_text())["capabilities"]
    users = next(c for c in capabilities if c["code"] == "list_users")
    arguments = users["api"]["arguments"]
    assert arguments["filter"] == {"bindings": ["query"], "type": "string", "wire": "$filter"}
    assert arguments["if_match"]["bindings"] == ["header"]
    assert "wire_name" not in json.dumps(users["tool"]["input_schema"])
    group = next(c for c in capabilities if c["code"] == "create_group")
    assert group["api"]["arguments"]["owner"]["accepts"]["wire"] == {
        "odata_bind": "@odata.bind", "user_name": "user.name"}
