#!/usr/bin/env bash
# One loop iteration: the counter arrives as the input of the previous goto.
n="$BATON_INPUT"
if [ "$n" -le 0 ]; then
  echo "<goto>LIFTOFF</goto>"
else
  echo "<print>$n...</print>"
  echo "<goto input=\"$((n - 1))\">TICK</goto>"
fi
