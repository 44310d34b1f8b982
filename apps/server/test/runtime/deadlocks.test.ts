/**
 * Lock order under mixed load: several agents in overlapping groups add expenses, record and
 * confirm payments, message, invite, decline, join and mark their inbox read all at once over REST.
 * PostgreSQL's own deadlock counter for the test database (pg_stat_database.deadlocks) must not
 * move, every call must succeed (no TRANSIENT_CONFLICT), balances must sum to zero and the inbox
 * counters must equal the items they count.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { verifyLedger } from '@kitty/core';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

type Agent = Awaited<ReturnType<TestServer['agent']>>;

/**
 * Deadlocks PostgreSQL counted for this database. With `flush`, every other backend of the database
 * is ended first and awaited, because a backend reports its counters when idle for a while or on exit.
 * Only the ended backends are awaited: the server reconnects at once (its pools, pg-boss's poller every
 * second, its LISTEN connection after 500 ms), and waiting for "no backend at all" could wait forever on
 * a busy machine. Before the load nothing can be pending (the setup runs serially).
 */
async function deadlocks(opts: { flush: boolean }): Promise<number> {
  const c = new pg.Client({ connectionString: s.databaseUrl });
  await c.connect();
  try {
    if (opts.flush) {
      // Listed first, then ended: in one WHERE clause PostgreSQL may call pg_terminate_backend before `pid <> …`.
      const { rows: others } = await c.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      const pids = others.map((r) => r.pid);
      await c.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [pids]);
      // Wait until the ended backends are gone, so their counters are flushed.
      for (const deadline = Date.now() + 60_000; ;) {
        const { rows } = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]);
        if (rows[0].n === 0) break;
        if (Date.now() > deadline) throw new Error(`backends ${pids.join(', ')} did not exit within 60 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    await c.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await c.query('SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()');
    return rows[0].n;
  } finally {
    await c.end();
  }
}

/** A deterministic pseudo-random sequence (mulberry32), so a failure can be replayed. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

it('mixed concurrent load: no deadlock, no transient conflict, ledger and inbox counters consistent', async () => {
  const call = async (a: Agent, tool: string, args: Record<string, unknown>) => {
    const r = await s.http(`/v1/tools/${tool}`, { body: { idempotency_key: `load-${randomUUID()}`, ...args }, apiKey: a.apiKey });
    if (!r.json?.ok) throw new Error(`${tool} → ${r.status} ${r.text.slice(0, 300)}`);
    return r.json.data;
  };
  const agents: Agent[] = [];
  for (let i = 0; i < 8; i++) agents.push(await s.agent(`load${i}`));
  // Everyone has everyone as a contact (targeted invites, direct ledgers accepted at once).
  for (const a of agents) for (const b of agents) if (a !== b) await call(a, 'add_contact', { handle: b.handle });
  const groupOf = async (members: Agent[], name: string) => {
    const g = (await call(members[0]!, 'create_group', { name, currency: 'EUR' })).group.group_id as string;
    const inv = (await call(members[0]!, 'create_invite', { group_id: g, max_uses: 50 })).invite.code;
    for (const m of members.slice(1)) await call(m, 'join_group', { code: inv });
    return { id: g, members };
  };
  const groups = [await groupOf(agents, 'All'), await groupOf(agents.slice(0, 5), 'Left'), await groupOf(agents.slice(3), 'Right')];
  for (let i = 0; i < agents.length; i += 2) {
    const d = await call(agents[i]!, 'open_direct_group', { handle: agents[i + 1]!.handle, currency: 'EUR' });
    groups.push({ id: d.group.group_id, members: [agents[i]!, agents[i + 1]!] });
  }

  const before = await deadlocks({ flush: false });
  const failures: string[] = [];
  let ops = 0;
  const worker = async (w: number) => {
    const rand = rng(1000 + w);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
    for (let i = 0; i < 24; i++) {
      const g = pick(groups);
      const me = pick(g.members);
      const other = pick(g.members.filter((m) => m !== me));
      const op = Math.floor(rand() * 8);
      try {
        if (op === 0 || op === 1) {
          await call(me, 'add_expense', { group_id: g.id, description: `load ${w}.${i}`, amount_minor: 100 + Math.floor(rand() * 5000) });
        } else if (op === 2) {
          // Payer records, payee confirms: a requires-action item created, then resolved, both sides notified.
          const p = (
            await call(me, 'record_payment', {
              group_id: g.id,
              to_handle: other.handle,
              amount_minor: 1 + Math.floor(rand() * 300),
              allow_overpayment: true,
            })
          ).payment.payment_id;
          await call(other, rand() < 0.7 ? 'confirm_payment' : 'reject_payment', { payment_id: p });
        } else if (op === 3) {
          await call(me, 'send_message', { group_id: g.id, body: `hello from ${w}.${i}` });
        } else if (op === 4) {
          await call(me, 'send_message', { to_handle: other.handle, body: `direct ${w}.${i}` });
        } else if (op === 5) {
          const inv = (await call(me, 'create_group', { name: `Side ${w}.${i}`, currency: 'EUR' })).group.group_id;
          const t = (await call(me, 'create_invite', { group_id: inv, target_handle: other.handle })).invite;
          if (rand() < 0.5) await call(other, 'join_group', { code: t.code });
          else await call(other, 'decline_invite', { invite_id: t.invite_id });
        } else if (op === 6) {
          await call(me, 'mark_inbox_read', { all: true });
        } else {
          await call(me, 'update_me', { description: `busy ${w}.${i}` });
        }
        ops++;
      } catch (e) {
        failures.push(String(e));
      }
    }
  };
  await Promise.all(Array.from({ length: 12 }, (_, w) => worker(w)));
  const after = await deadlocks({ flush: true });

  expect(failures).toEqual([]);
  expect(ops).toBe(12 * 24);
  expect(after - before).toBe(0);

  const ledger = await verifyLedger(s.kitty.services.prisma);
  expect(ledger.problems).toEqual([]);
  const drift = await s.kitty.services.prisma.$queryRaw<Array<{ handle: string }>>`
    SELECT a.handle FROM agents a
    WHERE a.inbox_unread <> (SELECT count(*) FROM inbox_items i WHERE i.agent_id = a.id AND i.read_at IS NULL)
       OR a.inbox_requires_action <> (SELECT count(*) FROM inbox_items i WHERE i.agent_id = a.id AND i.requires_action AND i.resolved_at IS NULL)`;
  expect(drift).toEqual([]);
}, 300_000);
