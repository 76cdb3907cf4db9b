"""Figures 12a-c (issue 24): profiles, token counting and resolve_profile, as ratios.

- 12a: counting 1,000 tools' definitions for OpenAI and Anthropic vs encoding the same
  definitions' JSON text once with the same tokenizer (goal <= 2x).
- 12b: ``resolve_profile`` vs ``resolve`` of the same 50 codes (goal <= 1.1x).
- 12c: compiling the N-file tree with 20 profiles (token budgets they meet comfortably)
  vs the same tree without profiles (goal <= 1.15x). 12d: the same with budgets so tight
  that every profile must be counted exactly, so the o200k encoding is loaded and its
  digest checked on every compile, as a fresh ``capc compile`` process does (no goal:
  it shows the fixed cost of the encoding).

Times are CPU seconds of this process (``time.process_time``), medians of interleaved runs.

    python -m bench.profile_figures [--files 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, Corpus, write_corpus
from bench.runtime_figures import compile_to_file
from bench.timing import Figure, format_table, median_pair, ratio_figure
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.profiles.tokens import (
    Definition,
    anthropic_tokens,
    compact_json,
    o200k,
    openai_tokens,
    tiktoken_reference,
)
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest

PROFILES = 20
PROFILE_CODES = 50
COUNTED_TOOLS = 1000


def definitions(count: int) -> list[Definition]:
    """``count`` realistic function definitions (descriptions, enums, nested objects)."""
    return [Definition(
        f"search_item_{index:04d}",
        f"Search the items of team {index} by text, state and labels. Results are sorted "
        "by relevance; at most 50 are returned per page.",
        {"type": "object", "properties": {
            "q": {"type": "string", "description": "Free text to search for."},
            "state": {"type": "string", "description": "Item state",
                      "enum": ["open", "closed", "archived"]},
            "labels": {"type": "array", "description": "Labels to filter by",
                       "items": {"type": "string"}},
            "filter": {"type": "object", "description": "Filter on the item's fields",
                       "properties": {"since": {"type": "string",
                                                "description": "ISO date-time"}}},
            "page": {"type": "integer", "description": "Page number, from 1"}},
         "required": ["q"]}) for index in range(count)]


def cpu_timed(action: Callable[[], object]) -> float:
    """CPU seconds of ``action``: on a shared machine, other processes' load would swamp
    the small differences these figures measure (everything here is single-threaded)."""
    start = time.process_time()
    action()
    return time.process_time() - start


def counting_figures(runs: int) -> list[Figure]:
    """12a: both providers' counts vs one direct encoding of the definitions' JSON by the
    same tokenizer (toktok); 12a': the same against tiktoken, the issue's reference."""
    tools = definitions(COUNTED_TOOLS)
    count = o200k()
    texts = [compact_json(tool) for tool in tools]

    def measured() -> float:
        return cpu_timed(lambda: (openai_tokens(tools, count), anthropic_tokens(tools, count)))

    def baseline() -> float:
        return cpu_timed(lambda: count(texts))

    seconds, floor = median_pair(measured, baseline, runs)
    tiktoken_encode = tiktoken_reference().encode_ordinary
    tiktoken_floor = statistics.median(
        cpu_timed(lambda: [tiktoken_encode(text) for text in texts]) for _ in range(runs))
    return [
        ratio_figure("12a", f"count {COUNTED_TOOLS} definitions for 2 providers vs "
                     "encoding their JSON once (toktok)", seconds, floor, goal_ratio=2.0,
                     reason="building the recipe's texts in Python costs more than toktok's "
                            "encoding, which is ~15x tiktoken's speed"),
        ratio_figure("12a'", "the same vs tiktoken encoding their JSON once (same "
                     "vocabulary)", seconds, tiktoken_floor, goal_ratio=2.0),
    ]


def profile_source(corpus: Corpus, profiles: int, tokens: int = 1_000_000) -> str:
    """``profiles`` profiles over the corpus's api codes, half of each deferred."""
    documents = []
    codes = list(corpus.api_codes)
    for number in range(profiles):
        chosen = codes[number::profiles][:PROFILE_CODES]
        documents.append("apiVersion: capc/v1\nkind: Profile\n"
                         f"name: team-{number:02d}\n"
                         f"capabilities: {json.dumps(chosen)}\n"
                         f"deferred: {json.dumps(chosen[::2])}\n"
                         f"budget: {{tokens: {tokens}, tools: 128}}\n")
    return "---\n".join(documents)


def _compile_seconds(root: Path, *, may_fail: bool = False) -> float:
    o200k.cache_clear()  # each compile loads and checks the encoding, as a new process does
    gc.collect()  # each run starts with an empty collector, not the last run's garbage
    options = CompileOptions()
    start = time.process_time()
    result = build([str(root)], options=options, cwd=root.parent, use_cache=False)
    elapsed = time.process_time() - start
    if result.manifest is None and not may_fail:
        raise RuntimeError(f"{root} does not compile: "
                           f"{[d for d in result.diagnostics if d.is_error][:3]}")
    return elapsed


def compile_figures(work: Path, files: int, seed: int, runs: int
                    ) -> tuple[list[Figure], Path]:
    """12c: the tree with 20 profiles vs without; 12d: the same with budgets so tight that
    every profile is counted exactly (and fails); returns the 12c tree's manifest."""
    plain = write_corpus(work / "plain" / "capabilities", files, seed)
    profiled_root = work / "profiled" / "capabilities"
    counted_root = work / "counted" / "capabilities"
    shutil.copytree(plain.root, profiled_root)
    shutil.copytree(plain.root, counted_root)
    (profiled_root / "profiles.yaml").write_text(profile_source(plain, PROFILES))
    (counted_root / "profiles.yaml").write_text(profile_source(plain, PROFILES, tokens=1))
    _compile_seconds(plain.root)  # imports: not part of either figure
    seconds, floor = median_pair(lambda: _compile_seconds(profiled_root),
                                 lambda: _compile_seconds(plain.root), runs)
    counted, counted_floor = median_pair(
        lambda: _compile_seconds(counted_root, may_fail=True),
        lambda: _compile_seconds(plain.root), runs)
    figures = [
        ratio_figure("12c", f"compile {files} files with {PROFILES} profiles vs without",
                     seconds, floor, goal_ratio=1.15,
                     reason="budgets near their limits load the o200k encoding"),
        ratio_figure("12d", "the same, every profile counted exactly (tight budgets) vs "
                     "without", counted, counted_floor, goal_ratio=None),
    ]
    return figures, compile_to_file(profiled_root, work / "profiled-manifest.json")


def resolve_profile_figure(manifest_path: Path, runs: int) -> Figure:
    """12b: ``resolve_profile`` vs ``resolve`` of its codes, each on a fresh manifest."""
    settings = StaticSettings({name: "token" for name in _placeholders(manifest_path)})

    async def once(profiled: bool) -> float:
        manifest = load_manifest(manifest_path, registry=ToolRegistry())
        ctx = RuntimeContext(user_id=1, group_id=1, chat_id=1, settings=settings)
        codes = manifest.data.profiles["team-00"].capabilities
        start = time.process_time()
        if profiled:
            await manifest.resolve_profile("team-00", ctx)
        else:
            await manifest.resolve(codes, ctx)
        elapsed = time.process_time() - start
        await manifest.aclose()
        return elapsed

    asyncio.run(once(False))  # LangChain and pydantic imports: boot, not resolve
    measured, baseline = [], []
    for _ in range(runs):
        baseline.append(asyncio.run(once(False)))
        measured.append(asyncio.run(once(True)))
    return ratio_figure("12b", f"resolve_profile vs resolve of the same {PROFILE_CODES} codes",
                        statistics.median(measured), statistics.median(baseline),
                        goal_ratio=1.1, reason="copying each tool for the profile's metadata")


def _placeholders(manifest_path: Path) -> set[str]:
    import re

    return set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", manifest_path.read_text("utf-8")))


def profile_figures(work: Path, files: int, seed: int, runs: int) -> list[Figure]:
    """Every figure of this module."""
    compiled, manifest = compile_figures(work, files, seed, runs)
    return [*counting_figures(runs), resolve_profile_figure(manifest, runs), *compiled]


def main(argv: list[str] | None = None) -> int:
    """Print figures 12a-c."""
    parser = argparse.ArgumentParser(prog="python -m bench.profile_figures")
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="capc-bench-profiles-") as temporary:
        figures = profile_figures(Path(temporary), arguments.files, arguments.seed,
                                  arguments.runs)
    print(format_table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
