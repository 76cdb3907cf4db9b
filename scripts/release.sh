#!/usr/bin/env bash
# Release capc VERSION: bump [project] version, build the wheel and the sdist, install the
# wheel into a fresh virtualenv and run it, commit, and tag vVERSION (docs/ci.md,
# "Releasing"). Pushing stays a separate, deliberate step: the script prints the command.
#
#   scripts/release.sh 0.2.0             # from a clean checkout of main
#   PYTHON=python3.12 scripts/release.sh 0.2.0
#
# Needs git, and a Python 3.11+ with `build` (in the dev extra; `make test` installs it).
# Set CAPC_RELEASE_OFFLINE=1 to build and test without a package index (the wheel's
# dependencies must then already be importable by PYTHON).
set -euo pipefail

version="${1:-}"
python="${PYTHON:-python3}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([a-z]+[0-9]+)?$ ]]; then
    echo "usage: scripts/release.sh VERSION   (e.g. 0.2.0)" >&2
    exit 2
fi
cd "$(git rev-parse --show-toplevel)"
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
    echo "release: the working tree has uncommitted changes; commit or stash them first" >&2
    exit 1
fi
if git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
    echo "release: tag v$version exists already" >&2
    exit 1
fi

# 1. The version: [project] version, and compiler.__version__ (what `capc --version` and
#    every manifest's "compiler" entry say, read without importlib.metadata at boot).
"$python" - "$version" <<'PY'
import re, sys
from pathlib import Path
for name, pattern in (("pyproject.toml", r'(?m)^version = "[^"]*"$'),
                      ("compiler/__init__.py", r'(?m)^__version__ = "[^"]*"$')):
    path = Path(name)
    text = path.read_text(encoding="utf-8")
    key = "version" if name == "pyproject.toml" else "__version__"
    new, count = re.subn(pattern, f'{key} = "{sys.argv[1]}"', text, count=1)
    if count != 1:
        sys.exit(f"release: no `{key} = \"...\"` line in {name}")
    path.write_text(new, encoding="utf-8")
PY

# 2. Wheel and sdist, from a clean dist/.
rm -rf dist
build_flags=()
if [[ "${CAPC_RELEASE_OFFLINE:-}" == 1 ]]; then build_flags+=(--no-isolation); fi
"$python" -m build "${build_flags[@]}" --sdist --wheel --outdir dist . >dist.log 2>&1 || {
    cat dist.log >&2; exit 1; }
rm -f dist.log
wheel=$(ls dist/capc-"$version"-*.whl)
ls dist/capc-"$version".tar.gz >/dev/null

# 3. The wheel, installed alone into a fresh virtualenv, compiles a capability.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [[ "${CAPC_RELEASE_OFFLINE:-}" == 1 ]]; then
    "$python" -m venv --system-site-packages "$scratch/venv"
    "$scratch/venv/bin/python" -m pip install --quiet --no-index --no-deps "$wheel"
else
    "$python" -m venv "$scratch/venv"
    "$scratch/venv/bin/python" -m pip install --quiet "$wheel"
fi
mkdir -p "$scratch/project/capabilities"
cat > "$scratch/project/capabilities/wiki.yaml" <<'YAML'
apiVersion: capc/v1
kind: Capability
code: wiki
name: Wiki
type: mcp
options:
  server_label: wiki
  server_url: https://wiki.example.com/mcp
  require_approval: never
YAML
installed=$(cd "$scratch/project" && "$scratch/venv/bin/capc" --version)
[[ "$installed" == *" $version" ]] || { echo "release: the wheel says '$installed'" >&2; exit 1; }
(cd "$scratch/project" && "$scratch/venv/bin/capc" compile --strict >/dev/null)

# 4. Commit and tag; pushing is yours.
git add pyproject.toml compiler/__init__.py
git commit -q -m "Release $version"
git tag -a "v$version" -m "capc $version"
echo "release: built $(ls dist | tr '\n' ' ')and tagged v$version"
echo "release: publish with: git push origin HEAD \"v$version\""
