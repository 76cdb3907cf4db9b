"""Options shared by several commands, each written once.

A default never appears here: an option left out is None, and the command asks the
project settings (``compiler.project``: ``[tool.capc]`` and its built-in defaults).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from compiler.report import REPORTERS

Command = TypeVar("Command", bound=Callable[..., Any])


def format_option(choices: Iterable[str] = tuple(REPORTERS),
                  help_text: str = "How diagnostics are printed.") -> Callable[[Command], Command]:
    """``--format``: a reporter for diagnostics, or a command's own output formats."""
    return click.option("--format", "output_format", type=click.Choice(sorted(choices)),
                        default="text", show_default=True, help=help_text)


variables_option = click.option(
    "--vars", "variables", multiple=True, metavar="FILE",
    help="YAML mapping of template variables for *.yaml.j2 (repeatable; later wins; "
         "default: [tool.capc] vars).")
strict_option = click.option(
    "--strict/--no-strict", default=None,
    help="Treat warnings as errors (default: [tool.capc] strict in ./pyproject.toml).")
private_option = click.option(
    "--allow-private-networks/--no-allow-private-networks", default=None,
    help="Loopback and private hosts become warnings (link-local and metadata never do; "
         "default: [tool.capc] allow_private_networks).")
plugins_option = click.option(
    "--plugins/--no-plugins", "use_plugins", default=None,
    help="Check internal capabilities and plugin-tool overrides against the installed "
         "primethink.tools plugins; a compile records their tools in the manifest "
         "(default: [tool.capc] plugins in ./pyproject.toml).")
cache_option = click.option(
    "--no-cache", "no_cache", is_flag=True,
    help="Do not read or write the compile cache (also: CAPC_NO_CACHE=1).")
cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
    help="Where cached results live (default: $CAPC_CACHE_DIR, else capc in the user cache "
         "directory; entries are HMAC-authenticated, so a planted one is ignored).")
lock_option = click.option(
    "--lock", "lock_file", default=None, metavar="FILE",
    help="The lock of pinned MCP tools (default: ./capc.lock when it exists).")
manifest_option = click.option(
    "-m", "--manifest", "manifest_path", default=None, metavar="MANIFEST",
    help="The manifest to read (default: [tool.capc] output, else build/manifest.json).")


def compile_options(command: Command) -> Command:
    """The options of every command that compiles a tree the way ``capc compile`` does."""
    for option in (lock_option, cache_dir_option, cache_option, plugins_option,
                   private_option, format_option(), strict_option, variables_option):
        command = option(command)
    return command
