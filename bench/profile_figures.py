"""Figures 12a-c (issue 24): profiles, token counting and resolve_profile, as ratios.

- 12a: counting 1,000 tools' definitions for OpenAI and Anthropic vs encoding the same
  definitions' JSON texts with the same tokenizer, ``len(encode(text))`` per text (goal
  <= 2x); also against toktok's count-only ``count_batch`` (stricter) and tiktoken. Once
  on varied generated definitions, once on GitHub's real API (bench/tool_definitions.py).
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
from typing import Any

from bench.corpus import DEFAULT_FILES, DEFAULT_SEED, Corpus, write_corpus
from bench.runtime_figures import compile_to_file
from bench.timing import Figure, format_table, median_pair, ratio_figure
from bench.tool_definitions import github_definitions, varied_definitions
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.profiles.tokens import (
    ENCODING_NAME,
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


def cpu_timed(action: Callable[[], object]) -> float:
    """CPU seconds of ``action``: on a shared machine, other processes' load would swamp
    the small differences these figures measure (everything here is single-threaded)."""
    start = time.process_time()
    action()
    return time.process_time() - start


def counting_figures(label: str, tools: list[Definition], runs: int) -> list[Figure]:
    """12a: both providers' counts of ``tools`` against the same tokenizer (toktok's
    o200k) given the definitions' compact JSON texts, two ways:

    - encoding each text, ``len(encoding.encode(text))`` as OpenAI's cookbook counts (the
      goal is judged against this: the issue's "encoding ... directly");
    - toktok's ``count_batch`` of all texts, a count-only Rust loop that never builds the
      token lists (the stricter floor, kept as a figure of its own).

    The measured side starts from the definitions as a manifest holds them and includes
    writing their JSON; each run counts afresh (nothing is remembered between runs).
    """
    count = o200k()
    encode = toktok_encoding().encode_ordinary  # no special-token scan: the stricter one
    texts = [compact_json(tool) for tool in tools]
    sides: dict[str, list[float]] = {"measured": [], "encode": [], "batch": []}
    for _ in range(runs):  # interleaved, so a neighbour's load slows every side alike
        gc.collect()
        sides["encode"].append(cpu_timed(lambda: [len(encode(text)) for text in texts]))
        sides["batch"].append(cpu_timed(lambda: count(texts)))
        sides["measured"].append(cpu_timed(
            lambda: (openai_tokens(tools, count), anthropic_tokens(tools, count))))
    measured, encoded, batch = (statistics.median(sides[key])
                                for key in ("measured", "encode", "batch"))
    # tiktoken (10x slower, and its memory traffic would disturb the runs above) after.
    tiktoken_encode = tiktoken_reference().encode_ordinary
    tiktoken_floor = statistics.median(
        cpu_timed(lambda: [tiktoken_encode(text) for text in texts]) for _ in range(runs))
    title = f"count {len(tools)} {label} definitions for 2 providers"
    suffix = "-" + label.split()[0] if label != "varied" else ""
    return [
        ratio_figure(f"12a{suffix}", f"{title} vs encoding their JSON (toktok encode)",
                     measured, encoded, goal_ratio=2.0,
                     reason="each provider's texts are tokenized (the recipe's and the "
                            "JSON: ~1.9x one count_batch) and the recipe's texts are built "
                            "in Python, ~0.35 us a property"),
        ratio_figure(f"12a{suffix}/batch", "the same vs toktok's count_batch of their "
                     "JSON (count only, stricter)", measured, batch, goal_ratio=None),
        ratio_figure(f"12a{suffix}/tiktoken", "the same vs tiktoken encoding their JSON "
                     "(same vocabulary)", measured, tiktoken_floor, goal_ratio=None),
    ]


def toktok_encoding() -> Any:
    """toktok's o200k encoding (its digest checked by :func:`o200k` first)."""
    import toktok

    o200k()
    return toktok._encoding(ENCODING_NAME)


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
    counted = counting_figures("varied", varied_definitions(COUNTED_TOOLS), runs)
    github = github_definitions(work, COUNTED_TOOLS)
    if github is not None:
        counted += counting_figures("github (real)", github, runs)
    else:
        print("12a-github skipped: the public corpus is missing (make test fetches it)",
              file=sys.stderr)
    return [*counted, resolve_profile_figure(manifest, runs), *compiled]


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
