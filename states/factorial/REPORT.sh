#!/usr/bin/env bash
n="${BATON_INPUT%%:*}"
echo "<result>$n! = ${BATON_INPUT#*:}</result>"
