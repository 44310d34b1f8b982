/**
 * The typed client as a user gets it: build, `npm pack` (of the built package folder, dist/), install the tarball into a separate
 * project with npm (offline: it has no dependencies), type-check the client README's example with
 * stock `tsc` (strict, nodenext, no skipLibCheck) and run it on Node 20 (system node, when
 * present) and Node 24 against a live server.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { ROOT } from '../paths.ts';

const CLIENT = path.join(ROOT, 'packages', 'client');
const TSC = createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
const SYSTEM_NODE = '/usr/bin/node';

function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`, { cause: e });
  }
}

/** The first ```ts block of the client's README. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(path.join(CLIENT, 'README.md'), 'utf8');
  const m = /```ts\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('packages/client/README.md has no ```ts example');
  return m[1]!;
}

describe('@kitty/client as a package', () => {
  let tmp: string;
  let server: TestServer;
  let tarball: string;
  const project = () => path.join(tmp, 'consumer');

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'kitty-client-pkg-'));
    // Build exactly what is packed (also done by `pnpm build` / turbo before tests).
    run(process.execPath, ['--import', 'tsx', 'scripts/generate.ts'], CLIENT);
    run(process.execPath, [TSC, '-p', 'tsconfig.build.json'], CLIENT);
    run(process.execPath, ['--import', 'tsx', 'scripts/manifest.ts'], CLIENT);
    // A tarball left in dist/ by an earlier `npm pack` run there must not end up inside the new one.
    const stray = path.join(CLIENT, 'dist', 'kitty-client-0.0.0-stray.tgz');
    await writeFile(stray, 'an older tarball');
    let packed: Array<{ filename: string; files: Array<{ path: string }> }>;
    try {
      packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', tmp], path.join(CLIENT, 'dist')));
    } finally {
      await rm(stray, { force: true });
    }
    tarball = path.join(tmp, packed[0]!.filename);
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
    await rm(tmp, { recursive: true, force: true });
  });

  it('packs built JS and declarations only (not a tarball left in dist/), with a version and no dependencies', async () => {
    const list = run('tar', ['-tzf', tarball], tmp).trim().split('\n').sort();
    expect(list).toContain('package/index.js');
    expect(list).toContain('package/index.d.ts');
    expect(list).toContain('package/README.md');
    expect(list.filter((f) => !/^package\/(.*\.(js|d\.ts)|README\.md|package\.json)$/.test(f))).toEqual([]);
    run('tar', ['-xzf', tarball, '-C', tmp], tmp);
    const pkg = JSON.parse(await readFile(path.join(tmp, 'package', 'package.json'), 'utf8'));
    expect(pkg.private).toBeUndefined();
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.']).toEqual({ types: './index.d.ts', default: './index.js' });
    expect([pkg.dependencies, pkg.devDependencies, pkg.scripts]).toEqual([undefined, undefined, undefined]);
    expect(JSON.stringify(pkg)).not.toContain('workspace:');
  });

  it('installs with npm into a separate project, type-checks with stock tsc and runs on Node 20 and 24', async () => {
    await mkdir(path.join(project(), 'src'), { recursive: true });
    await writeFile(path.join(project(), 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], project());
    await writeFile(
      path.join(project(), 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          outDir: 'out',
          skipLibCheck: false,
          types: [],
        },
        include: ['src'],
      }),
    );
    const handle = `ana-${Date.now().toString(36)}`;
    await writeFile(
      path.join(project(), 'src', 'example.ts'),
      (await readmeExample()).replaceAll('http://127.0.0.1:3000', server.url).replaceAll("'ana-bot'", `'${handle}'`),
    );
    // The types are real: wrong arguments and unknown tools do not compile.
    await writeFile(
      path.join(project(), 'src', 'types-check.ts'),
      [
        "import { createKittyClient, type ToolOutput, type ErrorCode } from '@kitty/client';",
        "export const kitty = createKittyClient({ baseUrl: 'http://127.0.0.1:1' });",
        'export async function never() {',
        '  // @ts-expect-error amount_minor is an integer of minor units, not a string',
        "  await kitty.add_expense({ group_id: 'g', description: 'd', amount_minor: '60.00' });",
        '  // @ts-expect-error no such tool',
        '  await kitty.add_expens({});',
        "  const r: ToolOutput<'get_balances'> = await kitty.get_balances({ group_id: 'g' });",
        "  const code: ErrorCode = 'NOT_FOUND';",
        '  return [r.members[0]?.balance_minor, code];',
        '}',
      ].join('\n'),
    );
    const files = run(process.execPath, [TSC, '-p', '.', '--listFilesOnly'], project()).trim().split('\n');
    // Self-contained: nothing but TypeScript's own lib files, the project and the package's declarations.
    expect(
      files.filter(
        (f) => !f.includes('/typescript/lib/') && !f.startsWith(path.join(project(), 'src')) && !f.includes('/node_modules/@kitty/client/'),
      ),
    ).toEqual([]);
    run(process.execPath, [TSC, '-p', '.'], project());

    const nodes = [process.execPath, ...(existsSync(SYSTEM_NODE) ? [SYSTEM_NODE] : [])];
    const versions: string[] = [];
    for (const [i, node] of nodes.entries()) {
      versions.push(run(node, ['--version'], project()).trim());
      // A second run needs its own handle.
      const script = i === 0 ? 'out/example.js' : 'out/example2.js';
      if (i > 0)
        await writeFile(
          path.join(project(), script),
          (await readFile(path.join(project(), 'out', 'example.js'), 'utf8')).replace(handle, `${handle}-${i}`),
        );
      // Asynchronously: the server answering it runs in this process.
      const { stdout: out } = await promisify(execFile)(node, [script], { cwd: project(), timeout: 120_000 });
      expect(out).toContain('NOT_FOUND');
      expect(out).toMatch(/true \[ '.*: 0' \]/); // settled, the only member's balance is 0
    }
    console.log(`client package ran on ${versions.join(' and ')}`);
    if (existsSync(SYSTEM_NODE)) expect(versions.some((v) => v.startsWith('v20.'))).toBe(true);
  });
});
