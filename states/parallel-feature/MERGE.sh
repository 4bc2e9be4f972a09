#!/usr/bin/env bash
# The aggregator: every worker has ended (the planner joined them). Merge the
# branch of each worker into the checkout the run started in, in fork order, and
# report what was merged, what conflicted and what a worker could not build.
set -u
report="$BATON_TASK_FOLDER/merge-report.md"
results="${BATON_RESULTS:-}"
{
  echo "# Merge report"
  echo
  echo "Workers:"
  printf '%s\n' "${BATON_INPUT:-}"
  echo
} > "$report"
conflicts=0
# Worktree workers leave a branch baton/<run>/<agent> each (docs/join.md).
for branch in $(git for-each-ref --format='%(refname:short)' "refs/heads/baton/${BATON_WORKFLOW_ID:-}/" 2>/dev/null); do
  if git merge --no-edit -q "$branch" >/dev/null 2>&1; then
    echo "- merged $branch" >> "$report"
  else
    git merge --abort >/dev/null 2>&1
    echo "- CONFLICT merging $branch (left unmerged)" >> "$report"
    conflicts=$((conflicts + 1))
  fi
done
blocked=$(grep -c 'BLOCKED' "$results" 2>/dev/null || true)
echo "<print>merged the workers' branches: $conflicts conflict(s), ${blocked:-0} part(s) blocked</print>"
if [ "$conflicts" -gt 0 ] || [ "${blocked:-0}" -gt 0 ]; then
  echo "<goto input=\"Merging left work to do: see $report\">FIX</goto>"
else
  echo "<goto>VERIFY</goto>"
fi
