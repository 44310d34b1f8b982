// `prisma generate` without the native schema engine (STACK-NOTES: every Prisma CLI command tries
// to download it; generate only needs PRISMA_SCHEMA_ENGINE_BINARY to point at some file).
// Plain .mjs so it also runs as a postinstall hook under any Node, in any shell.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('prisma/package.json')), 'build', 'index.js');
const engine = process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? (existsSync('/bin/true') ? '/bin/true' : process.execPath);
const res = spawnSync(process.execPath, [cli, 'generate', ...process.argv.slice(2)], {
  cwd: pkgDir,
  stdio: 'inherit',
  env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: engine, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
});
if (res.status !== 0) process.exit(res.status ?? 1);

// The generated client carries Prisma's query compiler as a 4.4 MB base64 string module, decoded at
// start-up: the module's source and the string stay in the heap for the life of the process (9 MB
// measured in a heap snapshot of the idle server). Write the decoded module next to the client once
// and load it from there instead; test/client.test.ts checks that the client loads it this way.
const internal = path.join(pkgDir, 'src', 'generated', 'prisma', 'internal');
const classFile = path.join(internal, 'class.ts');
const source = readFileSync(classFile, 'utf8');
const load =
  /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/(query_compiler_\w+\.\w+)\.wasm-base64\.mjs)"\)\n\s*return await decodeBase64AsWasm\(wasm\)/;
const m = load.exec(source);
if (!m) {
  console.warn('generate: the Prisma client no longer loads its query compiler as expected; left as generated');
  process.exit(0);
}
const wasmFile = `${m[2]}.wasm`;
const { wasm } = await import(pathToFileURL(createRequire(classFile).resolve(m[1])).href);
writeFileSync(path.join(internal, wasmFile), Buffer.from(wasm, 'base64'));
writeFileSync(
  classFile,
  source.replace(
    m[0],
    `const { readFile } = await import('node:fs/promises')\n    return new WebAssembly.Module(await readFile(new URL('./${wasmFile}', import.meta.url)))`,
  ),
);
