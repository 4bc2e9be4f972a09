#!/usr/bin/env bash
# Runs the project's tests (TEST_COMMAND, default `make test`) without spending tokens.
# Failing tests go straight back to the implementer, with the output as feedback;
# passing tests go to a reviewer with a fresh context (<function>), whose verdict
# comes back to DECIDE.
command="${TEST_COMMAND:-make test}"
if output=$(bash -c "$command" 2>&1); then
  echo "<print>tests pass: $command</print>"
  echo "<function return=\"DECIDE\" input=\"The tests pass ($command).\">REVIEW</function>"
else
  tail=$(printf '%s' "$output" | tail -n 30 | tr '"' "'")
  echo "<print>tests fail: $command</print>"
  echo "<goto input=\"The tests fail ($command). Last lines of the output:
$tail\">IMPLEMENT</goto>"
fi
