"""Red team, compile side (issue 12): trust boundaries and output of the compiler.

Every case drives the real ``capc`` entry point (or ``build``) with what an attacker would
commit in a pull request and asserts the secure behaviour: a located error, a finding of
``capc diff --fail-on security``, an ignored cache entry, an escaped line. Items:
5 (cache), 6 (diff widenings), 7 (routing headers), 8 (final names), 9 (literal host
beside a placeholder), 16 (deep JSON), 18 (terminal output).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from compiler.build import build
from compiler.cache.store import (
    CompileCache,
    default_cache_dir,
    entry_selector,
    machine_key,
    user_cache_root,
)
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime.egress.headers import is_forbidden_request_header
from tests.support.redteam import api_capability, capc, write_tree

METADATA_URL = "http://169.254.169.254/latest/meta-data/"

# ---------------------------------------------------------------- 5. the cache is not input


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No CAPC_CACHE_DIR: the default location is used, in a private user cache root."""
    monkeypatch.delenv("CAPC_CACHE_DIR", raising=False)
    monkeypatch.delenv("CAPC_NO_CACHE", raising=False)
    user_cache = tmp_path / "home-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    return user_cache


def _metadata_tree(root: Path) -> Path:
    return write_tree(root, {"capabilities/a.yaml": api_capability(url=METADATA_URL)})


def _plant_entries(cache_dir: Path, source: Path) -> None:
    """What a PR author commits: entries from a compile of a *clean* tree, keyed as the
    victim's tree would be, replayed into the checkout (copied from their own machine)."""
    for entry in source.iterdir():
        (cache_dir / entry.name).write_bytes(entry.read_bytes())


def test_the_default_cache_lives_outside_the_checkout(tmp_path: Path, isolated_cache: Path
                                                      ) -> None:
    tree = _metadata_tree(tmp_path / "repo")
    assert default_cache_dir() == isolated_cache / "capc"
    run = capc(tree, "validate")
    assert run.code == 1 and "url-forbidden-address" in run.stderr
    assert not (tree / ".capc-cache").exists()
    key = user_cache_root() / "capc.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not str(key.resolve()).startswith(str(tree.resolve()))


@pytest.mark.parametrize("where", ["committed-default", "explicit-inside", "env-inside"])
def test_a_committed_cache_cannot_silence_validate(tmp_path: Path, isolated_cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   where: str) -> None:
    # The attacker compiles a harmless tree with the same paths on *their* machine...
    attacker = write_tree(tmp_path / "attacker", {
        "capabilities/a.yaml": api_capability(url="https://api.example.com/v1")})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "attacker-home"))
    capc(attacker, "validate", "--cache-dir", str(attacker / ".capc-cache"))
    # ... and commits the entries (with their key too) next to a metadata URL.
    tree = _metadata_tree(tmp_path / "repo")
    planted = tree / ".capc-cache"
    planted.mkdir()
    _plant_entries(planted, attacker / ".capc-cache")
    (tree / "capc.key").write_bytes((tmp_path / "attacker-home" / "capc.key").read_bytes())
    monkeypatch.setenv("XDG_CACHE_HOME", str(isolated_cache))
    arguments = ["validate"]
    if where == "explicit-inside":
        arguments += ["--cache-dir", ".capc-cache"]
    if where == "env-inside":
        monkeypatch.setenv("CAPC_CACHE_DIR", str(planted))
    run = capc(tree, *arguments)
    assert run.code == 1
    assert "url-forbidden-address" in run.stderr


def test_a_forged_entry_with_a_valid_layout_is_a_miss(tmp_path: Path, isolated_cache: Path
                                                      ) -> None:
    tree = _metadata_tree(tmp_path / "repo")
    cache_dir = tree / ".capc-cache"
    first = capc(tree, "validate", "--cache-dir", ".capc-cache")
    assert first.code == 1
    store = CompileCache.for_tree(cache_dir, ["capabilities"], CompileOptions(), tree)
    forged_key = os.urandom(32)
    forger = CompileCache(store.directory, store.tree_identity, forged_key)
    for entry in cache_dir.glob("*.tree"):
        sealed = entry.read_bytes()
        selector = entry_selector(sealed)
        assert selector is not None
        parts = store.unseal("tree", sealed, selector)
        assert parts is not None  # the genuine entry verifies under the machine key
        head, tail = (bytes(part) for part in parts)
        assert b"url-forbidden-address" in head
        entry.write_bytes(forger.seal("tree", head.replace(b"url-forbidden-address",
                                                           b"url-forbidden-addresz"),
                                      tail, selector))
    again = capc(tree, "validate", "--cache-dir", ".capc-cache")
    assert again.code == 1 and "error[url-forbidden-address]" in again.stderr


@pytest.mark.parametrize("kind", ["symlink-to-zero", "fifo", "symlink-to-entry", "directory"])
def test_non_regular_cache_entries_are_ignored(tmp_path: Path, isolated_cache: Path,
                                               kind: str) -> None:
    tree = _metadata_tree(tmp_path / "repo")
    cache_dir = tmp_path / "cache"
    capc(tree, "validate", "--cache-dir", str(cache_dir))
    for entry in [*cache_dir.glob("*.tree"), *cache_dir.glob("*.files")]:
        saved = entry.read_bytes()
        entry.unlink()
        if kind == "symlink-to-zero":
            entry.symlink_to("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(entry)
        elif kind == "directory":
            entry.mkdir()
        else:
            genuine = tmp_path / f"genuine-{entry.name}"
            genuine.write_bytes(saved)
            entry.symlink_to(genuine)
    run = capc(tree, "validate", "--cache-dir", str(cache_dir))
    assert run.code == 1 and "url-forbidden-address" in run.stderr


@pytest.mark.parametrize("damage", ["world-readable", "symlink", "short"])
def test_a_weak_machine_key_is_replaced(tmp_path: Path, isolated_cache: Path,
                                        damage: str) -> None:
    key_path = user_cache_root() / "capc.key"
    checkout = tmp_path / "repo"
    checkout.mkdir()
    original = machine_key(checkout)
    assert key_path.read_bytes() == original
    if damage == "world-readable":
        key_path.chmod(0o644)
    elif damage == "symlink":
        planted = tmp_path / "planted.key"
        planted.write_bytes(b"k" * 32)
        planted.chmod(0o600)
        key_path.unlink()
        key_path.symlink_to(planted)
    else:
        key_path.write_bytes(b"short")
    replaced = machine_key(checkout)
    assert replaced not in (original, b"k" * 32, b"short")
    assert stat.S_IMODE(os.lstat(key_path).st_mode) == 0o600 and not key_path.is_symlink()


def test_a_key_location_inside_the_checkout_is_never_trusted(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    tree = tmp_path / "repo"
    (tree / ".cache").mkdir(parents=True)
    planted = tree / ".cache" / "capc.key"
    planted.write_bytes(b"k" * 32)
    planted.chmod(0o600)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tree / ".cache"))
    assert machine_key(tree) != b"k" * 32


# ----------------------------------------------------------- 6. capc diff --fail-on security

WIKI = """\
apiVersion: capc/v1
kind: Capability
code: wiki
name: Wiki
type: mcp
options:
  server_label: wiki
  server_url: https://mcp.example.com/mcp
{options}"""
INTERNAL = """\
apiVersion: capc/v1
kind: Capability
code: base
name: Base
type: internal
{extra}"""


def _manifest(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    tree = write_tree(tmp_path / name, {f"capabilities/{k}": v for k, v in files.items()})
    run = capc(tree, "compile", "-o", "manifest.json")
    assert run.code == 0, run.stderr
    return tree / "manifest.json"


def _fails_on_security(tmp_path: Path, old: dict[str, str], new: dict[str, str]) -> str:
    before, after = _manifest(tmp_path, "old", old), _manifest(tmp_path, "new", new)
    run = capc(tmp_path, "diff", str(before), str(after), "--fail-on", "security")
    assert run.code == 1, run.stdout
    assert "security-relevant changes, most serious first:" in run.stdout
    return run.stdout


def _passes(tmp_path: Path, old: dict[str, str], new: dict[str, str]) -> None:
    before, after = _manifest(tmp_path, "old", old), _manifest(tmp_path, "new", new)
    run = capc(tmp_path, "diff", str(before), str(after), "--fail-on", "security")
    assert run.code == 0, run.stdout


ALLOWED_TOOLS_WIDENINGS = {
    "filter-gains-tools": ("  allowed_tools: {tool_names: [ask]}\n",
                           "  allowed_tools: {tool_names: [ask, delete]}\n"),
    "list-to-read-only-filter": ("  allowed_tools: [ask]\n",
                                 "  allowed_tools: {read_only: true}\n"),
    "list-to-absent": ("  allowed_tools: [ask]\n", ""),
    "filter-to-absent": ("  allowed_tools: {tool_names: [ask]}\n", ""),
    "list-to-wider-filter": ("  allowed_tools: [ask]\n",
                             "  allowed_tools: {tool_names: [ask, delete]}\n"),
    "read-only-true-to-false": ("  allowed_tools: {read_only: true}\n",
                                "  allowed_tools: {read_only: false}\n"),
    "read-only-dropped": ("  allowed_tools: {tool_names: [ask], read_only: true}\n",
                          "  allowed_tools: {tool_names: [ask]}\n"),
    "names-dropped-from-filter": ("  allowed_tools: {tool_names: [ask], read_only: true}\n",
                                  "  allowed_tools: {read_only: true}\n"),
}


@pytest.mark.parametrize(("old", "new"), ALLOWED_TOOLS_WIDENINGS.values(),
                         ids=ALLOWED_TOOLS_WIDENINGS.keys())
def test_allowed_tools_widenings_fail_the_diff(tmp_path: Path, old: str, new: str) -> None:
    text = _fails_on_security(tmp_path, {"wiki.yaml": WIKI.format(options=old)},
                              {"wiki.yaml": WIKI.format(options=new)})
    assert re.search(r"allowed-tools-widened|allow-list-removed", text)


@pytest.mark.parametrize(("old", "new"), [
    ("  allowed_tools: [ask, delete]\n", "  allowed_tools: [ask]\n"),
    ("  allowed_tools: [ask]\n", "  allowed_tools: {tool_names: [ask]}\n"),
    ("", "  allowed_tools: {read_only: true}\n"),
], ids=["fewer-names", "same-names-as-filter", "filter-added"])
def test_allowed_tools_narrowings_pass(tmp_path: Path, old: str, new: str) -> None:
    _passes(tmp_path, {"wiki.yaml": WIKI.format(options=old)},
            {"wiki.yaml": WIKI.format(options=new)})


APPROVAL_RELAXATIONS = {
    "never-names-to-never-read-only": ("{never: {tool_names: [ask]}}",
                                       "{never: {read_only: true}}"),
    "always-to-never": ("always", "never"),
    "absent-to-never": (None, "never"),
    "always-to-filter": ("always", "{never: {tool_names: [ask]}}"),
    "never-gains-tools": ("{never: {tool_names: [ask]}}", "{never: {tool_names: [ask, delete]}}"),
    "always-loses-tools": ("{always: {tool_names: [ask, delete]}}",
                           "{always: {tool_names: [ask]}}"),
    "filter-to-never": ("{always: {tool_names: [ask]}}", "never"),
    "always-filter-dropped": ("{always: {tool_names: [ask]}, never: {tool_names: [x]}}",
                              "{never: {tool_names: [x]}}"),
}


def _approval(value: str | None) -> str:
    return "" if value is None else f"  require_approval: {value}\n"


@pytest.mark.parametrize(("old", "new"), APPROVAL_RELAXATIONS.values(),
                         ids=APPROVAL_RELAXATIONS.keys())
def test_every_approval_relaxation_fails_the_diff(tmp_path: Path, old: str | None,
                                                  new: str) -> None:
    text = _fails_on_security(tmp_path, {"wiki.yaml": WIKI.format(options=_approval(old))},
                              {"wiki.yaml": WIKI.format(options=_approval(new))})
    assert "approval-relaxed" in text


@pytest.mark.parametrize(("old", "new"), [
    ("never", "always"),
    ("{never: {tool_names: [ask, delete]}}", "{never: {tool_names: [ask]}}"),
    ("{never: {tool_names: [ask]}}", "always"),
], ids=["never-to-always", "fewer-exempt", "filter-to-always"])
def test_approval_tightenings_pass(tmp_path: Path, old: str, new: str) -> None:
    _passes(tmp_path, {"wiki.yaml": WIKI.format(options=_approval(old))},
            {"wiki.yaml": WIKI.format(options=_approval(new))})


CONDITION_LOOSENINGS = {
    "removed": ("when: {page_type: canvas}\n", ""),
    "in-widened": ("when: {page_type: canvas}\n", "when: {page_type: {in: [canvas, chat]}}\n"),
    "conjunct-dropped": ("when: {page_type: canvas, group_id: 5}\n", "when: {page_type: canvas}\n"),
    "any-added": ("when: {page_type: canvas}\n",
                  "when: {any: [{page_type: canvas}, {group_id: 5}]}\n"),
    "value-changed": ("when: {page_type: canvas}\n", "when: {page_type: chat}\n"),
    "not-changed": ("when: {not: {page_type: canvas}}\n", "when: {not: {page_type: chat}}\n"),
    "all-member-dropped": ("when: {all: [{page_type: canvas}, {group_id: 5}]}\n",
                           "when: {all: [{page_type: canvas}]}\n"),
}


@pytest.mark.parametrize(("old", "new"), CONDITION_LOOSENINGS.values(),
                         ids=CONDITION_LOOSENINGS.keys())
def test_a_loosened_condition_fails_the_diff(tmp_path: Path, old: str, new: str) -> None:
    text = _fails_on_security(tmp_path, {"base.yaml": INTERNAL.format(extra=old)},
                              {"base.yaml": INTERNAL.format(extra=new)})
    assert "condition-loosened" in text


@pytest.mark.parametrize(("old", "new"), [
    ("", "when: {page_type: canvas}\n"),
    ("when: {page_type: {in: [canvas, chat]}}\n", "when: {page_type: canvas}\n"),
    ("when: {page_type: canvas}\n", "when: {page_type: canvas, group_id: 5}\n"),
], ids=["added", "in-narrowed", "conjunct-added"])
def test_a_narrowed_condition_passes(tmp_path: Path, old: str, new: str) -> None:
    _passes(tmp_path, {"base.yaml": INTERNAL.format(extra=old)},
            {"base.yaml": INTERNAL.format(extra=new)})


SETTING_SPELLINGS = {
    "url-path": ("url: \"https://api.example.com/v1\"", "url: \"https://api.example.com/${TENANT}\""),
    "url-query": ("url: \"https://api.example.com/v1\"",
                  "url: \"https://api.example.com/v1?t=${TENANT}\""),
    "header-value": ("headers: {X-A: a}", "headers: {X-A: \"${TENANT}\"}"),
    "body-template-value": ("body_template: {a: b}", "body_template: {a: \"${TENANT}\"}"),
    "body-template-key": ("body_template: {a: b}", "body_template: {\"${TENANT}\": b}"),
    "body-template-string": ("body_template: \"a\"", "body_template: \"a ${TENANT}\""),
    "moved-to-url": ("headers: {Authorization: \"Bearer ${TENANT}\"}",
                     "headers: {Authorization: \"Bearer ${TENANT}\", X-Copy: \"${TENANT}\"}"),
}


@pytest.mark.parametrize(("old", "new"), SETTING_SPELLINGS.values(), ids=SETTING_SPELLINGS.keys())
def test_a_new_setting_anywhere_fails_the_diff(tmp_path: Path, old: str, new: str) -> None:
    def capability(line: str) -> str:
        text = api_capability(extra="  method: POST\n  headers: {Content-Type: text/plain}\n")
        if line.startswith("url:"):
            return text.replace('url: "https://api.example.com/v1"', line)
        if line.startswith("headers:"):
            return text.replace("  headers: {Content-Type: text/plain}\n", f"  {line}\n")
        return text + f"  {line}\n"

    text = _fails_on_security(tmp_path, {"a.yaml": capability(old)}, {"a.yaml": capability(new)})
    assert "new-placeholder" in text and "${TENANT}" in text


@pytest.mark.parametrize(("old", "new"), [
    ("  headers: {X-A: a}\n", "  headers: {X-A: \"${TENANT}\"}\n"),
    ("", "  headers: {X-A: \"${TENANT}\"}\n"),
    ("  server_url: x\n", "  server_url: x\n"),
], ids=["mcp-header", "mcp-header-added", "unchanged"])
def test_mcp_settings_are_settings_too(tmp_path: Path, old: str, new: str) -> None:
    if old == new:
        _passes(tmp_path, {"wiki.yaml": WIKI.format(options="")},
                {"wiki.yaml": WIKI.format(options="")})
        return
    text = _fails_on_security(tmp_path, {"wiki.yaml": WIKI.format(options=old)},
                              {"wiki.yaml": WIKI.format(options=new)})
    assert "new-placeholder" in text


def test_internal_capability_gaining_registry_codes_fails_the_diff(tmp_path: Path) -> None:
    text = _fails_on_security(
        tmp_path, {"base.yaml": INTERNAL.format(extra="options: {codes: [base]}\n")},
        {"base.yaml": INTERNAL.format(extra="options: {codes: [base, admin]}\n")})
    assert "internal-codes-widened" in text


# --------------------------------------------------------------- 7. routing and framing headers

HEADER_SPELLINGS = ["Host", "host", "HOST", "Content-Length", "Transfer-Encoding", "Connection",
                    "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Upgrade",
                    "Proxy-Authenticate", "X-Forwarded-Host", "Forwarded", "Expect",
                    "X-HTTP-Method-Override", "Proxy-Anything"]


@pytest.mark.parametrize("header", HEADER_SPELLINGS)
@pytest.mark.parametrize("kind", ["api", "mcp"])
def test_routing_headers_are_located_errors(tmp_path: Path, header: str, kind: str) -> None:
    if kind == "api":
        text = api_capability(extra=f"  headers:\n    {header}: internal.example\n")
    else:
        text = WIKI.format(options=f"  headers:\n    {header}: internal.example\n")
    tree = write_tree(tmp_path, {"capabilities/a.yaml": text})
    run = capc(tree, "validate")
    assert run.code == 1
    line = 11 if kind == "api" else 10
    assert re.search(rf"capabilities/a.yaml:{line}:5: error\[header-forbidden\]: header "
                     rf"'{header}'", run.stderr), run.stderr
    assert is_forbidden_request_header(header)


def test_a_setting_valued_host_header_is_refused_too(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": api_capability(
        extra="  headers:\n    Host: \"${VHOST}\"\n")})
    run = capc(tree, "validate")
    assert run.code == 1 and "error[header-forbidden]" in run.stderr


# ------------------------------------------------------------ 8. final names after overrides

OVERRIDE = """\
apiVersion: capc/v1
kind: ToolOverride
tool: {tool}
namespace: {namespace}
"""


def test_a_relabel_onto_another_api_tool_is_an_error_at_the_override(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {
        "capabilities/one.yaml": api_capability("one"),
        "capabilities/trusted.yaml": api_capability("trusted", name="x__one"),
        "capabilities/z.yaml": OVERRIDE.format(tool="one", namespace="x"),
    })
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(r"capabilities/z.yaml:4:12: error\[duplicate-final-tool-name\]: .*'x__one'",
                     run.stderr), run.stderr


def test_two_relabels_onto_one_name_are_both_reported(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {
        "capabilities/a.yaml": api_capability("a_one", name="a__one"),
        "capabilities/b.yaml": api_capability("b_one", name="b__one"),
        "capabilities/z.yaml": OVERRIDE.format(tool="a__one", namespace="x") + "---\n"
        + OVERRIDE.format(tool="b__one", namespace="x"),
    })
    run = capc(tree, "validate")
    assert run.code == 1
    assert run.stderr.count("error[duplicate-final-tool-name]") == 2


@pytest.mark.parametrize("relabelled", ["api", "plugin"])
def test_a_relabel_onto_a_plugin_tool_is_an_error(tmp_path: Path, in_dir: object,
                                                  relabelled: str) -> None:
    files = {"capabilities/a.yaml": api_capability("remember", name="remember")}
    if relabelled == "api":
        files["capabilities/z.yaml"] = OVERRIDE.format(tool="remember", namespace="memory")
    else:
        files["capabilities/z.yaml"] = OVERRIDE.format(tool="crm__remember", namespace="")
    write_tree(tmp_path, files)
    options = CompileOptions(plugin_tools=frozenset({"memory__remember", "crm__remember"}))
    os.chdir(tmp_path)
    if relabelled == "plugin":
        # An empty namespace is a schema error; relabel crm's tool onto memory's instead.
        (tmp_path / "capabilities/z.yaml").write_text(
            OVERRIDE.format(tool="crm__remember", namespace="memory"))
        (tmp_path / "capabilities/a.yaml").write_text(api_capability("other"))
    result = build(["capabilities"], options=options, use_cache=False)
    assert result.manifest is None
    [problem] = [d for d in result.diagnostics if d.code == "duplicate-final-tool-name"]
    assert (problem.path, problem.line) == ("capabilities/z.yaml", 4)


def test_distinct_final_names_still_compile(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {
        "capabilities/one.yaml": api_capability("one"),
        "capabilities/z.yaml": OVERRIDE.format(tool="one", namespace="x"),
    })
    assert capc(tree, "validate").code == 0


# ------------------------------------------------- 9. a literal host beside a placeholder

LITERAL_HOSTS = {
    "metadata-then-setting": ("http://169.254.169.254${S}/x", "url-forbidden-address"),
    "private-then-port-setting": ("http://10.0.0.1${PORT}/", "url-private-address"),
    "ipv6-metadata-then-setting": ("http://[fd00:ec2::254]${X}", "url-forbidden-address"),
    "ipv6-metadata-then-setting-path": ("http://[fd00:ec2::254]${X}/a", "url-forbidden-address"),
    "setting-then-metadata": ("http://${S}169.254.169.254/x", "url-forbidden-address"),
    "loopback-then-setting": ("http://127.0.0.1${S}/", "url-private-address"),
    "decimal-metadata-then-setting": ("http://2852039166${S}/", "url-forbidden-address"),
    "metadata-name-after-setting": ("http://${S}metadata.google.internal/",
                                    "url-forbidden-address"),
    "metadata-dot-setting": ("http://169.254.169.254.${S}/", "url-forbidden-address"),
}


@pytest.mark.parametrize(("url", "code"), LITERAL_HOSTS.values(), ids=LITERAL_HOSTS.keys())
def test_a_literal_address_next_to_a_placeholder_is_judged(tmp_path: Path, url: str,
                                                           code: str) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": api_capability(url=url)})
    run = capc(tree, "validate")
    assert run.code == 1
    assert re.search(rf"capabilities/a.yaml:9:8: error\[{code}\]", run.stderr), run.stderr


def test_a_public_name_around_a_placeholder_still_compiles(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": api_capability(
        url="https://api${REGION}.example.com/v1")})
    assert capc(tree, "validate").code == 0


def test_metadata_beside_a_placeholder_stays_an_error_with_allow_private(tmp_path: Path) -> None:
    tree = write_tree(tmp_path, {"capabilities/a.yaml": api_capability(
        url="http://169.254.169.254${S}/x")})
    run = capc(tree, "validate", "--allow-private-networks")
    assert run.code == 1 and "url-forbidden-address" in run.stderr


# ----------------------------------------------------------------- 16. deeply nested JSON

DEPTHS = {"array": "[" * 100_000 + "]" * 100_000,
          "object": '{"a":' * 100_000 + "1" + "}" * 100_000,
          "inside-capabilities": '{"capabilities":' + "[" * 100_000 + "]" * 100_000 + "}"}


@pytest.mark.parametrize("shape", DEPTHS)
@pytest.mark.parametrize("command", ["explain", "docs", "diff-old", "diff-new"])
def test_deep_json_is_a_clean_refusal(tmp_path: Path, shape: str, command: str) -> None:
    # A manifest refused by a check exits 1 from every command, as `capc verify` does.
    deep = tmp_path / "deep.json"
    deep.write_text(DEPTHS[shape])
    good = _manifest(tmp_path, "good", {"a.yaml": api_capability()})
    arguments = {"explain": ["explain", "tool_a", "-m", str(deep)],
                 "docs": ["docs", "-m", str(deep)],
                 "diff-old": ["diff", str(deep), str(good)],
                 "diff-new": ["diff", str(good), str(deep)]}[command]
    run = capc(tmp_path, *arguments)
    assert run.code == 1
    assert "nested too deeply" in run.stderr
    assert "RecursionError" not in run.output


def test_a_valid_manifest_nested_just_parseably_deep_is_clean(tmp_path: Path) -> None:
    manifest = json.loads(_manifest(tmp_path, "good", {"a.yaml": api_capability()}).read_text())
    nested: object = "x"
    for _ in range(900):
        nested = [nested]
    manifest["capabilities"][0]["metadata"] = {"deep": nested}
    manifest.pop("digest", None)
    path = tmp_path / "deep-valid.json"
    try:
        path.write_bytes(dump_manifest(manifest))
    except RecursionError:
        pytest.skip("the manifest writer cannot hold this depth")
    for arguments in (["docs", "-m", str(path)], ["explain", "tool_a", "-m", str(path)],
                      ["diff", str(path), str(path)]):
        run = capc(tmp_path, *arguments)
        assert run.code in (0, 1, 2)


@pytest.mark.parametrize("kind", ["fifo", "directory", "dev-zero"])
def test_a_manifest_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "manifest.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    run = capc(tmp_path, "docs", "-m", str(path))
    assert run.code == 2 and "capc:" in run.stderr


# ------------------------------------------------------------------ 18. terminal output

HOSTILE_TEXT = {
    "newline-forged-diagnostic": "x\nsrc/b.yaml:1:1: error[forged]: fake",
    "workflow-command": "x\n::add-mask::secret",
    "escape-sequence": "x\x1b[2J\x1b[31mred",
    "bell": "x\x07",
    "carriage-return": "x\rcapc: all good",
    "c1-csi": "x\u009b31m",
    "bidi-override": "x\u202eevil",
    "line-separator": "x\u2028y",
    "nul": "x\x00y",
}
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _assert_safe_lines(text: str, forged: str = "error[forged]") -> None:
    assert not _UNSAFE.search(text), repr(text)
    for line in text.splitlines():
        assert not line.startswith(("::add-mask", "src/b.yaml:1:1")), repr(line)
        assert not line.lstrip().startswith("::add-mask"), repr(line)


@pytest.mark.parametrize("name", HOSTILE_TEXT)
@pytest.mark.parametrize("output_format", ["text", "github"])
def test_hostile_file_names_cannot_forge_diagnostics(tmp_path: Path, name: str,
                                                     output_format: str) -> None:
    bad_name = HOSTILE_TEXT[name].replace("/", "_").replace("\x00", "0") + ".yaml"
    tree = write_tree(tmp_path, {f"capabilities/{bad_name}": api_capability(url=METADATA_URL)})
    run = capc(tree, "validate", "--format", output_format)
    assert run.code == 1
    shown = run.stderr if output_format == "text" else run.stdout
    _assert_safe_lines(shown)
    lines = [line for line in shown.splitlines() if line]
    if output_format == "text":
        assert len(lines) == 2  # one diagnostic and the summary
    else:
        assert len(lines) == 1 and lines[0].startswith("::error file=capabilities/")


@pytest.mark.parametrize("name", ["newline-forged-diagnostic", "workflow-command",
                                  "carriage-return"])
def test_hostile_yaml_strings_cannot_forge_diagnostics(tmp_path: Path, name: str) -> None:
    text = json.dumps(HOSTILE_TEXT[name])
    tree = write_tree(tmp_path, {"capabilities/a.yaml": api_capability(
        url="https://api.example.com/v1", extra=f"  method: {text}\n")})
    for output_format in ("text", "github"):
        run = capc(tree, "validate", "--format", output_format)
        assert run.code == 1
        _assert_safe_lines(run.stderr if output_format == "text" else run.stdout)


def _hostile_manifest(tmp_path: Path, text: str) -> Path:
    description = json.dumps(text)
    return _manifest(tmp_path, "hostile", {
        "a.yaml": api_capability().replace("name: tool_a\n", f"name: {description}\n", 1)
        .replace("description: d", f"description: {description}"),
        "wiki.yaml": WIKI.format(options="").replace("name: Wiki", f"name: {description}"),
    })


@pytest.mark.parametrize("name", HOSTILE_TEXT)
def test_review_commands_escape_manifest_strings(tmp_path: Path, name: str) -> None:
    if name == "nul":
        pytest.skip("a NUL in YAML is refused at load (see test_redteam_sources)")
    hostile = _hostile_manifest(tmp_path, HOSTILE_TEXT[name])
    plain = _manifest(tmp_path, "plain", {"a.yaml": api_capability()})
    for arguments in (["explain", "tool_a", "-m", str(hostile)], ["docs", "-m", str(hostile)],
                      ["diff", str(plain), str(hostile)],
                      ["diff", str(plain), str(hostile), "--format", "markdown"]):
        run = capc(tmp_path, *arguments)
        assert run.code in (0, 1), run.output
        _assert_safe_lines(run.stdout)


def test_one_escaping_function_serves_every_output() -> None:
    from compiler.report import escape, github, text
    from compiler.review import diff_report, docs, explain

    for module in (github, text, diff_report, docs, explain):
        assert module.escape_control is escape.escape_control
