"""The responses rules, judged live."""

from conformance.suites import rule_test

test_rule = rule_test("responses")
