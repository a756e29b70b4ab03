"""``dicetable rules``: list, show and validate rule packs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from dicetable.cli.main import SUBCOMMAND_STYLE
from dicetable.cli.output import output
from dicetable.cli.tables import WIDE_OPTION_HELP, fit, rule_value
from dicetable.cli.tables import console as table_console
from dicetable.core.errors import RulePackInvalid
from dicetable.rules.loader import PRESETS, load_pack
from dicetable.rules.model import Rule, Status
from dicetable.rules.schema import SPECS

app = typer.Typer(
    **SUBCOMMAND_STYLE, help="Rule packs: every rule with its value, citation and status.",
                  no_args_is_help=True)
console = output()

_STYLE = {Status.REGULATION: "bold green", Status.OTHER_JURISDICTION: "yellow",
          Status.INDUSTRY_DEFAULT: "cyan"}


@app.command("list")
def list_packs(wide: bool = typer.Option(False, "--wide", help=WIDE_OPTION_HELP)) -> None:
    """The preset rule packs shipped with dicetable."""
    table = Table(title="Rule pack presets")
    table.add_column("pack", no_wrap=True, min_width=max(len(n) for n in PRESETS))
    table.add_column("game", no_wrap=True, min_width=len("props-and-hops"))
    for name in ("jurisdiction", "rules", "regulation", "stand-ins"):
        table.add_column(name)
    for name in PRESETS:
        pack = load_pack(name)
        regulation = sum(1 for r in pack if r.status is Status.REGULATION)
        table.add_row(name, pack.game, pack.jurisdiction, str(len(pack.rules)),
                      str(regulation), str(len(pack.rules) - regulation))
    table_console(wide).print(fit(table))


@app.command("show")
def show(pack: str = typer.Argument(..., metavar="PACK",
                                    help="A preset name or a house pack JSON file"),
         as_json: bool = typer.Option(False, "--json", help="Machine-readable output"),
         section: list[str] = typer.Option(
             [], "--section", metavar="PREFIX",
             help="Only the rules whose id starts with PREFIX (noroll, paytable.place, "
                  "authority ...); repeat for several"),
         wide: bool = typer.Option(False, "--wide", help=WIDE_OPTION_HELP)) -> None:
    """Every rule of PACK with its value, citation and status (--section to filter)."""
    rules = load_pack(pack)  # a pack that cannot be used: exit 2 (``cli.refusal``)
    chosen = [r for r in rules if _in_sections(r.id, section)]
    if not chosen:
        console.print(f"[red]no rule of {escape(rules.id)} is in section "
                      f"{escape(', '.join(section))}; sections: "
                      f"{escape(', '.join(_sections(rules)))}[/red]")
        raise typer.Exit(2)
    if as_json:
        data = rules.to_dict()
        data["rules"] = {k: v for k, v in data["rules"].items() if _in_sections(k, section)}
        for rule_id, rule in data["rules"].items():
            spec = SPECS.get(rule_id)
            rule["read_by"] = spec.reads if spec is not None else ""
            rule["informational"] = spec is None or spec.informational
            if spec is not None and spec.when is not None:
                rule["read_when"] = {spec.when[0]: spec.when[1]}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    table = Table("rule", "value", "status", "citation", "read by",
                  title=f"{rules.id}: {rules.name}", show_lines=False)
    for rule in sorted(chosen, key=lambda r: r.id):
        spec = SPECS.get(rule.id)
        reads = spec.reads.removeprefix("dicetable.") if spec is not None and spec.reads \
            else "[dim]informational[/]"
        if spec is not None and spec.when is not None:
            reads += f" (when {spec.when[0]} is {spec.when[1]})"
        table.add_row(rule.id, rule_value(rule.id, rule.value),
                      f"[{_STYLE[rule.status]}]{rule.status}[/]", rule.citation, reads)
    table_console(wide).print(fit(table))
    console.print("regulation = PA/IN text; other-jurisdiction and industry-default are "
                  "stand-ins an operator confirms against its approved rules submission. "
                  "'read by': the code that consumes the value; an informational rule is "
                  "cited, and changing it changes nothing.")
    if not section:
        console.print(f"sections (--section): {', '.join(_sections(rules))}")


def _in_sections(rule_id: str, sections: list[str]) -> bool:
    """A rule is in a section when its id is the prefix or starts with it and a dot."""
    return not sections or any(rule_id == p or rule_id.startswith(p.rstrip(".") + ".")
                               for p in sections)


def _sections(rules: Iterable[Rule]) -> list[str]:
    return sorted({r.id.split(".", 1)[0] for r in rules})


@app.command("validate")
def validate(file: Path = typer.Argument(..., metavar="FILE",
                                         help="A house pack JSON file")) -> None:
    """Check a house pack; every problem is reported at once (exit 1). A file that cannot be
    read as a house pack (not UTF-8, not JSON, not an object) is refused with exit 2."""
    try:
        pack = load_pack(file)
    except RulePackInvalid as e:  # the verdict; a file that is not a pack at all is exit 2
        console.print(f"[red]{escape(str(file))}: {len(e.problems)} problem(s)[/red]")
        for rule_id, message in e.problems:
            console.print(f"  {escape(rule_id)}: {escape(message)}")
        raise typer.Exit(1) from None
    console.print(f"[green]{file}: valid[/green] ({pack.id}, based on {pack.base}, "
                  f"{len(pack.rules)} rules, digest {pack.digest[:12]})")


@app.command("submission")
def submission(pack: str = typer.Argument(..., metavar="PACK",
                                          help="A preset name or a house pack JSON file"),
               out: Path = typer.Option(..., "--out", help="FILE.html or FILE.pdf")) -> None:
    """The rules submission for the regulator: every rule (regulation first, then the
    operator's choices), the paytable with exact house edges, the permission matrix, the dice
    and shaker procedure, and the pack's digest. A .pdf is rendered with WeasyPrint."""
    from dicetable.odds.submission import submission_html

    rules = load_pack(pack)  # a pack that cannot be used: exit 2 (``cli.refusal``)
    document = submission_html(rules)
    suffix = out.suffix.lower()
    if suffix in (".html", ".htm"):
        out.write_text(document, encoding="utf-8")
    elif suffix == ".pdf":
        write_pdf(document, out)
    else:
        console.print(f"[red]--out must end in .html or .pdf, not {out.name!r}[/red]")
        raise typer.Exit(2)
    console.print(f"{out}: rules submission for {rules.id} (digest {rules.digest[:16]}…)")


def write_pdf(document: str, out: Path) -> None:
    """Render the HTML to PDF with WeasyPrint (``pip install 'dicetable[pdf]'``)."""
    try:
        from weasyprint import HTML
    except (ImportError, OSError) as e:  # not installed, or its Pango libraries are missing
        hint = escape(f"pip install 'dicetable[pdf]' ({type(e).__name__}: {e})")
        console.print(f"[red]PDF output needs WeasyPrint and its Pango libraries: {hint}; "
                      "or write .html[/red]")
        raise typer.Exit(2) from None
    HTML(string=document).write_pdf(str(out))
