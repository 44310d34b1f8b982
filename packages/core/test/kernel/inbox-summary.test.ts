/**
 * The inbox summary on every response: correctness and cost.
 * Cost is asserted in pages, not milliseconds (a timed bound fails on a busy machine): the shared
 * buffers one call touches (EXPLAIN ANALYZE BUFFERS counts the SQL function's own statements too).
 * A scan or sort over the agent's thousands of items touches hundreds of pages; reading the top 3
 * in index order touches a handful. The timings are still logged, for the reader.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness } from '../harness.ts';
import { inboxSummaryFor } from '../../src/kernel/inbox-summary.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Shared buffers (hit + read) that one kitty_inbox_summary call touches, after a warm-up call. */
async function pagesTouched(agentId: string): Promise<number> {
  const db = h.services.prisma;
  await inboxSummaryFor(db, agentId);
  const rows = await db.$queryRawUnsafe<Array<{ 'QUERY PLAN': unknown }>>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT kitty_inbox_summary('${agentId}'::uuid)`,
  );
  const plan = (rows[0]!['QUERY PLAN'] as Array<{ Plan: Record<string, number>; Planning?: Record<string, number> }>)[0]!.Plan;
  return plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!;
}

async function time(n: number, f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f();
  return (performance.now() - t0) / n;
}

it('uses the counters, lists the most urgent first, and stays cheap on a large inbox', async () => {
  const a = await h.agent('big');
  const quiet = await h.agent('quiet');
  const db = h.services.prisma;
  // 5,000 old read items, then 4 unread (one requiring action)
  await db.$executeRaw`
    INSERT INTO inbox_items (id, agent_id, kind, text, read_at, created_at)
    SELECT gen_random_uuid(), ${a.agentId}::uuid, 'message', 'old ' || g, now(), now() - (g || ' minutes')::interval
    FROM generate_series(1, 5000) g`;
  await db.$executeRaw`
    INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id)
    VALUES (gen_random_uuid(), ${a.agentId}::uuid, 'message', 'msg 1', false, 5, null, null),
           (gen_random_uuid(), ${a.agentId}::uuid, 'invite_received', 'invite!', true, 1, 'invite', 'x'),
           (gen_random_uuid(), ${a.agentId}::uuid, 'message', 'msg 2', false, 5, null, null),
           (gen_random_uuid(), ${a.agentId}::uuid, 'member_joined', 'joined', false, 5, null, null)`;
  await db.agent.update({ where: { id: a.agentId }, data: { inboxUnread: 4, inboxRequiresAction: 1 } });
  await db.$executeRaw`ANALYZE inbox_items`;

  const s = await inboxSummaryFor(db, a.agentId);
  expect(s).toMatchObject({ unread: 4, requires_action: 1 });
  expect(s!.top).toHaveLength(3);
  expect(s!.top[0]).toBe('invite!');
  expect(await inboxSummaryFor(db, quiet.agentId)).toBeUndefined();

  const n = 200;
  const big = await time(n, () => inboxSummaryFor(db, a.agentId));
  const none = await time(n, () => inboxSummaryFor(db, quiet.agentId));
  const pk = await time(n, () => db.agent.findUnique({ where: { id: quiet.agentId }, select: { inboxUnread: true } }));
  console.log(
    `[bench] inbox summary (one query, indexed): ${big.toFixed(3)} ms/call with 5,004 items (4 unread); ${none.toFixed(3)} ms/call with none; a bare primary-key read ${pk.toFixed(3)} ms`,
  );
  // a count or scan over the 5,000 items (≈ 60 pages) per call would show up here
  const pages = await pagesTouched(a.agentId);
  console.log(`[bench] inbox summary with 5,004 items touches ${pages} shared pages per call`);
  expect(pages).toBeLessThan(30);
});

it('stays cheap when thousands of items are unread or still require action (read in index order, never sorted)', async () => {
  const a = await h.agent('busy');
  const db = h.services.prisma;
  // 20,000 unread items, a third of them still requiring action (payments to confirm, say), over 20,000 minutes.
  await db.$executeRaw`
    INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, created_at)
    SELECT gen_random_uuid(), ${a.agentId}::uuid, 'payment_to_confirm', 'item ' || g, g % 3 = 0, CASE WHEN g % 3 = 0 THEN 1 ELSE 5 END,
           now() - (g || ' minutes')::interval
    FROM generate_series(1, 20000) g`;
  await db.agent.update({ where: { id: a.agentId }, data: { inboxUnread: 20000, inboxRequiresAction: 6666 } });
  await db.$executeRaw`ANALYZE inbox_items`;
  const s = await inboxSummaryFor(db, a.agentId);
  // The newest items requiring action first: 3, 6, 9 minutes old.
  expect(s!.top).toEqual(['item 3', 'item 6', 'item 9']);
  const n = 100;
  const busy = await time(n, () => inboxSummaryFor(db, a.agentId));
  const pk = await time(n, () => db.agent.findUnique({ where: { id: a.agentId }, select: { inboxUnread: true } }));
  console.log(
    `[bench] inbox summary with 20,000 unread items (6,666 requiring action): ${busy.toFixed(3)} ms/call; a bare primary-key read ${pk.toFixed(3)} ms`,
  );
  // Sorting the 6,666 open items on every call (as before) reads every one of their pages (≈ 250); reading 3 rows in
  // index order touches a handful.
  const pages = await pagesTouched(a.agentId);
  // The measure tells the two apart: the same top 3 found by sorting the open items touches hundreds of pages.
  const sorted = await h.services.prisma.$queryRawUnsafe<Array<{ 'QUERY PLAN': Array<{ Plan: Record<string, number> }> }>>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT text FROM inbox_items WHERE agent_id = '${a.agentId}'::uuid
       AND requires_action AND resolved_at IS NULL ORDER BY length(text), created_at DESC LIMIT 3`,
  );
  const sortedPages = sorted[0]!['QUERY PLAN'][0]!.Plan['Shared Hit Blocks']! + sorted[0]!['QUERY PLAN'][0]!.Plan['Shared Read Blocks']!;
  console.log(`[bench] inbox summary with 20,000 unread items touches ${pages} shared pages per call; sorting instead: ${sortedPages}`);
  expect(pages).toBeLessThan(30);
  expect(sortedPages).toBeGreaterThan(100);
});

it('stays cheap when the newest unread items all still require action (payments waiting for confirmation)', async () => {
  const a = await h.agent('payee');
  const db = h.services.prisma;
  // One old unread notification, then 3,000 newer payments waiting for this agent's confirmation (unread, open).
  await db.$executeRaw`
    INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, created_at)
    VALUES (gen_random_uuid(), ${a.agentId}::uuid, 'member_joined', 'old news', false, 5, now() - interval '1 year')`;
  await db.$executeRaw`
    INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id, created_at)
    SELECT gen_random_uuid(), ${a.agentId}::uuid, 'payment_to_confirm', 'confirm ' || g, true, 1, 'payment', gen_random_uuid()::text,
           now() - (g || ' seconds')::interval
    FROM generate_series(1, 3000) g`;
  await db.agent.update({ where: { id: a.agentId }, data: { inboxUnread: 3001, inboxRequiresAction: 3000 } });
  await db.$executeRaw`ANALYZE inbox_items`;
  const s = await inboxSummaryFor(db, a.agentId);
  expect(s!.top).toEqual(['confirm 1', 'confirm 2', 'confirm 3']);
  // Finding the newest unread item that never required action must not step over the 3,000 open ones (≈ 3,000 heap
  // fetches, a hundred pages or more): an index that puts requires_action before read_at reaches it directly.
  const pages = await pagesTouched(a.agentId);
  console.log(`[bench] inbox summary with 3,000 open items newer than the newest notification touches ${pages} shared pages per call`);
  expect(pages).toBeLessThan(30);
});

it('orders items created at the same moment by id, newest id first, whatever order the rows are read in', async () => {
  const a = await h.agent('ties');
  const db = h.services.prisma;
  // Three unread notices created in one transaction (one now()), inserted in an order that is not their ids' order.
  const ids = ['00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000d', '00000000-0000-4000-8000-00000000000c'];
  await db.$transaction([
    ...ids.map(
      (id) => db.$executeRaw`
        INSERT INTO inbox_items (id, agent_id, kind, text, priority) VALUES (${id}::uuid, ${a.agentId}::uuid, 'message', ${`notice ${id.slice(-1)}`}, 5)`,
    ),
    db.$executeRaw`UPDATE agents SET inbox_unread = inbox_unread + 3 WHERE id = ${a.agentId}::uuid`,
  ]);
  const summary = await inboxSummaryFor(db, a.agentId);
  expect(summary!.top).toEqual(['notice d', 'notice c', 'notice b']);
});
