"""The parity table (docs: Every API judged as deeply as chat) holds to the rulebook: every chat rule has a row, every
rule it names exists and belongs to the API of its column, and every cell says what it is."""

from __future__ import annotations

import re

from conformance.docsite import parity_table
from conformance.report.parity import PARITY
from conformance.rules import RULES, RULES_BY_ID


def test_every_chat_rule_has_a_row_and_nothing_else_does() -> None:
    chat = [r.id for r in RULES if r.protocol == "chat"]
    assert sorted(PARITY) == sorted(chat)


def test_every_named_rule_exists_and_judges_that_api() -> None:
    for chat_id, cells in PARITY.items():
        for column, cell in zip(("responses", "messages"), cells, strict=True):
            if cell.startswith(("none:", "not judged:")):
                continue
            named = re.findall(r"\b[A-Z]{3,4}-\d{3}\b", cell)
            assert named, (chat_id, column, cell)
            for rule_id in named:
                assert rule_id in RULES_BY_ID, (chat_id, rule_id)
                assert RULES_BY_ID[rule_id].protocol in (column, "http", "sse"), (chat_id, column, rule_id)


def test_the_table_counts_its_cells() -> None:
    table = parity_table()
    assert f"Of chat's {len(PARITY)} rules of its own" in table
    assert table.count("\n| [") == len(PARITY)
