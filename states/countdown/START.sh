#!/usr/bin/env bash
# Entry point: start counting down from the run's --input (default 3).
n="${BATON_INPUT:-3}"
echo "<print>Counting down from $n</print>"
echo "<goto input=\"$n\">TICK</goto>"
