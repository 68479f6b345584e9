"""The rules of every category without a module of its own here (a protocol package's, such as messages).

A new protocol's rules are judged live without a new file: its category is found from the rulebook.
"""

from pathlib import Path

from conformance.rules import RULES
from conformance.suites import rule_test

_OWN = {p.stem.removeprefix("test_") for p in Path(__file__).parent.glob("test_*.py")}

test_rule = rule_test(*sorted({r.category for r in RULES} - _OWN - {"fuzz"}))
