// `prisma generate` without the native schema engine (STACK-NOTES: every Prisma CLI command tries
// to download it; generate only needs PRISMA_SCHEMA_ENGINE_BINARY to point at some file).
// Plain .mjs so it also runs as a postinstall hook under any Node, in any shell.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('prisma/package.json')), 'build', 'index.js');
const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? (existsSync('/bin/true') ? '/bin/true' : process.execPath);
const res = spawnSync(process.execPath, [cli, 'generate', ...process.argv.slice(2)], {
  cwd: pkgDir,
  stdio: 'inherit',
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
process.exit(res.status ?? 1);
