"""The one way tests run capc: in-process by default, a child process for entry-point tests.

``run_capc`` calls the same function the console script calls (``compiler.cli.entry.run``,
which ``compiler.cli.main`` exits with), in this process, with the test's working
directory, environment and captured streams, and restores all three afterwards. That is
what a user runs minus the interpreter start-up, which costs more than most commands
(and a child per test made the suite several minutes slower). Tests about the entry point
itself (``python -m compiler``, the installed script, signals, the process umask) use
``run_capc_process``: the real console entry point in a child process.

Both return a :class:`subprocess.CompletedProcess` (``returncode``, ``stdout``,
``stderr``), so a test can switch between them without changing its assertions.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tests.support.paths import REPO_ROOT


def run_capc(*args: str, cwd: Path = REPO_ROOT, env: Mapping[str, str] | None = None,
             extra_env: Mapping[str, str] | None = None, timeout: float = 120,
             ) -> subprocess.CompletedProcess[str]:
    """``capc ARGS...`` in ``cwd``, in-process; ``env`` replaces the environment,
    ``extra_env`` adds to it (both only for the duration of the call).

    ``timeout`` is accepted for the child-process form's sake; an in-process command is
    bounded by the test's own limits.
    """
    from compiler.cli import cli
    from compiler.cli.entry import run

    del timeout  # the signature is run_capc_process's, so tests can switch
    stdout, stderr = io.StringIO(), io.StringIO()
    with _working_directory(cwd), _environment(env, extra_env), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(cli, list(args))
    return subprocess.CompletedProcess(["capc", *args], code, stdout.getvalue(),
                                       stderr.getvalue())


def run_capc_process(*args: str, cwd: Path = REPO_ROOT, env: Mapping[str, str] | None = None,
                     extra_env: Mapping[str, str] | None = None, timeout: float = 120,
                     code: Path = REPO_ROOT, text: bool = True, **options: Any,
                     ) -> subprocess.CompletedProcess[Any]:
    """``python -m compiler ARGS...`` in a child process (entry-point tests only); the
    child imports ``code``'s ``compiler`` (this checkout's by default), whatever the
    interpreter has installed. ``options`` go to :func:`subprocess.run` (``stderr``,
    ``preexec_fn``...); output is captured unless they say otherwise."""
    if "stdout" not in options and "stderr" not in options:
        options["capture_output"] = True
    return subprocess.run(capc_command(*args), cwd=cwd, env=capc_environment(env, extra_env, code),
                          text=text, timeout=timeout, check=False, **options)


def start_capc_process(*args: str, cwd: Path = REPO_ROOT, env: Mapping[str, str] | None = None,
                       extra_env: Mapping[str, str] | None = None, code: Path = REPO_ROOT,
                       **options: Any) -> subprocess.Popen[Any]:
    """The same child as :func:`run_capc_process`, started and not waited for (tests of
    several capc processes at once)."""
    return subprocess.Popen(capc_command(*args), cwd=cwd,
                            env=capc_environment(env, extra_env, code), **options)


def capc_command(*args: str) -> list[str]:
    """The argv of a capc child: the console entry point of ``python -m compiler``."""
    return [sys.executable, "-m", "compiler", *args]


def capc_environment(env: Mapping[str, str] | None, extra_env: Mapping[str, str] | None,
                     code: Path = REPO_ROOT) -> dict[str, str]:
    """A child's environment: ``env`` (or this one) plus ``extra_env``, with ``code`` first
    on ``PYTHONPATH``."""
    environment = dict(os.environ if env is None else env)
    environment.update(extra_env or {})
    inherited = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(code), *([inherited] if inherited else [])])
    return environment


@contextlib.contextmanager
def _working_directory(cwd: Path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(previous)


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None, extra_env: Mapping[str, str] | None
                 ) -> Iterator[None]:
    """``os.environ`` as the test asks, then exactly as it was (xdist runs each worker in
    its own process, so nothing leaks into another test)."""
    saved = dict(os.environ)
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.environ.update(extra_env or {})
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
