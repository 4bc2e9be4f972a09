#!/usr/bin/env bash
# FACT(n): results travel as "k:k!" so the caller knows which level returned.
n="$BATON_INPUT"
if [ "$n" -le 1 ]; then
  echo "<result>$n:1</result>"  # 0! = 1! = 1
else
  # Push a frame: FACT(n-1)'s result comes back to MULTIPLY, which multiplies by n.
  echo "<call return=\"MULTIPLY\" input=\"$((n - 1))\">FACT</call>"
fi
