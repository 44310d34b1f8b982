#!/bin/sh
# The test step of `pnpm test`: every package's vitest suite (one at a time: they share PostgreSQL), then one
# closing line for the whole run, "N passed, N failed", summed from each package's vitest JSON report
# (scripts/test-summary.mjs). Exits with turbo's status.
rm -f packages/*/test-results.json apps/*/test-results.json
status=0
turbo run test --concurrency=1 || status=$?
node scripts/test-summary.mjs || true
exit "$status"
