// Packs the built package folder (dist/, see manifest.ts) into artifacts/ at the repository root, outside the
// package: a tarball left in dist/ would be packed into the next one and trip the tests. Replaces an older
// tarball of the same version. Run with `npx -y pnpm@10.34.8 --filter @kitty/client tarball` after a build.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const dir = path.resolve(import.meta.dirname, '..');
const dist = path.join(dir, 'dist');
const out = path.resolve(dir, '..', '..', 'artifacts');
if (!existsSync(path.join(dist, 'package.json'))) {
  process.stderr.write('packages/client/dist is not built: run npx -y pnpm@10.34.8 --filter @kitty/client build first.\n');
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const [packed] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', out], { cwd: dist, encoding: 'utf8' }));
process.stdout.write(`${path.join(out, packed.filename)}\ninstall it in a project with: npm install ${path.join(out, packed.filename)}\n`);
