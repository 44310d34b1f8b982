/**
 * docs/event-examples.md: one real example of every event type, produced by running the tools (and,
 * for webhook.disabled, the delivery worker's disableWebhook) and read back with list_events. Ids,
 * handles and times are replaced by stable stand-ins so the page does not change from run to run.
 * The test fails when the page and the events differ (a new type, a changed field); regenerate with
 *   KITTY_WRITE_DOCS=1 npx vitest run test/events/examples.test.ts   (from packages/core)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';
import { groupWith } from '../ledger-helpers.ts';
import { EVENT_TYPES } from '../../src/kernel/events.ts';
import { disableWebhook } from '../../src/areas/webhooks/webhooks.ts';

const DOC = path.resolve(import.meta.dirname, '../../../../docs/event-examples.md');
let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

type Ev = { event_id: string; type: string; [k: string]: unknown };

async function feed(a: TestAgent): Promise<Ev[]> {
  const out: Ev[] = [];
  let after: string | undefined;
  for (;;) {
    const r = await h.call(a, 'list_events', { ...(after ? { after } : {}), limit: 100 });
    out.push(...r.events);
    if (r.events.length < 100) return out;
    after = r.next_cursor;
  }
}

/** Replaces what differs between runs (ids, handles, times, invite codes) with stable stand-ins, numbered by first appearance within the event. */
function stabilise(event: Ev, names: Record<string, string>): Ev {
  const ids = new Map<string, string>();
  const stand = (kind: string, v: string, make: (n: number) => string) => {
    const key = `${kind}:${v}`;
    if (!ids.has(key)) ids.set(key, make([...ids.keys()].filter((k) => k.startsWith(`${kind}:`)).length + 1));
    return ids.get(key)!;
  };
  const walk = (v: unknown, key = ''): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v !== 'string') return v;
    if (names[v]) return names[v];
    if (key === 'event_id' || key === 'cursor') return stand('event', v, (n) => `evt_example_${String(n).padStart(3, '0')}`);
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v))
      return stand('uuid', v, (n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
    if (/^\d{4}-\d{2}-\d{2}T/.test(v)) return '2026-11-25T12:00:00.000Z';
    if (/^\d{4}-\d{2}-\d{2}$/.test(v)) return '2026-11-25';
    if (key === 'code') return 'maple-river-lantern-orbit';
    return v.replace(/\b(ann|bob|cid|dan|eve)-[0-9a-f]{8}\b/g, '$1');
  };
  return walk(event) as Ev;
}

it('docs/event-examples.md shows a real example of every event type', async () => {
  const [ann, bob, cid, dan, eve] = await Promise.all(['ann', 'bob', 'cid', 'dan', 'eve'].map((p) => h.agent(p)));
  const everyone = [ann!, bob!, cid!, dan!, eve!];
  const g = await groupWith(h, [ann!, bob!, cid!, dan!, eve!], 'EUR', 'Lisbon trip');
  const x = await h.call(ann!, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 12000 });
  await h.call(bob!, 'update_expense', { expense_id: x.expense.expense_id, description: 'Dinner at Ramiro' });
  await h.call(ann!, 'delete_expense', { expense_id: x.expense.expense_id });
  await h.call(ann!, 'restore_expense', { expense_id: x.expense.expense_id });
  const p = await h.call(bob!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 2400 });
  await h.call(ann!, 'confirm_payment', { payment_id: p.payment.payment_id });
  const q = await h.call(cid!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 500 });
  await h.call(ann!, 'reject_payment', { payment_id: q.payment.payment_id, reason: 'not received' });
  const r = await h.call(cid!, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 400 });
  await h.call(cid!, 'cancel_payment', { payment_id: r.payment.payment_id });
  for (const a of [dan!, eve!]) {
    const settle = await h.call(a, 'record_payment', { group_id: g, to_handle: ann!.handle, amount_minor: 2400 });
    await h.call(ann!, 'confirm_payment', { payment_id: settle.payment.payment_id });
  }
  await h.call(ann!, 'set_member_role', { group_id: g, handle: bob!.handle, role: 'admin' });
  await h.call(ann!, 'update_group', { group_id: g, name: 'Lisbon trip 2026' });
  await h.call(ann!, 'send_message', { group_id: g, body: 'Taxi at 8?' });
  await h.call(ann!, 'remove_member', { group_id: g, handle: eve!.handle });
  await h.call(dan!, 'leave_group', { group_id: g });
  await h.call(ann!, 'add_contact', { handle: eve!.handle }).catch(() => undefined);
  await h.call(eve!, 'add_contact', { handle: ann!.handle }).catch(() => undefined);
  const inv = await h.call(ann!, 'create_invite', { group_id: g, target_handle: eve!.handle });
  await h.call(eve!, 'decline_invite', { invite_id: inv.invite.invite_id });
  const inv2 = await h.call(ann!, 'create_invite', { group_id: g, target_handle: eve!.handle });
  await h.call(ann!, 'revoke_invite', { invite_id: inv2.invite.invite_id });
  await h.call(bob!, 'open_direct_group', { handle: cid!.handle, currency: 'USD' });
  await h.call(cid!, 'open_direct_group', { handle: bob!.handle, currency: 'USD' });
  const done = await groupWith(h, [ann!, bob!], 'EUR', 'Ski weekend');
  await h.call(ann!, 'archive_group', { group_id: done });
  // An endpoint whose deliveries failed for the whole retry window (written directly: its address is not reachable here).
  const hook = await h.services.prisma.webhook.create({
    data: {
      agentId: ann!.agentId,
      url: 'https://hooks.example.com/kitty',
      eventTypes: [],
      secret: 'whsec_example',
      cursorTxid: 0n,
      cursorEventId: 0n,
    },
  });
  await h.services.prisma.$transaction((tx) => disableWebhook(tx, hook.id, 'HTTP 503 for 24 hours', new Date()));

  // The first example of each type, as the first recipient in this order saw it.
  const seen = new Map<string, Ev>();
  const names = Object.fromEntries(everyone.map((a, i) => [a.handle, ['ann', 'bob', 'cid', 'dan', 'eve'][i]!]));
  for (const a of everyone) for (const e of await feed(a)) if (!seen.has(e.type)) seen.set(e.type, stabilise(e, names));
  expect([...EVENT_TYPES].filter((t) => !seen.has(t))).toEqual([]);
  // `changed` names the expense's fields the call set, not the call's own idempotency_key.
  expect((seen.get('expense.updated')!.data as { changed: string[] }).changed).toEqual(['description']);

  const page = [
    '# Event examples',
    '',
    'One real event of each type, as `list_events`, `GET /v1/events` (SSE) and webhook deliveries carry it. Produced by',
    "running the tools in a test (packages/core/test/events/examples.test.ts), which fails when this page and Kitty's events",
    'differ; ids, handles and times are replaced by stable stand-ins. Amounts are integer minor units of the group currency.',
    'The fields of each type are described in [events.md](events.md).',
    '',
    ...EVENT_TYPES.flatMap((t) => [`## \`${t}\``, '', '```json', JSON.stringify(seen.get(t), null, 2), '```', '']),
  ].join('\n');
  if (process.env.KITTY_WRITE_DOCS === '1') writeFileSync(DOC, page);
  expect(readFileSync(DOC, 'utf8'), "docs/event-examples.md is out of date: regenerate it (see this file's header)").toBe(page);
});
