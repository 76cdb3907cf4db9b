"""``capc plugins``: what the installed tool plugins register."""

from __future__ import annotations

import click

from compiler.cli.options import format_option
from compiler.errors import ProblemsFound


@click.command("plugins", epilog="""\b
Examples:
  capc plugins
  capc plugins --format json""")
@format_option(("text", "json"), "text, or the catalogue as JSON.")
def plugins_command(output_format: str) -> None:
    """List the installed tool plugins: their codes, names, descriptions and tools.

    Exits 1 when a plugin failed to load (it is listed with the reason).
    """
    import json

    from compiler.plugins import load_catalogue, read_plugin_settings, render_catalogue_text

    catalogue = load_catalogue(read_plugin_settings(True))  # [tool.capc] registrations too
    if output_format == "json":
        click.echo(json.dumps(catalogue, sort_keys=True, indent=2, ensure_ascii=False))
    else:
        click.echo(render_catalogue_text(catalogue), nl=False)
    if catalogue["failures"]:
        raise ProblemsFound()
