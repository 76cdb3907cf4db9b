"""docs/serve.md, run: the tree compiled, the host-app block against the ASGI app, the
skipped ``capc serve`` line started for real, the IDE entry's exact command spoken to
over stdio, the hosted-connector entries checked against the SDK types, and the
Kubernetes objects checked against the command line they pass."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import TypeAdapter

from compiler.cli.serving import serve_command
from tests.serve.test_serve_stdio import Child
from tests.support.agents import unknown_keys
from tests.support.doc_blocks import code_blocks, run_blocks
from tests.support.paths import REPO_ROOT
from tests.support.signing import new_key

PAGE = REPO_ROOT / "docs" / "serve.md"


def capc_argv(command: list[str]) -> list[str]:
    """``capc ...`` as this checkout's ``python -m compiler ...``."""
    assert command[0] == "capc"
    return [sys.executable, "-m", "compiler", *command[1:]]


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    return env


async def test_the_serve_page_runs(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    printed = await run_blocks(PAGE, tmp_path, namespace)
    assert printed.splitlines()[-1] == "['get_weather']"
    check_hosted_entries(namespace)
    blocks = code_blocks(PAGE)
    serve_line = next(block for block in blocks if block.skip and "capc serve" in block.text)
    started_from_the_page(serve_line.text.strip(), tmp_path)
    ide = json.loads(next(block.text for block in blocks if block.lang == "json"))
    spoken_to_over_stdio(ide["mcpServers"]["capc-support"], tmp_path)


def check_hosted_entries(namespace: dict[str, Any]) -> None:
    from anthropic.types.beta import BetaMCPToolsetParam, BetaRequestMCPServerURLDefinitionParam
    from openai.types.responses.tool_param import Mcp

    for value, annotation in ((namespace["openai_tool"], Mcp),
                              (namespace["anthropic_server"],
                               BetaRequestMCPServerURLDefinitionParam),
                              (namespace["anthropic_toolset"], BetaMCPToolsetParam)):
        TypeAdapter(annotation).validate_python(value)
        assert unknown_keys(value, annotation) == []
    assert namespace["openai_tool"]["server_url"].endswith("/mcp/support-bot")


def started_from_the_page(line: str, cwd: Path) -> None:
    """The page's ``capc serve`` line, on a free port, answering tools/list."""
    words = shlex.split(line)
    env = dict(word.split("=", 1) for word in words if "=" in word and not word.startswith("-"))
    command = [word for word in words if word not in {f"{k}={v}" for k, v in env.items()}]
    command[command.index("--port") + 1] = "0"
    process = subprocess.Popen(capc_argv(command), cwd=cwd, env=child_env(env),
                               stderr=subprocess.PIPE, text=True)
    try:
        url = listening_url(process)
        reply = httpx.post(url + "/mcp/support-bot", headers={
            "content-type": "application/json", "accept": "application/json"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=60)
        assert [tool["name"] for tool in reply.json()["result"]["tools"]] == ["get_weather"]
        assert httpx.get(url + "/readyz").status_code == 200
    finally:
        process.terminate()
        # uvicorn shuts down gracefully, then re-raises the signal it caught (as a
        # process manager expects of a SIGTERM'd server).
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)


def listening_url(process: subprocess.Popen[str]) -> str:
    """The URL uvicorn says it listens on (read from stderr, bounded by a thread)."""
    found: list[str] = []
    done = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for text in process.stderr:
            match = re.search(r"running on (http://[\d.]+:\d+)", text)
            if match:
                found.append(match.group(1))
                done.set()
        done.set()
    threading.Thread(target=read, daemon=True).start()
    done.wait(120)
    assert found, "capc serve did not start listening"
    return found[0]


def spoken_to_over_stdio(entry: dict[str, Any], cwd: Path) -> None:
    child = Child.__new__(Child)
    child.process = subprocess.Popen(capc_argv([entry["command"], *entry["args"]]), cwd=cwd,
                                     env=child_env(entry["env"]), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.__init_reader__()
    child.send(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}')
    assert [tool["name"] for tool in child.receive()["result"]["tools"]] == ["get_weather"]
    assert child.close()[0] == 0


def test_the_kubernetes_objects_agree_with_the_command_line() -> None:
    text = next(block.text for block in code_blocks(PAGE)
                if block.text.startswith("# deploy/serve.yaml"))
    deployment, service = yaml.safe_load_all(text)
    assert deployment["spec"]["replicas"] > 1
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = [argument.replace("$(CAPC_TRUSTED_KEY)", new_key().public_text)
            for argument in container["args"]]
    assert args[0] == "serve"  # the image's entry point is capc
    context = serve_command.make_context("serve", args[1:])
    options = context.params
    assert options["watch"] is True and options["public_keys"]
    port = options["port"]
    assert container["ports"][0]["containerPort"] == port
    assert service["spec"]["ports"][0]["targetPort"] == port
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port}
    (mount,) = container["volumeMounts"]
    assert "subPath" not in mount
    assert os.path.dirname(options["manifest_path"]) == mount["mountPath"]
    env = {item["name"] for item in container["env"]}
    assert {"CAPC_TRUSTED_KEY", "CAPC_SETTING_WEATHER_TOKEN"} <= env
