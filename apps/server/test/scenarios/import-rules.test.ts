/**
 * The import rules of `.dependency-cruiser.cjs` fire: a throwaway tree laid out like packages/core/src
 * (kernel, access, areas) with one allowed import and three forbidden ones is cruised with the
 * repository's own configuration, and exactly the forbidden ones are reported under their rule names.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../paths.ts';

const run = promisify(execFile);
const tree = mkdtempSync(path.join(tmpdir(), 'kitty-import-rules-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

function file(rel: string, body: string): void {
  const full = path.join(tree, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, body);
}

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

describe('import rules (dependency-cruiser)', () => {
  it('reports an area importing a later area, the kernel importing an area and an unlisted area; allows downward imports', async () => {
    const src = 'packages/core/src';
    file(`${src}/areas/ledger/split.ts`, 'export const split = 1;\n');
    // allowed: records stands above ledger
    file(`${src}/areas/records/export.ts`, "import { split } from '../ledger/split.ts';\nexport const out = split;\n");
    // forbidden: ledger is the lowest area and may not use records
    file(`${src}/areas/ledger/effects.ts`, "import { out } from '../records/export.ts';\nexport const e = out;\n");
    // forbidden: the kernel names no area
    file(`${src}/kernel/write-batch.ts`, "import { split } from '../areas/ledger/split.ts';\nexport const w = split;\n");
    // forbidden: an area folder with no place in the area order
    file(`${src}/areas/gossip/rumours.ts`, "import { split } from '../ledger/split.ts';\nexport const r = split;\n");
    const bin = path.join(ROOT, 'node_modules', '.bin', 'depcruise');
    const result = await run(bin, ['packages', '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
      cwd: tree,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((e: { stdout: string }) => e); // exits non-zero when it finds violations
    const report = JSON.parse(result.stdout) as { summary: { violations: Violation[] } };
    const found = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(found).toEqual([
      `area-has-a-place: ${src}/areas/gossip/rumours.ts → ${src}/areas/ledger/split.ts`,
      `area-order-ledger: ${src}/areas/ledger/effects.ts → ${src}/areas/records/export.ts`,
      `kernel-imports-nothing-above: ${src}/kernel/write-batch.ts → ${src}/areas/ledger/split.ts`,
    ]);
  });
});
