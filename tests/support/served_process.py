"""A server process on 127.0.0.1 for tests that talk to it over real sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

START_GUARD_SECONDS = 60.0  # a hang guard while the process starts, not a timing assertion


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(command: Sequence[str], port: int, *, cwd: Path | None = None,
            env: dict[str, str] | None = None, log: Path | None = None) -> Iterator[None]:
    """Start ``command``, wait until ``port`` accepts connections, stop it afterwards."""
    output = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    process = subprocess.Popen(list(command), cwd=cwd, env=env or dict(os.environ),
                               stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_GUARD_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode} "
                                   f"before listening (log: {log})")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on port {port} (log: {log})") \
                        from None
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None and output is not subprocess.DEVNULL:
            output.close()
