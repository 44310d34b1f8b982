/**
 * kitty_event_horizon widens running transactions' 32-bit ids with the snapshot's epoch (kitty_widen_xid). A
 * transaction that took its id after the snapshot must be left out, not moved an epoch down: that made the horizon
 * negative under concurrent writes, and a webhook created at that moment got a cursor it could never leave.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const widen = async (xmax: bigint, xid32: bigint) =>
  (await h.services.pool.query<{ v: string | null }>('SELECT kitty_widen_xid($1, $2)::text AS v', [xmax.toString(), xid32.toString()]))
    .rows[0]!.v;

it('keeps an older id, leaves out one that began after the snapshot, moves only a previous-epoch id down', async () => {
  const E = 1n << 32n;
  expect(await widen(1000n, 990n)).toBe('990');
  expect(await widen(1000n, 1000n)).toBeNull(); // began after the snapshot (was -4294966296)
  expect(await widen(1000n, 1005n)).toBeNull();
  expect(await widen(3n * E + 1000n, 1005n)).toBeNull();
  expect(await widen(3n * E + 1000n, 990n)).toBe(String(3n * E + 990n));
  // just after a wrap: xmax in epoch 3 with a small low half, a transaction still running from epoch 2
  expect(await widen(3n * E + 5n, E - 10n)).toBe(String(2n * E + E - 10n));
});

it('the horizon is never negative and never above the next id, with transactions running beside it', async () => {
  const clients = await Promise.all(Array.from({ length: 4 }, () => h.services.pool.connect()));
  try {
    for (const c of clients) {
      await c.query('BEGIN');
      await c.query('SELECT pg_current_xact_id()');
    }
    for (let i = 0; i < 50; i++) {
      const r = await h.services.pool.query<{ horizon: string; next: string }>(
        'SELECT kitty_event_horizon()::text AS horizon, pg_snapshot_xmax(pg_current_snapshot())::text AS next',
      );
      expect(BigInt(r.rows[0]!.horizon)).toBeGreaterThan(0n);
      expect(BigInt(r.rows[0]!.horizon)).toBeLessThanOrEqual(BigInt(r.rows[0]!.next));
    }
  } finally {
    for (const c of clients) {
      await c.query('ROLLBACK');
      c.release();
    }
  }
});
