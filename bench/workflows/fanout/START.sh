# 1,000 workers (BENCH_WORKERS overrides), all forked in one output.
for i in $(seq "${BENCH_WORKERS:-1000}"); do echo "<fork input=\"1\">W</fork>"; done
echo '<goto>DONE</goto>'
