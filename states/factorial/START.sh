#!/usr/bin/env bash
# Computes n! (n = --input, default 5) with a real call stack: FACT calls itself
# once per level, and every <result> pops one frame back to MULTIPLY.
n="${BATON_INPUT:-5}"
case "$n" in
  ''|*[!0-9]*) echo "input must be a whole number, got '$n'" >&2; exit 2 ;;
esac
echo "<print>computing $n! with a call stack of depth $n</print>"
# <function> pushes a frame: when FACT's chain emits <result>, REPORT runs with it.
echo "<function return=\"REPORT\" input=\"$n\">FACT</function>"
