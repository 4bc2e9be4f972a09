#!/usr/bin/env bash
# Runs the project's tests (TEST_COMMAND, default `make test`) without spending
# tokens. Passing: the architect reviews the change with a fresh context
# (<function>), and the verdict comes back to TRIAGE. Failing: TRIAGE counts it
# as a failed attempt of the coder.
set -eu
command="${TEST_COMMAND:-make test}"
if output=$(bash -c "$command" 2>&1); then
  echo "<print>tests pass: $command</print>"
  echo "<function return=\"TRIAGE\" input=\"The tests pass ($command).\">REVIEW</function>"
else
  tail=$(printf '%s' "$output" | tail -n 20 | tr '"<>\n' "'() ")
  echo "<print>tests fail: $command</print>"
  echo "<goto input=\"TESTS FAIL ($command): $tail\">TRIAGE</goto>"
fi
