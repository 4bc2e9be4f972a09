# Five steps per worker (BENCH_WORKER_STEPS overrides).
k=$BATON_INPUT
if [ "$k" -ge "${BENCH_WORKER_STEPS:-5}" ]; then echo "<result>$k</result>"; else echo "<goto input=\"$((k + 1))\">W</goto>"; fi
