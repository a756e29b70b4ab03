"""The one help style of every command (imported before any command runs, so it imports
nothing: ``dicetable --help`` stays quick)."""

from __future__ import annotations

from typing import Any

SUBCOMMAND_STYLE: dict[str, Any] = {"rich_markup_mode": None, "add_completion": False,
                                    "pretty_exceptions_show_locals": False}
"""Every command group's help in the top level's one plain style; shell completion is
offered once, by ``dicetable`` itself, not repeated on every command."""
