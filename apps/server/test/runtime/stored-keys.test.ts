import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createTestDatabase, type Db } from '@kitty/db';
import { keepStoredKeys, readStoredKeys } from '../../src/runtime/stored-keys.ts';
import { loadAuthServerKeys } from '../../src/oauth/keys.ts';

// Start-up reads its key rows with plain SQL (no Prisma query before listen): the same rows Prisma reads and writes.
describe('stored key rows (oauth_payloads, type KittyKeys)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.databaseUrl, { poolMax: 4 });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('the first writer wins, also when several start together, and Prisma reads the same payload', async () => {
    expect(await readStoredKeys(db.pool, 'test-row')).toBeUndefined();
    const kept = await Promise.all([1, 2, 3].map((n) => keepStoredKeys(db.pool, 'test-row', { secret: `s${n}` })));
    expect(new Set(kept.map((k) => k.secret)).size).toBe(1);
    expect(await keepStoredKeys(db.pool, 'test-row', { secret: 'later' })).toEqual(kept[0]);
    const row = await db.prisma.oAuthPayload.findUniqueOrThrow({ where: { type_id: { type: 'KittyKeys', id: 'test-row' } } });
    expect(row.payload).toEqual(kept[0]);
  });

  it('the authorization server keys are generated once and then read back unchanged', async () => {
    const first = await loadAuthServerKeys(db.pool, {});
    expect(first.jwks.keys[0]).toMatchObject({ alg: 'ES256', use: 'sig' });
    expect(first.cookieKeys).toHaveLength(1);
    expect(await loadAuthServerKeys(db.pool, {})).toEqual(first);
  });
});
