/**
 * The README's commands work as written: every pnpm command line in README.md, docs/ and the client's
 * README is written as the first lines are (`npx -y pnpm@<pinned> …`, nothing a fresh machine lacks) and
 * names a script or binary that exists; the MCP Inspector line runs from the repository root against a
 * live server; the walkthrough runs against a live server, twice in a row.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server-harness.ts';
import { ROOT } from '../paths.ts';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** README.md, docs/*.md and the client package's README: where a user reads commands. */
const DOCS = [
  README,
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(path.join(ROOT, 'docs', f), 'utf8')),
  readFileSync(path.join(ROOT, 'packages', 'client', 'README.md'), 'utf8'),
].join('\n');
const rootPkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  packageManager: string;
  scripts: Record<string, string>;
};

/** Workspace packages by name: folder and scripts. */
const packages = new Map<string, { dir: string; scripts: Record<string, string> }>();
for (const group of ['packages', 'apps']) {
  for (const d of readdirSync(path.join(ROOT, group))) {
    const file = path.join(ROOT, group, d, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name: string; scripts?: Record<string, string> };
    packages.set(pkg.name, { dir: path.join(ROOT, group, d), scripts: pkg.scripts ?? {} });
  }
}

/** Shell lines of the ```sh blocks, and the pnpm commands in backticks elsewhere (the tables). */
function readmeCommands(text = DOCS): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of m[1]!.split('\n')) {
      const code = line.replace(/\s+#.*$/, '').trim();
      if (!code || code.startsWith('#')) continue;
      out.push(...code.split('&&').map((c) => c.trim()));
    }
  }
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/`((?:npx -y pnpm@[^\s`]+|pnpm) [^`]+)`/g)) if (!m[1]!.endsWith(' …')) out.push(m[1]!);
  return out;
}

/** What a pnpm command line refers to, or why it is wrong. */
function checkPnpm(cmd: string): string | null {
  const m = /^(?:npx -y pnpm@(\S+)|pnpm) (.*)$/.exec(cmd);
  if (!m) return null;
  if (m[1] && `pnpm@${m[1]}` !== rootPkg.packageManager) return `${cmd}: pnpm@${m[1]} is not the pinned ${rootPkg.packageManager}`;
  const words = m[2]!.split(/\s+/);
  let pkg = { dir: ROOT, scripts: rootPkg.scripts };
  if (words[0] === '--filter') {
    const p = packages.get(words[1]!);
    if (!p) return `${cmd}: no workspace package ${words[1]}`;
    pkg = p;
    words.splice(0, 2);
  }
  const [verb, arg] = words;
  if (verb === 'install') return 'ok';
  if (verb === 'exec') {
    const bin = path.join(pkg.dir, 'node_modules', '.bin', arg!);
    return existsSync(bin) ? 'ok' : `${cmd}: no binary ${arg} in ${path.relative(ROOT, pkg.dir) || '.'}`;
  }
  return verb! in pkg.scripts ? 'ok' : `${cmd}: no script "${verb}" in ${path.relative(ROOT, pkg.dir) || 'the root'} package.json`;
}

describe('README commands', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every pnpm command is written with npx and the pinned pnpm, and names an existing script or binary', () => {
    const commands = readmeCommands().filter((c) => /^(npx -y pnpm@|pnpm )/.test(c));
    expect(commands.length).toBeGreaterThan(8);
    expect(commands.map(checkPnpm).filter((r) => r !== 'ok')).toEqual([]);
    expect(
      commands.filter((c) => c.startsWith('pnpm ')),
      'a fresh machine has no pnpm: write npx -y pnpm@…',
    ).toEqual([]);
    // Commands a user types to run Kitty are all in the README itself.
    const inReadme = readmeCommands(README);
    for (const s of ['start', 'test', 'verify', 'build']) expect(inReadme).toContain(`npx -y ${rootPkg.packageManager} ${s}`);
  });

  it('the walkthrough runs against a live server, and runs again', { timeout: 120_000 }, async () => {
    const block = /## Five-minute walkthrough[\s\S]*?```sh\n([\s\S]*?)```/.exec(README)?.[1];
    expect(block, 'README has the walkthrough').toBeDefined();
    // Up to the discovery lines (the sandbox call there is refused on purpose); in POSIX sh, not only bash.
    const script = block!.split('# Discovery')[0]!.replaceAll('http://localhost:3000', server.url);
    for (const run of [1, 2]) {
      const { stdout } = await promisify(execFile)('sh', ['-c', script], { cwd: ROOT, timeout: 60_000 });
      expect(stdout, `run ${run}`).not.toContain('registration failed');
      expect(stdout, `run ${run}`).not.toContain('"ok":false');
      // join_group, add_expense and suggest_settlements answered; Bob owes Alice 30.00.
      expect(stdout.match(/"ok":true/g)?.length, `run ${run}`).toBe(3);
      expect(stdout, `run ${run}`).toContain('"amount_minor":3000');
    }
  });

  it('the MCP Inspector line runs as written from the repository root against a live server', { timeout: 300_000 }, async () => {
    const line = readmeCommands().find((c) => c.includes('mcp-inspector'));
    expect(line, 'README has an MCP Inspector command').toBeDefined();
    const { apiKey } = await server.agent('inspector');
    // As typed in a user's shell: without the npm_*/pnpm_* variables and node_modules/.bin paths of
    // the `pnpm test` that runs this (an inherited empty npm_config_yes turns npx's -y off).
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm|pnpm)_/i.test(k)));
    env.PATH = (process.env.PATH ?? '')
      .split(':')
      .filter((p) => !p.includes('node_modules'))
      .join(':');
    const run = promisify(execFile)('bash', ['-c', line!.replaceAll('http://localhost:3000', server.url)], {
      cwd: ROOT,
      env: { ...env, ALICE: apiKey },
      timeout: 240_000,
    });
    run.child.stdin?.end(); // nothing to answer: a prompt fails instead of waiting
    const { stdout } = await run;
    const tools = (JSON.parse(stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(tools).toContain('get_me');
    expect(tools).toContain('add_expense');
  });
});
