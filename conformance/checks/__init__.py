"""Checks: pure functions over an ``Analysis`` that yield ``Finding`` objects; they never raise.

A check is registered against the rule ids it can report with ``@check(...)`` (``conformance.checks.registry``); its
preconditions (``when=``) say whether the exchange can show those rules at all. ``evaluate`` runs every check and
gives one ``Verdict`` per rule: passed, failed (with findings), not applicable, or error. The check modules of this
package (one per category; a protocol's own, ``checks/<name>.py``) import the registry, never this package's face.
"""

from __future__ import annotations

from conformance.checks.registry import *  # noqa: F403 (the registry's names, as callers have read them from here)
from conformance.checks.registry import __all__ as __all__
