/**
 * createDb: queries that Prisma (or our code) sends concurrently inside one interactive
 * transaction run one after another on its connection, so node-postgres never queues them (it
 * warns "client.query() when the client is already executing a query"; the shared test setup
 * fails any test file that triggers that warning).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createTestDatabase, type Db } from '../src/index.ts';
import { statementName, MAX_NAMED_STATEMENTS } from '../src/client.ts';

describe('createDb', () => {
  let dbh: { databaseUrl: string; drop(): Promise<void> };
  let db: Db;
  beforeAll(async () => {
    dbh = await createTestDatabase();
    db = createDb(dbh.databaseUrl, { poolMax: 2 });
  });
  afterAll(async () => {
    await db?.close();
    await dbh?.drop();
  });

  it('loads three relations of a row inside a transaction without the pg warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const agent = await db.prisma.agent.create({ data: { handle: `tx-${Date.now()}`, displayName: 'Tx' } });
      const group = await db.prisma.group.create({ data: { name: 'Tx group', currency: 'EUR', createdById: agent.id } });
      const invite = await db.prisma.invite.create({
        data: {
          groupId: group.id,
          code: 'a b c d',
          codeKey: `k-${Date.now()}`,
          createdById: agent.id,
          targetId: agent.id,
          expiresAt: new Date(Date.now() + 3_600_000),
          maxUses: 1,
        },
      });
      // Prisma fetches `group`, `createdBy` and `target` with three queries sent at once; in a
      // transaction they all go to its single connection (pg warns from the third on).
      const loaded = await db.prisma.$transaction((tx) =>
        tx.invite.findUniqueOrThrow({
          where: { id: invite.id },
          include: { group: { select: { name: true } }, createdBy: { select: { handle: true } }, target: { select: { handle: true } } },
        }),
      );
      expect([loaded.group.name, loaded.createdBy.handle, loaded.target?.handle]).toEqual(['Tx group', agent.handle, agent.handle]);
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(warnings.filter((m) => m.includes('already executing a query'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('generated client', () => {
  it('loads the query compiler from its .wasm file, not from the base64 string module (9 MB less heap)', async () => {
    const { readFileSync, statSync } = await import('node:fs');
    const internal = new URL('../src/generated/prisma/internal/', import.meta.url);
    const source = readFileSync(new URL('class.ts', internal), 'utf8');
    expect(source).not.toMatch(/wasm-base64/);
    const file = /new URL\('\.\/(query_compiler_\w+\.postgresql\.wasm)', import\.meta\.url\)/.exec(source)?.[1];
    expect(file).toBeDefined();
    expect(statSync(new URL(file!, internal)).size).toBeGreaterThan(1_000_000);
  });
});

describe('prepared-statement names', () => {
  it('names each fixed query shape once, never shapes that vary with the data, and at most MAX_NAMED_STATEMENTS', () => {
    const fixed = 'SELECT "id" FROM "agents" WHERE "id" = $1';
    expect(statementName(fixed)).toMatch(/^k_/);
    expect(statementName(fixed)).toBe(statementName(fixed));
    expect(statementName('SELECT 1 FROM "agents" WHERE "id" IN ($1,$2,$3)')).toBeUndefined();
    expect(statementName('INSERT INTO "t" ("a") VALUES ($1), ($2)')).toBeUndefined();
    for (let i = 0; i < MAX_NAMED_STATEMENTS + 50; i++) statementName(`SELECT ${i} AS n WHERE $1::int > 0`);
    expect(statementName(`SELECT 'one more' WHERE $1::int > 0`)).toBeUndefined();
    expect(statementName(fixed)).toMatch(/^k_/); // named before the cap: keeps its name
  });

  it('a pooled connection keeps no prepared statement per IN-list length', async () => {
    const dbh = await createTestDatabase();
    const one = createDb(dbh.databaseUrl, { poolMax: 1 });
    try {
      for (let n = 1; n <= 40; n++) {
        const ids = Array.from({ length: n }, () => crypto.randomUUID());
        await one.prisma.agent.findMany({ where: { id: { in: ids } }, select: { id: true } });
      }
      const { rows } = await one.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
      expect(rows[0]!.n).toBeLessThan(5);
    } finally {
      await one.close();
      await dbh.drop();
    }
  });
});
