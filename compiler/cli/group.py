"""The ``capc`` click group: every command, each from its family's module."""

from __future__ import annotations

import click

from compiler import __version__
from compiler.cli.authoring import import_command, migrate_command, new_command
from compiler.cli.compiling import compile_command, validate_command
from compiler.cli.keys import keygen_command, verify_command
from compiler.cli.locking import lock_command
from compiler.cli.plugin_listing import plugins_command
from compiler.cli.review import (
    budget_command,
    diff_command,
    docs_command,
    explain_command,
    schema_command,
)
from compiler.cli.serving import serve_command
from compiler.cli.testing import record_command, test_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="capc")
def cli() -> None:
    """capc — compile capability YAML into one frozen, verified manifest."""


for _command in (compile_command, validate_command, keygen_command, verify_command,
                 lock_command, schema_command, explain_command, diff_command, docs_command,
                 migrate_command, import_command, new_command, plugins_command,
                 budget_command, test_command, record_command, serve_command):
    cli.add_command(_command)
