# 1,000 sequential gotos (BENCH_STEPS overrides).
n=$BATON_INPUT
if [ "$n" -ge "${BENCH_STEPS:-1000}" ]; then echo "<result>looped $n</result>"; else echo "<goto input=\"$((n + 1))\">STEP</goto>"; fi
