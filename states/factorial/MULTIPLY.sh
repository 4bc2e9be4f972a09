#!/usr/bin/env bash
# Receives "k:k!" from the level below and returns "(k+1):(k+1)!" to the level above.
k="${BATON_INPUT%%:*}"
value="${BATON_INPUT#*:}"
n=$((k + 1))
echo "<result>$n:$((value * n))</result>"
