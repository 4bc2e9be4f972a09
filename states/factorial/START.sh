#!/usr/bin/env bash
# Computes n! (n = --input, default 5) with a real call stack: FACT calls itself
# once per level, and every <result> pops one frame back to MULTIPLY.
# n! is exact for every accepted n: MULTIPLY does decimal arithmetic on digit
# strings, so it never overflows. n is capped at 1000 because each level is a
# real frame (1000 frames, 1000! has 2,568 digits); larger inputs are refused.
n="${BATON_INPUT:-5}"
case "$n" in
  ''|*[!0-9]*) echo "input must be a whole number, got '$n'" >&2; exit 2 ;;
esac
n="${n#"${n%%[!0]*}"}"  # strip leading zeros, so 010 is 10, not octal 8
n="${n:-0}"
if [ "${#n}" -gt 4 ] || [ "$n" -gt 1000 ]; then
  echo "input must be at most 1000 (one call-stack frame per level), got $n" >&2
  exit 2
fi
echo "<print>computing $n! with a call stack of depth $n</print>"
# <function> pushes a frame: when FACT's chain emits <result>, REPORT runs with it.
echo "<function return=\"REPORT\" input=\"$n\">FACT</function>"
