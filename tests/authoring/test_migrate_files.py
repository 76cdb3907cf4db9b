"""``capc migrate``: golden rewrites that keep comments, idempotence, dry runs, refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from compiler.authoring.migrate import migrate_text
from compiler.build import build
from compiler.review.diff import diff_manifests
from compiler.schema.legacy import is_legacy_row, upgrade_legacy_row
from tests.support.capc import run_capc, run_capc_process
from tests.support.paths import REPO_ROOT

GOLDEN = Path(__file__).parent / "golden" / "migrate"
REPO = REPO_ROOT
INPUTS = sorted(p.name for p in GOLDEN.glob("*.yaml") if not p.name.endswith(".migrated.yaml"))


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as stream:
        return stream.read()


@pytest.mark.parametrize("name", INPUTS)
def test_migrate_matches_golden(name: str) -> None:
    original = _read(GOLDEN / name)
    expected = _read(GOLDEN / name.replace(".yaml", ".migrated.yaml"))
    result = migrate_text(name, original)
    assert result.diagnostics == ()
    assert result.text == expected


@pytest.mark.parametrize("name", INPUTS)
def test_migrate_keeps_every_comment_and_is_idempotent(name: str) -> None:
    original = _read(GOLDEN / name)
    migrated = migrate_text(name, original).text
    comments = [line.split("#", 1)[1] for line in original.splitlines() if "#" in line]
    for comment in comments:
        assert comment in migrated
    again = migrate_text(name, migrated)
    assert again.text == migrated
    assert again.migrated_documents == 0


@pytest.mark.parametrize("name", INPUTS)
def test_migrated_text_means_what_the_in_memory_upgrade_means(name: str) -> None:
    original = list(yaml.safe_load_all(_read(GOLDEN / name)))
    migrated = list(yaml.safe_load_all(_read(GOLDEN / name.replace(".yaml", ".migrated.yaml"))))
    expected = [upgrade_legacy_row(d) if is_legacy_row(d) else d for d in original]
    assert migrated == expected


def test_migrated_tree_compiles_to_the_same_manifest(tmp_path: Path, in_dir) -> None:
    for tree in ("legacy", "migrated"):
        (tmp_path / tree).mkdir()
    shutil.copy(GOLDEN / "rows.yaml", tmp_path / "legacy" / "rows.yaml")
    shutil.copy(GOLDEN / "rows.migrated.yaml", tmp_path / "migrated" / "rows.yaml")
    in_dir(tmp_path)
    legacy, migrated = build(["legacy"]), build(["migrated"])
    assert legacy.manifest is not None and migrated.manifest is not None
    assert [d.code for d in legacy.diagnostics].count("legacy-row") == 3
    assert "legacy-row" not in [d.code for d in migrated.diagnostics]
    assert not diff_manifests(legacy.manifest, migrated.manifest).has_changes


def test_dry_run_prints_a_diff_and_changes_nothing(tmp_path: Path, in_dir) -> None:
    target = tmp_path / "capabilities" / "rows.yaml"
    target.parent.mkdir()
    shutil.copy(GOLDEN / "rows.yaml", target)
    before = target.read_bytes()
    in_dir(tmp_path)
    result = run_capc("migrate", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == before
    assert "--- a/capabilities/rows.yaml" in result.stdout
    assert "+apiVersion: capc/v1" in result.stdout
    assert "-code: \"base,rag\"" in result.stdout
    assert "would migrate 3 document(s) in 1 file(s)" in result.stderr


def test_migrate_rewrites_in_place_then_has_nothing_left_to_do(tmp_path: Path, in_dir) -> None:
    target = tmp_path / "capabilities" / "nested" / "rows.yaml"
    target.parent.mkdir(parents=True)
    shutil.copy(GOLDEN / "rows.yaml", target)
    untouched = tmp_path / "capabilities" / "template.yaml.j2"
    untouched.write_text("name: {{ n }}\ncode: x\ntype: internal\n")
    in_dir(tmp_path)
    first = run_capc("migrate", "capabilities", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert target.read_text() == _read(GOLDEN / "rows.migrated.yaml")
    assert untouched.read_text() == "name: {{ n }}\ncode: x\ntype: internal\n"
    second = run_capc("migrate", "capabilities", cwd=tmp_path)
    assert "migrated 0 document(s) in 0 file(s)" in second.stderr


@pytest.mark.parametrize(
    ("text", "location"),
    [
        ("# fine\n---\n{name: X,  # a comment\n code: x, type: internal}\n", "3:1"),
        ("# indented\n  name: X\n  code: x\n  type: internal\n", "2:3"),
    ],
)
def test_rows_that_cannot_be_rewritten_safely_are_refused_with_a_location(
    tmp_path: Path, in_dir, text: str, location: str
) -> None:
    target = tmp_path / "rows.yaml"
    target.write_text(text)
    in_dir(tmp_path)
    result = run_capc("migrate", "rows.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert f"rows.yaml:{location}: error[migrate-layout]" in result.stderr
    assert target.read_text() == text


def test_bad_json_options_point_at_the_options_key(tmp_path: Path, in_dir) -> None:
    target = tmp_path / "bad.yaml"
    text = "name: X\ncode: x\ntype: mcp\noptions: '{\"server_label\": '\n"
    target.write_text(text)
    in_dir(tmp_path)
    result = run_capc("migrate", "bad.yaml", cwd=tmp_path)
    assert result.returncode == 1
    expected = "bad.yaml:4:1: error[legacy-row]: options is a string but not valid JSON"
    assert expected in result.stderr
    assert target.read_text() == text


def test_a_missing_source_is_a_usage_error(tmp_path: Path, in_dir) -> None:
    in_dir(tmp_path)
    assert run_capc("migrate", "nowhere", cwd=tmp_path).returncode == 2


def test_a_duplicate_key_is_reported_at_the_duplicate(tmp_path: Path, in_dir) -> None:
    text = "# rows\nname: X\ncode: x\ncode: y\ntype: internal\n"
    (tmp_path / "dup.yaml").write_text(text)
    in_dir(tmp_path)
    result = run_capc("migrate", "dup.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert "dup.yaml:4:1: error[migrate-layout]: duplicate key 'code'" in result.stderr
    assert (tmp_path / "dup.yaml").read_text() == text


def test_a_legacy_row_in_a_template_is_a_warning(tmp_path: Path, in_dir) -> None:
    folder = tmp_path / "capabilities"
    folder.mkdir()
    (folder / "rows.yaml.j2").write_text(
        "apiVersion: capc/v1\nkind: Capability\nname: A\ncode: a\ntype: internal\n---\n"
        "# {{ comment }}\nname: {{ n }}\ncode: b\ntype: internal\n"
    )
    (folder / "modern.yaml.j2").write_text(
        "apiVersion: capc/v1\nkind: Capability\nname: {{ n }}\ncode: c\ntype: internal\n"
    )
    in_dir(tmp_path)
    result = run_capc("migrate", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "migrated 0 document(s) in 0 file(s)" in result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning[" in line]
    assert warnings == [
        "capabilities/rows.yaml.j2:8:1: warning[migrate-template]: legacy row in a template: "
        "capc migrate does not rewrite templates; migrate it by hand (add apiVersion: capc/v1 "
        "and kind: Capability)"
    ]


def _limit_file_size() -> None:
    import resource
    import signal

    # Writing past the limit then fails with EFBIG instead of killing the process:
    # a real write failure that holds even for root, unlike a read-only file.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))


def test_a_failed_write_is_an_error_and_is_not_counted(tmp_path: Path) -> None:
    target = tmp_path / "rows.yaml"
    text = "name: X\ncode: x\ntype: internal\n"
    target.write_text(text)
    done = run_capc_process("migrate", "rows.yaml", cwd=tmp_path,
                            preexec_fn=_limit_file_size)
    assert done.returncode == 1, done.stderr
    assert "migrated 0 document(s) in 0 file(s)" in done.stderr
    assert "rows.yaml:1:1: error[io]: cannot write: " in done.stderr
    assert target.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["rows.yaml"]
