# Calls 100 levels deep (BENCH_DEPTH overrides), then returns level by level.
echo "<function return=\"REPORT\" input=\"${BENCH_DEPTH:-100}\">DOWN</function>"
