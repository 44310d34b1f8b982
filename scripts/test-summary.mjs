// Sums the vitest JSON reports of every package into one closing line: "N passed, N failed".
import { readFileSync, existsSync } from 'node:fs';
import { globSync } from 'node:fs';

let passed = 0,
  failed = 0,
  skipped = 0;
for (const file of globSync('{packages,apps}/*/test-results.json')) {
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
