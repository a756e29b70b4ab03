"""``dicetable wallet show|deposit|withdraw``: the cage's wallet moves on a floor's store, with
the balance the table's money route sees; refusals name their rule and change nothing."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from dicetable.application.wallets import table_credits, wallet_state
from dicetable.cli.main import app
from dicetable.store.keys import find_key
from dicetable.store.open import open_store
from tests.server.conftest import copy_floor_db

runner = CliRunner()
CAGE = "cass:chip-bank-cashier"


def _own(db: Path) -> int:
    store = open_store(str(db), create=False, key=find_key(None, db))
    try:
        return wallet_state(store, "alice").own() + table_credits(store, "alice")
    finally:
        store.close()


def test_the_cage_moves_a_wallet_from_the_command_line(demo_db: Path, tmp_path: Path) -> None:
    db = str(copy_floor_db(demo_db, tmp_path))
    shown = runner.invoke(app, ["wallet", "show", db, "alice"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("alice: $1,000.00 (deposited $1,500.00")
    assert "WalletToTable" in shown.output
    assert "craps-pa-e1" in shown.output
    done = runner.invoke(app, ["wallet", "deposit", db, "alice", "250", "--as", CAGE,
                               "--reason", "cash"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("alice: $1,250.00")
    done = runner.invoke(app, ["wallet", "withdraw", db, "alice", "$1250.00", "--as", CAGE])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("alice: $0.00")
    assert _own(Path(db)) == 0


def test_the_command_line_refuses_naming_the_rule_and_changes_nothing(
        demo_db: Path, tmp_path: Path) -> None:
    db = str(copy_floor_db(demo_db, tmp_path))
    for argv, rule in (
            (["withdraw", db, "alice", "1000.01", "--as", CAGE], "wallet.balance"),
            (["deposit", db, "alice", "10", "--as", "dee:dealer"], "wallet.cage"),
            (["deposit", db, "nobody", "10", "--as", CAGE], "wallet.account"),
            (["deposit", db, "dee", "10", "--as", CAGE], "wallet.account"),
            (["deposit", db, "alice", "0", "--as", CAGE], "money.amount"),
            (["withdraw", db, "alice", "ten", "--as", CAGE], "money")):
        out = runner.invoke(app, ["wallet", *argv])
        assert out.exit_code == 1, (argv, out.output)
        assert "refused" in out.output, (argv, out.output)
        assert rule in out.output, (argv, out.output)
    assert _own(Path(db)) == 1_000_00


def test_rules_show_lists_the_money_rules_with_citation_and_status() -> None:
    for pack in ("pa-craps", "pa-props-and-hops"):
        out = runner.invoke(app, ["rules", "show", pack, "--section", "wallet"])
        assert out.exit_code == 0, out.output
        for rule_id in ("wallet.buy_in.minimum", "wallet.buy_in.maximum", "wallet.buy_in.by"):
            assert rule_id in out.output
        assert "industry-default" in out.output
        live = runner.invoke(app, ["rules", "show", pack, "--section", "live"]).output
        assert "603a.10(d)" in live
        assert "regulation" in live
