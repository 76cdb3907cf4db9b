"""Every module of the package imports on its own, in a fresh interpreter.

Imports moved into functions (so a compile does not pay for modules it does not use)
are only run on the path that needs them; this finds a broken one without waiting for
that path: a missing name, a renamed module, a circle only a lazy import closes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT

_PROGRAM = """
import importlib, json, pkgutil, compiler
failed = {}
for found in pkgutil.walk_packages(compiler.__path__, "compiler."):
    if found.name.endswith(".__main__"):
        continue  # runs the command line
    try:
        importlib.import_module(found.name)
    except Exception as error:
        failed[found.name] = repr(error)
print(json.dumps(failed))
"""


def test_every_module_imports() -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROGRAM], cwd=REPO_ROOT, env=environment,
                          capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {}
