/**
 * `pnpm test` ends with one line for the whole run: scripts/test-summary.mjs sums the packages' vitest JSON reports
 * into "N passed, N failed", counts a test file that failed before its tests ran, exits non-zero on any failure or
 * when no report exists, and runs on the oldest Node the README allows (this test's own Node).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from '../paths.ts';

const SCRIPT = path.join(ROOT, 'scripts', 'test-summary.mjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the script in a folder holding these reports (folder → report); returns its output and exit code. */
async function summary(reports: Record<string, unknown>): Promise<{ out: string; code: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'kitty-summary-'));
  dirs.push(dir);
  for (const [pkg, report] of Object.entries(reports)) {
    mkdirSync(path.join(dir, pkg), { recursive: true });
    writeFileSync(path.join(dir, pkg, 'test-results.json'), JSON.stringify(report));
  }
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT], { cwd: dir });
    return { out: stdout.trim(), code: 0 };
  } catch (e) {
    const err = e as { stdout: string; code: number };
    return { out: err.stdout.trim(), code: err.code };
  }
}

const file = (status: string, tests: string[]) => ({ status, assertionResults: tests.map((s) => ({ status: s })) });

it('sums every package into one line and exits 0 when all passed', async () => {
  const r = await summary({
    'packages/core': {
      numPassedTests: 40,
      numFailedTests: 0,
      numPendingTests: 0,
      numTodoTests: 0,
      testResults: [file('passed', ['passed'])],
    },
    'apps/server': { numPassedTests: 2, numFailedTests: 0, numPendingTests: 1, numTodoTests: 0, testResults: [] },
  });
  expect(r).toEqual({ out: '42 passed, 0 failed, 1 skipped', code: 0 });
});

it('counts failed tests and files that failed to run, and exits 1', async () => {
  const r = await summary({
    'packages/core': { numPassedTests: 5, numFailedTests: 1, testResults: [file('failed', ['passed', 'failed'])] },
    'packages/db': { numPassedTests: 0, numFailedTests: 0, testResults: [file('failed', [])] },
  });
  expect(r).toEqual({ out: '5 passed, 1 failed, 1 test files failed to run', code: 1 });
});

it('says so when no package left a report', async () => {
  expect(await summary({})).toEqual({ out: 'no test reports found: no package ran its tests', code: 1 });
});
