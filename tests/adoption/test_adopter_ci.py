"""The adoption path end to end, played as a platform team would, in a fresh git repository
that has only its own files: a multi-tenant export with soft-deleted rows and literal
secrets, an internal API on an allowed 10.x range, one MCP server reachable (a real one on
127.0.0.1) and one not, tools registered by the host application, and the CI workflow and
signing job of docs/ci.md run verbatim, step by step, with capc installed from a wheel.

The only substitution: the workflow installs capc from a git URL at a tag; offline, the
same requirement names the wheel built from this checkout (and pip gets no index).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.adoption.company_export import leaked, rows, write_export
from tests.adoption.host_app import REGISTRATIONS, write_host_app
from tests.adoption.runners import fresh_runner
from tests.support.mcp_server import running_mcp_server
from tests.support.paths import REPO_ROOT

CI_PAGE = (REPO_ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
GIT_URL = re.compile(r"git\+https://github\.com/OWNER/capc@v[0-9.]+")
PYPROJECT = f"""\
[project]
name = "acme-agents"
version = "1.0.0"

[tool.capc]
strict = true
allowed_networks = ["10.20.0.0/16", "127.0.0.0/8"]
registrations = {REGISTRATIONS}
"""
WIKI_REASON = "the wiki lists tools per user; reviewed by the platform team"


def _fenced_after(marker: str, language: str) -> str:
    start = CI_PAGE.index(marker)
    match = re.compile(rf"^```{language}\n(.*?)^```", re.MULTILINE | re.DOTALL)
    found = match.search(CI_PAGE, start)
    assert found is not None, marker
    return found.group(1)


class Shell:
    """Runs commands as the runner would: bash -euo pipefail, the runner's venv first on
    PATH, no variable of this test process that could point at the checkout."""

    def __init__(self, repo: Path, venv: Path, summary: Path) -> None:
        self.repo, self.venv, self.summary = repo, venv, summary
        self.outputs: list[str] = []

    def __call__(self, command: str, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("VIRTUAL_ENV", "PYTHONPATH", "CAPC_SIGNING_KEY")}
        environment["PATH"] = os.pathsep.join(
            [str(self.venv / "bin"), *(p for p in environment.get("PATH", "").split(os.pathsep)
                                       if not p.startswith(sys.prefix))])
        environment.update(PIP_NO_INDEX="1", GITHUB_STEP_SUMMARY=str(self.summary), **env)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=self.repo,
                              env=environment, capture_output=True, text=True, timeout=600)
        self.outputs += [done.stdout, done.stderr]
        assert "Traceback" not in done.stderr, done.stderr
        return done


def git(repo: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=acme", "-c", "user.email=ci@acme.example",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
                   cwd=repo, check=True, capture_output=True)


def export_rows(calc_url: str) -> list[dict[str, Any]]:
    """Tenant 9's table (and tenant 7's, and deleted rows), with the app's internal codes
    and a reachable MCP server added."""
    extra = [
        {"id": 20 + index, "group_id": 9, "name": code.title(), "code": code,
         "type": "internal", "description": f"The {code} tools", "options": None,
         "is_default": index == 0, "ordering": 20 + index, "deleted_at": None}
        for index, code in enumerate(("base", "rag", "crm"))
    ]
    extra.append({"id": 30, "group_id": 9, "name": "Calculator", "code": "calc", "type": "mcp",
                  "description": "Arithmetic", "options": json.dumps({
                      "server_label": "calc", "server_url": calc_url,
                      "require_approval": "never", "allowed_tools": ["add"]}),
                  "is_default": 0, "ordering": 30, "is_active": 1})
    return rows() + extra


def run_steps(steps: list[dict[str, Any]], shell: Shell, expressions: dict[str, str],
              substitute: dict[str, str]) -> list[str]:
    """Each ``run:`` step of a job as written (GitHub expressions filled in); steps that
    call GitHub's API are left out. Returns the names of the steps that ran."""
    ran = []
    for step in steps:
        if "run" not in step or "gh pr comment" in step["run"]:
            continue
        condition = str(step.get("if", ""))
        if "capabilities-reviewed" in condition:
            continue  # this pull request carries the label (the gate is checked below)
        command = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: expressions[m.group(1)],
                         step["run"])
        for old, new in substitute.items():
            command = command.replace(old, new)
        env = {name: re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: expressions[m.group(1)],
                            str(value)) for name, value in (step.get("env") or {}).items()}
        done = shell(command, **env)
        assert done.returncode == 0, (step["name"], done.stdout, done.stderr)
        ran.append(step["name"])
    return ran


def test_an_adopter_goes_from_import_to_a_signed_manifest(
        tmp_path: Path, wheel: Path, runner: Path) -> None:
    repo = write_host_app(tmp_path / "acme")
    (repo / "pyproject.toml").write_text(PYPROJECT)
    shell = Shell(repo, runner, tmp_path / "step-summary.md")
    wheel_requirement = f"file://{wheel}"
    # The developer's machine: capc installed the way the README says (from the wheel).
    install = shell(f'python -m pip install "capc[mcp,sign] @ {wheel_requirement}"')
    assert install.returncode == 0, install.stderr

    with running_mcp_server() as calc:
        export = write_export(repo, export_rows(calc.url))
        imported = shell(f"capc import {export.name} --group 9")
        assert imported.returncode == 0, imported.stderr
        assert "left out soft-deleted row 6 (id 6): is_active is false" in imported.stderr
        assert "GET_WEATHER_X_API_KEY" in imported.stderr
        export.unlink()  # the export held secrets: it is not committed
        # One server reachable, one not (10.20.7.7 is an internal address CI cannot reach).
        locked = shell("capc lock --server calc --server wiki --timeout 3")
        assert locked.returncode == 2
        assert "server 'wiki'" in locked.stderr and "1 server(s) listed" in locked.stderr
        assert list(json.loads((repo / "capc.lock").read_text())["servers"]) == ["calc"]
    # The unreachable server is a documented exception, so --strict accepts it.
    wiki = repo / "capabilities" / "mcp" / "wiki.yaml"
    wiki.write_text(wiki.read_text().replace(
        "  server_label: wiki\n", f"  server_label: wiki\n  unpinned: {WIKI_REASON}\n"))
    validated = shell("capc validate")
    assert validated.returncode == 0, validated.stderr

    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("build/\n__pycache__/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "capabilities imported from the table")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    # The pull request: one new API.
    (repo / "capabilities" / "api" / "status.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: status\nname: Status\n"
        "description: Service status.\ntype: api\noptions:\n"
        "  url: https://status.acme.example/api/v1/summary\n"
        "  description: The status of every internal service.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "status API")

    # The CI workflow of docs/ci.md, verbatim.
    workflow = yaml.safe_load(_fenced_after("## The workflow", "yaml"))
    job = workflow["jobs"]["capc"]
    assert GIT_URL.search(job["env"]["CAPC"])
    capc_requirement = GIT_URL.sub(wheel_requirement, job["env"]["CAPC"])
    shell.venv = fresh_runner(tmp_path / "ci", runner)  # a new runner: capc not installed
    expressions = {"github.base_ref": "main", "github.event_name": "pull_request"}
    ran = run_steps(job["steps"], _with_env(shell, CAPC=capc_requirement), expressions, {})
    assert ran == ["Install capc", "Validate the capabilities", "Compile the manifest",
                   "The manifest is what the sources compile to",
                   "Replay the recorded tool tests (docs/tool-tests.md)",
                   "Diff against the base branch",
                   "Tool-definition budget of each profile (docs/profiles.md)"]
    diff = (repo / "capc-diff.md").read_text()
    assert "status.acme.example" in diff and "status.acme.example" in shell.summary.read_text()
    gate = next(s for s in job["steps"] if "capabilities-reviewed" in str(s.get("if", "")))
    unlabelled = shell(re.sub(r"\$\{\{\s*github\.base_ref\s*\}\}", "main", gate["run"]))
    assert unlabelled.returncode == 1  # without the label, a new host fails the job
    committed = yaml.safe_load(_fenced_after("### Repositories that commit", "yaml"))
    for step in committed:
        assert shell(step["run"]).returncode == 0, step["name"]

    # The signing job, verbatim, on another fresh runner: capc[sign,budget] is installed.
    keygen = shell("capc keygen -o ../capc-signing.pem")
    public_key, secret = keygen.stdout.strip(), (tmp_path / "capc-signing.pem").read_text()
    sign_job = yaml.safe_load(_fenced_after("<!-- docs-test: sign-job -->", "yaml"))["sign"]
    shell.venv = fresh_runner(tmp_path / "sign", runner)
    expressions = {"secrets.CAPC_SIGNING_KEY": secret, "vars.CAPC_PUBLIC_KEY": public_key}
    ran = run_steps(sign_job["steps"], shell, expressions, {"git+https://github.com/OWNER/"
                                                            "capc@v0.1.0": wheel_requirement})
    assert ran == ["Install capc for signing", "Compile and sign the manifest",
                   "The signature verifies with the published key"]
    assert "capc[sign,budget] @" in sign_job["steps"][2]["run"]
    manifest = json.loads((repo / "build" / "manifest.json").read_text())
    signature = json.loads((repo / "build" / "manifest.json.sig").read_text())
    assert signature["public_key"] == public_key
    entries = {entry["code"]: entry for entry in manifest["capabilities"]}
    assert set(entries) == {"get_weather", "inventory", "wiki", "base", "rag", "crm", "calc",
                            "status"}
    assert entries["wiki"]["mcp"]["unpinned"] == WIKI_REASON
    assert [t["name"] for t in entries["calc"]["mcp"]["pins"]["tools"]] == ["add", "echo"]
    assert entries["inventory"]["api"]["url"] == "https://10.20.9.9/api/items"
    assert sorted(manifest["plugins"]["(project registrations)"]["codes"]) == [
        "base", "crm", "rag"]
    # No secret of the table reached a file of the repository or any output.
    assert leaked(repo, *shell.outputs) == []
    assert leaked(tmp_path / "ci", *shell.outputs) == []


def _with_env(shell: Shell, **env: str) -> Shell:
    """``shell`` with a job's ``env:`` (for the steps of that job)."""
    class JobShell(Shell):
        def __call__(self, command: str, **more: str) -> subprocess.CompletedProcess[str]:
            return shell(command, **env, **more)

    return JobShell(shell.repo, shell.venv, shell.summary)
