import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, startEmbeddedPostgres } from '../src/index.ts';

const PORT = 54329 + 1000 + (process.pid % 1000); // avoid the default port a dev server may use
const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'start-embedded.ts');

describe('embedded PostgreSQL', () => {
  let tmp: string;
  let dataDir: string;
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'kitty-pg-'));
    await chmod(tmp, 0o711); // as root, the "postgres" user must be able to enter it
    dataDir = path.join(tmp, 'data');
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('initialises, starts, serves a migrated database and stops', async () => {
    const pgHandle = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    try {
      expect(pgHandle.databaseUrl).toMatch(new RegExp(`^postgresql://postgres:[^@]+@127\\.0\\.0\\.1:${PORT}/kitty$`));
      expect((await applyMigrations(pgHandle.databaseUrl)).applied.length).toBeGreaterThan(0);
      expect(await scalar(pgHandle.databaseUrl, 'SELECT count(*)::int AS v FROM agents')).toBe(0);
    } finally {
      await pgHandle.stop();
    }
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
    console.log(lines.filter((l) => l.startsWith('[kitty]')).join('\n'));
  });

  it('reuses the data folder on the next start', async () => {
    lines.length = 0;
    const pgHandle = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    try {
      expect(lines.some((l) => l.includes('initdb took'))).toBe(false);
      expect((await applyMigrations(pgHandle.databaseUrl)).applied).toEqual([]);
    } finally {
      await pgHandle.stop();
    }
    console.log(lines.filter((l) => l.startsWith('[kitty]')).join('\n'));
  });

  it('tells of an exit it did not ask for, also to a listener added after it (the server died while Kitty still loaded)', async () => {
    const pgHandle = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    try {
      const early: unknown[] = [];
      pgHandle.onUnexpectedExit((code, signal) => early.push([code, signal]));
      process.kill(pgHandle.pid, 'SIGQUIT'); // immediate shutdown, not through stop()
      await expect.poll(() => early.length, { timeout: 15_000 }).toBe(1);
      const late: unknown[] = [];
      pgHandle.onUnexpectedExit((code, signal) => late.push([code, signal]));
      expect(late).toEqual(early);
    } finally {
      await pgHandle.stop(); // the server is gone: resolves without waiting for it
    }
  });

  it('recovers when the owning Node process was killed with -9 (server left running)', async () => {
    const child = spawn(process.execPath, [FIXTURE, dataDir, String(PORT)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`fixture exited early (${code})`)));
    });
    const { databaseUrl } = JSON.parse(first) as { databaseUrl: string };
    const orphanPid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // The server outlived its owner and still answers.
    expect(await scalar(databaseUrl, 'SELECT 1 AS v')).toBe(1);

    lines.length = 0;
    const pgHandle = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    try {
      expect(lines.some((l) => l.includes(`previous run (pid ${orphanPid})`))).toBe(true);
      expect(await scalar(pgHandle.databaseUrl, 'SELECT count(*)::int AS v FROM agents')).toBe(0);
      const newPid = Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      expect(newPid).not.toBe(orphanPid);
    } finally {
      await pgHandle.stop();
    }
  });

  it('removes a stale postmaster.pid (server gone, file left behind)', async () => {
    const pidFile = path.join(dataDir, 'postmaster.pid');
    await writeFile(pidFile, `2147483646\n${dataDir}\n0\n${PORT}\n\n127.0.0.1\n0 0\nready\n`);
    lines.length = 0;
    const pgHandle = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    try {
      expect(lines.some((l) => l.includes('removing stale'))).toBe(true);
      expect(await scalar(pgHandle.databaseUrl, 'SELECT 1 AS v')).toBe(1);
    } finally {
      await pgHandle.stop();
    }
    expect(existsSync(pidFile)).toBe(false);
  });

  it('picks a free port by default, keeps it for the data folder, and runs two data folders side by side', async () => {
    const a = await startEmbeddedPostgres({ dataDir, log });
    const bDir = path.join(tmp, 'second');
    const b = await startEmbeddedPostgres({ dataDir: bDir, log });
    try {
      expect(a.started && b.started).toBe(true);
      expect(a.port).not.toBe(b.port);
      expect(a.databaseUrl).toContain(`@127.0.0.1:${a.port}/kitty`);
      expect(await scalar(a.databaseUrl, 'SELECT current_setting($$data_directory$$) AS v')).toBe(dataDir);
      expect(await scalar(b.databaseUrl, 'SELECT current_setting($$data_directory$$) AS v')).toBe(bDir);
    } finally {
      await b.stop();
      await a.stop();
    }
    // Next start of the same folder: the same address again (the port is free).
    const again = await startEmbeddedPostgres({ dataDir, log });
    try {
      expect(again.port).toBe(a.port);
    } finally {
      await again.stop();
    }
  });

  it('attaches to the server already running for the data folder and never stops it', async () => {
    const owner = await startEmbeddedPostgres({ dataDir, log });
    try {
      lines.length = 0;
      const attached = await startEmbeddedPostgres({ dataDir, log });
      expect(attached.started).toBe(false);
      expect(attached.port).toBe(owner.port);
      expect(attached.pid).toBe(owner.pid);
      expect(lines.some((l) => l.includes('already running'))).toBe(true);
      await attached.stop();
      expect(await scalar(owner.databaseUrl, 'SELECT 1 AS v')).toBe(1);
    } finally {
      await owner.stop();
    }
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
  });

  it('refuses to create a database when asked to open an existing one only', async () => {
    const empty = path.join(tmp, 'empty');
    await expect(startEmbeddedPostgres({ dataDir: empty, create: false, log })).rejects.toThrow(/holds no Kitty database/);
    expect(existsSync(path.join(empty, 'PG_VERSION'))).toBe(false);
  });

  it('explains a port that is already taken', async () => {
    const a = await startEmbeddedPostgres({ dataDir, port: PORT, log });
    const other = path.join(tmp, 'other');
    try {
      await expect(startEmbeddedPostgres({ dataDir: other, port: PORT, log })).rejects.toThrow(/failed to start[\s\S]*(in use|could not)/i);
    } finally {
      await a.stop();
    }
  });
});

async function scalar(url: string, sql: string): Promise<unknown> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows[0].v;
  } finally {
    await c.end();
  }
}
