/**
 * Makes dist/ a package folder of its own, the one that is packed and published
 * (`npx -y pnpm@10.34.8 --filter @kitty/client tarball`, into artifacts/): its package.json carries what a user's install needs — name, version,
 * ESM entry points, engines — and nothing of this workspace (no scripts, no dev dependencies such
 * as `workspace:*` links); the README is copied next to it. Run by `build` after tsc.
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(DIR, 'dist');
const pkg = JSON.parse(await readFile(path.join(DIR, 'package.json'), 'utf8')) as Record<string, unknown>;

const manifest = {
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  keywords: pkg.keywords,
  type: 'module',
  exports: { '.': { types: './index.d.ts', default: './index.js' } },
  types: './index.d.ts',
  // Only the built code (and README.md, package.json, which npm always adds): a tarball someone packed inside dist/
  // earlier (`npm pack` run there) is never shipped inside the next one.
  files: ['**/*.js', '**/*.d.ts'],
  sideEffects: false,
  engines: pkg.engines,
};
await writeFile(path.join(DIST, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
await copyFile(path.join(DIR, 'README.md'), path.join(DIST, 'README.md'));
console.log(`dist/package.json: ${manifest.name}@${manifest.version} (pack it with: npx -y pnpm@10.34.8 --filter @kitty/client tarball)`);
