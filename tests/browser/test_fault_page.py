"""The pit console shows an integrity fault (spec/standards.md MEM-3) and clears it once the
table's log verifies again (issue 12)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.browser.conftest import LiveServer, OpenScreen
from tests.server.test_fault_state import _raise_chips, _restore


def test_mem_3_the_pit_sees_a_faulted_table_and_clears_it(live_server: LiveServer,
                                                           open_screen: OpenScreen) -> None:
    floor = live_server.floor
    seq, body = _raise_chips(Path(floor.store.location))
    assert floor.verify_all() == ["craps-pa-1"]
    pat = open_screen("pat", width=1500, height=1100)
    pit = pat.page
    expect(pit.locator('#faults-card [data-fault="craps-pa-1"]')).to_contain_text("altered")
    expect(pit.locator('.table-card[data-table="craps-pa-1"]')).to_have_count(0)
    pat.shot("pit-fault")
    _restore(Path(floor.store.location), seq, body)
    pit.on("dialog", lambda dialog: dialog.accept("restored from the backup"))
    pit.click('[data-clear="craps-pa-1"]')
    expect(pit.locator("#faults-card")).to_have_count(0)
    expect(pit.locator('.table-card[data-table="craps-pa-1"]')).to_have_count(1)
    cleared = [r.data() for r in floor.store.records("faults:floor")][-1]
    assert cleared["type"] == "FaultCleared"
    assert cleared["actor"] == "pat"
