"""SPEC §13 with §12: a long-running server watching a manifest compiled from YAML keeps
serving its last good version (profiles included) when a replacement is bad in any way
the one reader refuses, and takes the next good one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry
from compiler.runtime.fleet.watch import watch_manifest
from tests.support.runtime import seal
from tests.support.trees import CRM, WEATHER, compile_tree, write_tree

pytestmark = pytest.mark.independent

PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
"""
MORE = PROFILES + """\
---
apiVersion: capc/v1
kind: Profile
name: weather-bot
capabilities: [get_weather]
"""


def replace_atomically(target: Path, text: str) -> None:
    staged = target.with_name(target.name + ".new")
    staged.write_text(text)
    os.replace(staged, target)


async def test_bad_replacements_keep_the_last_good_profiles(tmp_path: Path) -> None:
    project = write_tree(tmp_path / "project", WEATHER, CRM, profiles=PROFILES)
    good = compile_tree(project)
    served = tmp_path / "served" / "manifest.json"
    served.parent.mkdir()
    served.write_bytes(good.read_bytes())
    document = json.loads(good.read_text())
    ctx = RuntimeContext(settings=StaticSettings({}))

    async with watch_manifest(served, registry=ToolRegistry(), interval=3600) as watcher:
        first = watcher.status.digest
        bad_versions = {
            "digest": json.dumps({**document, "profiles": []}),
            "structure": json.dumps(seal({**document, "profiles": [
                {**document["profiles"][0],
                 "capabilities": [*document["profiles"][0]["capabilities"], "ghost"]}]})),
            "json": good.read_text()[: len(good.read_text()) // 2],
        }
        for check, text in bad_versions.items():
            replace_atomically(served, text)
            assert await watcher.check_now() == "rejected", check
            status = watcher.status
            assert status.digest == first
            assert status.last_rejection is not None and status.last_rejection.check == check
            async with watcher.lease() as manifest:
                assert manifest.profiles == ["support-bot"]
                toolset = await manifest.resolve_profile("support-bot", ctx)
                assert {tool.name for tool in toolset.tools} == {
                    "get_weather", "crm_search", "crm_create"}
        assert watcher.status.reloads_rejected == len(bad_versions)

        (project / "capabilities" / "profiles.yaml").write_text(MORE)
        replace_atomically(served, compile_tree(project).read_text())
        assert await watcher.check_now() == "accepted"
        assert watcher.status.digest != first
        async with watcher.lease() as manifest:
            assert manifest.profiles == ["support-bot", "weather-bot"]
            toolset = await manifest.resolve_profile("weather-bot", ctx)
            assert [tool.name for tool in toolset.tools] == ["get_weather"]
