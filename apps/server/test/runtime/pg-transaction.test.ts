import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createTestDatabase, type Db } from '@kitty/db';
import { inPgTransaction } from '../../src/runtime/pg-transaction.ts';

describe('inPgTransaction', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.databaseUrl, { poolMax: 2 });
    await db.pool.query('CREATE TABLE tx_probe (id int8 PRIMARY KEY, at timestamptz NOT NULL, doc jsonb NOT NULL)');
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('commits what fn wrote when it resolves, and answers its result', async () => {
    const n = await inPgTransaction(db.pool, async ({ client }) => {
      await client.query(`INSERT INTO tx_probe VALUES (1, now(), '{"a":1}')`);
      return 7;
    });
    expect(n).toBe(7);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM tx_probe WHERE id = 1')).rows[0].n).toBe(1);
  });

  it('rolls back everything fn wrote when it throws, rethrows, and gives the connection back', async () => {
    await expect(
      inPgTransaction(db.pool, async ({ client }) => {
        await client.query(`INSERT INTO tx_probe VALUES (2, now(), '{}')`);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    // A failed statement aborts the transaction; ROLLBACK still ends it.
    await expect(
      inPgTransaction(db.pool, async ({ client }) => {
        await client.query(`INSERT INTO tx_probe VALUES (3, now(), '{}')`);
        await client.query('SELECT 1/0');
      }),
    ).rejects.toThrow(/division by zero/);
    expect((await db.pool.query('SELECT array_agg(id ORDER BY id)::text AS ids FROM tx_probe')).rows[0].ids).toBe('{1}');
    // Both connections of the pool of 2 are free again.
    expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
  });

  it('$queryRaw binds template values as $1..$n and reads int8 as bigint, timestamptz as Date, jsonb parsed', async () => {
    const rows = await inPgTransaction(
      db.pool,
      (tx) =>
        tx.$queryRaw<Array<{ id: bigint; at: Date; doc: unknown; big: bigint; label: string }>>`
        SELECT id, at, doc, ${9007199254740993n}::int8 AS big, ${"it's"}::text AS label FROM tx_probe WHERE id = ${1n}`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(1n);
    expect(rows[0]!.big).toBe(9007199254740993n);
    expect(rows[0]!.at).toBeInstanceOf(Date);
    expect(rows[0]!.doc).toEqual({ a: 1 });
    expect(rows[0]!.label).toBe("it's");
  });
});
