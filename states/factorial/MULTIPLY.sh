#!/usr/bin/env bash
# Receives "k:k!" from the level below and returns "(k+1):(k+1)!" to the level above.
# k! soon outgrows 64-bit arithmetic (21! does), so it travels as a decimal digit
# string and is multiplied by the small n in base-10^9 limbs, right to left:
# a limb times n (at most 1000) plus the carry always fits in 64 bits.
k="${BATON_INPUT%%:*}"
digits="${BATON_INPUT#*:}"
n=$((k + 1))
product="" carry=0
while [ -n "$digits" ]; do
  if [ "${#digits}" -gt 9 ]; then
    limb="${digits: -9}" digits="${digits:0:${#digits}-9}"
  else
    limb="$digits" digits=""
  fi
  step=$((10#$limb * n + carry))
  printf -v limb '%09d' $((step % 1000000000))
  product="$limb$product" carry=$((step / 1000000000))
done
product="$carry$product"
product="${product#"${product%%[!0]*}"}"  # drop the leading zeros
echo "<result>$n:${product:-0}</result>"
