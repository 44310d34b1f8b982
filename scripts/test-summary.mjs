// Sums the vitest JSON reports of every package ({packages,apps}/*/test-results.json, relative to the working
// directory) into one closing line: "N passed, N failed" (and the test files that failed to run, the skipped tests).
// Exits 1 when anything failed or no report was found. Plain fs calls only, so Node 20 runs it too.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const reports = ['packages', 'apps']
  .filter((dir) => existsSync(dir))
  .flatMap((dir) => readdirSync(dir).map((name) => path.join(dir, name, 'test-results.json')))
  .filter((file) => existsSync(file));
let passed = 0,
  failed = 0,
  skipped = 0,
  brokenFiles = 0;
for (const file of reports) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  passed += r.numPassedTests ?? 0;
  failed += r.numFailedTests ?? 0;
  skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A file that fails before its tests run (an import error, a failing beforeAll) has no failed test of its own.
  brokenFiles += (r.testResults ?? []).filter(
    (f) => f.status === 'failed' && (f.assertionResults ?? []).every((a) => a.status !== 'failed'),
  ).length;
}
if (reports.length === 0) {
  console.log('no test reports found: no package ran its tests');
  process.exit(1);
}
console.log(
  `${passed} passed, ${failed} failed${brokenFiles ? `, ${brokenFiles} test files failed to run` : ''}${skipped ? `, ${skipped} skipped` : ''}`,
);
process.exit(failed > 0 || brokenFiles > 0 ? 1 : 0);
