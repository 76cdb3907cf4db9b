"""``capc serve``'s resource-server flags: one frozen value, built into the authenticator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from compiler.cli.serve_auth_options import AuthOptions, build_authenticator, serve_auth_options
from compiler.errors import ExitCode, UsageError
from compiler.runtime.serve.auth import ResourceServer
from tests.support.oauth import ISSUER, PUBLIC_URL, rsa_key

SEEN: list[AuthOptions] = []


@click.command()
@serve_auth_options
def serve(auth: AuthOptions) -> None:
    SEEN.append(auth)
    try:
        built = build_authenticator(auth)
    except UsageError as error:
        raise click.UsageError(str(error)) from None
    click.echo(repr(built))


@pytest.fixture
def jwks_file(tmp_path: Path) -> str:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [rsa_key().jwk()]}))
    return str(path)


def run(*args: str) -> Any:
    SEEN.clear()
    return CliRunner().invoke(serve, list(args))


def test_the_flags_build_the_resource_server(jwks_file: str):
    result = run("--auth-issuer", ISSUER, "--public-url", PUBLIC_URL + "/",
                 "--auth-jwks", jwks_file, "--auth-scope", "sales=tools.sales",
                 "--auth-scope", "sales=tools.read", "--auth-group-claim", "org",
                 "--auth-leeway", "5")
    assert result.exit_code == 0, result.output
    assert [AuthOptions(issuer=ISSUER, public_url=PUBLIC_URL + "/", jwks=jwks_file,
                                scopes=(("sales", "tools.sales"), ("sales", "tools.read")),
                                group_claim="org", leeway_seconds=5.0)] == SEEN
    server = build_authenticator(SEEN[0])
    assert isinstance(server, ResourceServer)
    assert server.settings.public_url == PUBLIC_URL
    assert server.settings.required_scopes("sales") == {"tools.sales", "tools.read"}
    assert server.settings.group_claim == "org" and server.settings.leeway_seconds == 5.0


def test_no_flag_means_no_authenticator():
    result = run()
    assert result.exit_code == 0 and result.output == "None\n"
    assert build_authenticator(AuthOptions(public_url=PUBLIC_URL)) is None


def test_the_audience_alias_names_the_same_value(jwks_file: str):
    result = run("--auth-issuer", ISSUER, "--auth-audience", PUBLIC_URL, "--auth-jwks",
                 jwks_file)
    assert result.exit_code == 0, result.output
    assert SEEN[0].public_url == PUBLIC_URL


@pytest.mark.parametrize(("args", "message"), [
    (["--auth-issuer", ISSUER], "needs --public-url, --auth-jwks"),
    (["--auth-jwks", "x.json", "--public-url", PUBLIC_URL], "needs --auth-issuer"),
    (["--auth-scope", "sales"], "expected PROFILE=SCOPE"),
    (["--auth-scope", "=x"], "expected PROFILE=SCOPE"),
    (["--auth-leeway", "9999"], "--auth-leeway"),
])
def test_incomplete_or_bad_flags_are_usage_errors(args: list[str], message: str):
    result = run(*args)
    assert result.exit_code == ExitCode.USAGE
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("extra", "message"), [
    (["--public-url", "ftp://x"], "absolute http(s) URL"),
    (["--public-url", PUBLIC_URL, "--auth-scope", 'sales=a"b'], "a scope is"),
    (["--public-url", PUBLIC_URL, "--auth-jwks", "http://keys.example.test/jwks"],
     "must be https"),
])
def test_bad_values_are_located_usage_errors(jwks_file: str, extra: list[str], message: str):
    args = ["--auth-issuer", ISSUER, "--auth-jwks", jwks_file, *extra]
    result = run(*args)
    assert result.exit_code == ExitCode.USAGE
    assert "OAuth resource server: " in result.output and message in result.output
