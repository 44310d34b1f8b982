/**
 * The whole catalogue (issue 4 "Proof"):
 * - it totals 64 tools, and the tools version (the ETag of GET /v1/tools) changes when a tool is added;
 * - registry-wide: every tool is driven through realistic states, and every suggested_next entry of
 *   every response starts with an existing tool name the caller's credential may call (scope-wise).
 *   A read-only credential (svc:read) is never pointed at a write tool.
 *
 * Adding a tool: give it a driver in DRIVERS below (the coverage check names tools without one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { appRouter, buildRegistry, type Registry } from '../../src/index.ts';
import { router, readTool } from '../../src/kernel/trpc.ts';
import { READ } from '../../src/kernel/meta.ts';
import { output } from '../../src/kernel/text.ts';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('catalogue', () => {
  it('totals exactly 64 tools', () => {
    const names = h.registry.catalogue.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBe(64);
  });

  it('the tools version changes when a tool is added, and only then', () => {
    const procedures = (appRouter._def as unknown as { procedures: Record<string, any> }).procedures;
    const same = buildRegistry(router({ ...procedures }));
    expect(same.version).toBe(h.registry.version);
    const dummy = readTool
      .meta({ area: 'test', title: 'Dummy', description: 'A tool that exists only in this test.', annotations: READ, errors: {} })
      .input(z.strictObject({}))
      .output(output({}))
      .query(() => ({ suggested_next: [] }));
    const bigger: Registry = buildRegistry(router({ ...procedures, zz_dummy_tool: dummy }));
    expect(bigger.catalogue).toHaveLength(h.registry.catalogue.length + 1);
    expect(bigger.version).not.toBe(h.registry.version);
    expect(bigger.version).toMatch(/^[0-9a-f]{32}$/);
  });
});

// ───────────────────────── registry-wide suggested_next ─────────────────────────

const called = new Set<string>();
const problems: string[] = [];

/** Checks one response's suggested_next for the agent that got it. */
function check(agent: TestAgent, tool: string, data: any): void {
  if (!Array.isArray(data?.suggested_next)) {
    problems.push(`${tool}: no suggested_next array`);
    return;
  }
  for (const entry of data.suggested_next as unknown[]) {
    const m = typeof entry === 'string' ? /^([a-z][a-z0-9_]*): \S/.exec(entry) : null;
    if (!m) {
      problems.push(`${tool}: entry ${JSON.stringify(entry)} is not "tool_name: why"`);
      continue;
    }
    const target = h.registry.tools.get(m[1]!);
    if (!target) problems.push(`${tool}: suggests unknown tool "${m[1]}" (${entry})`);
    else if (target.scope && !agent.auth.scopes.includes(target.scope))
      problems.push(`${tool}: suggests ${m[1]} needing ${target.scope} to a credential with ${agent.auth.scopes.join(',')}`);
  }
}

/** Calls a tool and checks its suggestions; only successes count as driven. */
async function call(agent: TestAgent, tool: string, args: Record<string, unknown> = {}): Promise<any> {
  const data = await h.call(agent, tool, args);
  check(agent, tool, data);
  called.add(tool);
  return data;
}
/** Calls a tool only if the catalogue has it (areas may land separately); undefined otherwise. */
async function maybe(agent: TestAgent, tool: string, args: Record<string, unknown> = {}): Promise<any> {
  return h.registry.has(tool) ? call(agent, tool, args) : undefined;
}
const readOnly = (a: TestAgent): TestAgent => ({ ...a, auth: { ...a.auth, scopes: ['svc:read'] } });

/** Every read tool with args valid in the given world, for calling in several states (and read-only). */
function readCalls(w: World): Array<[string, Record<string, unknown>]> {
  const calls: Array<[string, Record<string, unknown>]> = [
    ['get_me', {}],
    ['list_groups', {}],
    ['list_groups', { include_archived: true, limit: 1 }],
    ['get_agent', { handle: w.other.handle }],
    ['list_contacts', { include_blocked: true }],
    ['list_invites', {}],
    ['list_conversations', {}],
    ['get_inbox', {}],
    ['get_inbox', { filter: 'requires_action' }],
    ['list_currencies', {}],
    ['list_categories', {}],
    ['get_balance_summary', {}],
  ];
  if (w.groupId) {
    calls.push(
      ['get_group', { group_id: w.groupId }],
      ['list_messages', { group_id: w.groupId }],
      ['list_expenses', { group_id: w.groupId }],
      ['list_payments', { group_id: w.groupId }],
      ['get_balances', { group_id: w.groupId }],
      ['suggest_settlements', { group_id: w.groupId }],
      ['get_group_stats', { group_id: w.groupId, by: 'member' }],
      ['list_activity', { group_id: w.groupId }],
      ['list_events', {}],
    );
  }
  if (w.inviteCode) calls.push(['get_invite', { code: w.inviteCode }]);
  if (w.expenseId) calls.push(['get_expense', { expense_id: w.expenseId }]);
  if (w.paymentId) calls.push(['get_payment', { payment_id: w.paymentId }]);
  if (w.otherHandleForMessages) calls.push(['list_messages', { with_handle: w.otherHandleForMessages }]);
  return calls;
}
interface World {
  other: TestAgent;
  groupId?: string;
  inviteCode?: string;
  expenseId?: string;
  paymentId?: string;
  otherHandleForMessages?: string;
}
async function readEverything(agent: TestAgent, w: World) {
  for (const [tool, args] of readCalls(w)) {
    await maybe(agent, tool, args);
    // the same state seen through a read-only credential must never suggest a write tool
    if (h.registry.has(tool)) check(readOnly(agent), tool, await h.call(readOnly(agent), tool, args));
  }
}

describe('suggested_next names only existing tools the caller may call', () => {
  it('across realistic states of every tool', async () => {
    const ann = await h.agent('ann');
    const bob = await h.agent('bob');
    const cat = await h.agent('cat');
    const anonymousView = await h.call(null, 'register_agent', { handle: `reg-${Date.now().toString(36)}`, display_name: 'Reg' });
    check(ann, 'register_agent', anonymousView);
    called.add('register_agent');

    // empty state
    await readEverything(ann, { other: bob });

    // contacts, blocking
    await call(ann, 'add_contact', { handle: bob.handle, alias: 'B' });
    await call(ann, 'add_contact', { handle: bob.handle }); // already a contact
    await call(ann, 'add_contact', { handle: cat.handle });
    await call(bob, 'add_contact', { handle: ann.handle });
    await call(ann, 'update_contact', { handle: bob.handle, note: 'n' });
    await call(ann, 'remove_contact', { handle: cat.handle });
    await call(ann, 'block_agent', { handle: cat.handle });
    await readEverything(ann, { other: cat }); // a blocked agent's profile
    await call(ann, 'unblock_agent', { handle: cat.handle });
    await call(ann, 'update_me', { description: 'travels' });

    // groups, invites, membership
    const g = (await call(ann, 'create_group', { name: 'Trip', currency: 'EUR' })).group.group_id;
    await readEverything(ann, { other: bob, groupId: g }); // a group of one
    await call(ann, 'update_group', { group_id: g, description: 'summer' });
    const t1 = (await call(ann, 'create_invite', { group_id: g, target_handle: bob.handle })).invite;
    await readEverything(bob, { other: ann, inviteCode: t1.code }); // an invite waiting for bob
    await call(bob, 'get_invite', { invite_id: t1.invite_id });
    await call(cat, 'get_invite', { code: t1.code }); // not for cat
    await call(bob, 'decline_invite', { invite_id: t1.invite_id });
    const t2 = (await call(ann, 'create_invite', { group_id: g, target_handle: bob.handle })).invite;
    await call(bob, 'join_group', { code: t2.code });
    await call(bob, 'join_group', { code: t2.code, idempotency_key: 'replayed-join-1' });
    await call(bob, 'get_invite', { code: t2.code }); // already a member, exhausted
    const open = (await call(ann, 'create_invite', { group_id: g, max_uses: 5 })).invite;
    await call(cat, 'join_group', { code: open.code });
    await call(ann, 'revoke_invite', { invite_id: open.invite_id });
    await call(ann, 'set_member_role', { group_id: g, handle: bob.handle, role: 'admin' });
    await call(bob, 'set_member_role', { group_id: g, handle: bob.handle, role: 'member' }); // steps down
    await call(ann, 'remove_member', { group_id: g, handle: cat.handle });
    const direct = (await call(ann, 'open_direct_group', { handle: bob.handle, currency: 'EUR' })).group.group_id;
    await call(bob, 'open_direct_group', { handle: ann.handle, currency: 'EUR' });

    // messages and inbox
    await call(ann, 'send_message', { to_handle: bob.handle, body: 'hello' });
    await call(ann, 'send_message', { group_id: g, body: 'trip plans' });
    await call(bob, 'send_message', { group_id: direct, body: 'ledger note' });
    await readEverything(bob, { other: ann, groupId: g, otherHandleForMessages: ann.handle });
    const conv = (await call(bob, 'list_conversations', {})).conversations[0].conversation_id;
    await call(bob, 'list_messages', { conversation_id: conv });
    await call(bob, 'mark_inbox_read', { conversation_id: conv });
    const someItem = (await call(bob, 'get_inbox', { filter: 'unread' })).items[0];
    if (someItem) await call(bob, 'mark_inbox_read', { item_ids: [someItem.item_id] });

    // the ledger (its tools may land in their own commit: each is driven when present)
    let expenseId: string | undefined;
    let paymentId: string | undefined;
    const e = await maybe(ann, 'add_expense', { group_id: g, description: 'Dinner', amount_minor: 3000 });
    if (e) {
      expenseId = e.expense?.expense_id;
      await maybe(bob, 'update_expense', { expense_id: expenseId, description: 'Dinner and drinks' });
      await maybe(ann, 'send_message', { about: { type: 'expense', id: expenseId }, body: 'with tip' });
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
      const rc = await maybe(bob, 'attach_receipt', { expense_id: expenseId, filename: 'r.png', content_base64: png });
      await maybe(ann, 'attach_receipt', { expense_id: expenseId, filename: 'r2.png', content_base64: png });
      await maybe(bob, 'remove_receipt', { receipt_id: rc.receipt.receipt_id });
      const tmp = await maybe(ann, 'add_expense', { group_id: g, description: 'Taxi', amount_minor: 1200 });
      await maybe(ann, 'delete_expense', { expense_id: tmp.expense.expense_id });
      await maybe(ann, 'restore_expense', { expense_id: tmp.expense.expense_id });
      await maybe(ann, 'delete_expense', { expense_id: tmp.expense.expense_id });
    }
    const p = await maybe(bob, 'record_payment', { group_id: g, to_handle: ann.handle, amount_minor: 1000 });
    if (p) {
      paymentId = p.payment?.payment_id;
      // ann now has a payment awaiting confirmation: every read view of that state
      await readEverything(ann, { other: bob, groupId: g, expenseId, paymentId });
      // the state-specific suggestion: the payee is pointed at confirm_payment with this payment's id
      const waiting = await call(ann, 'get_inbox', { filter: 'requires_action' });
      expect(waiting.suggested_next).toContain(
        `confirm_payment: confirm the payment you received (payment_id ${paymentId}), or reject_payment if it never arrived`,
      );
      await maybe(ann, 'confirm_payment', { payment_id: paymentId });
      const p2 = await maybe(bob, 'record_payment', { group_id: g, to_handle: ann.handle, amount_minor: 1 });
      await maybe(ann, 'reject_payment', { payment_id: p2.payment.payment_id });
      const p3 = await maybe(bob, 'record_payment', { group_id: g, to_handle: ann.handle, amount_minor: 1 });
      await maybe(bob, 'cancel_payment', { payment_id: p3.payment.payment_id });
    }
    await readEverything(bob, { other: ann, groupId: g, expenseId, paymentId });
    await maybe(ann, 'export_group', { group_id: g, format: 'json' });
    await maybe(ann, 'import_expenses', {
      group_id: g,
      format: 'splitwise',
      csv: `Date,Description,Category,Cost,Currency,${ann.handle},${bob.handle}\n2026-01-02,Groceries,General,10.00,EUR,5.00,-5.00\n`,
    });

    // settle everything, then leave and archive
    const balances = h.registry.has('get_balances') ? await call(ann, 'get_balances', { group_id: g }) : undefined;
    void balances;
    const plan = await maybe(ann, 'suggest_settlements', { group_id: g });
    for (const tr of plan?.transfers ?? []) {
      const from = [ann, bob].find((a) => a.handle === (tr.from?.handle ?? tr.from_handle));
      const to = [ann, bob].find((a) => a.handle === (tr.to?.handle ?? tr.to_handle));
      if (from && to)
        await maybe(to, 'record_payment', { group_id: g, from_handle: from.handle, to_handle: to.handle, amount_minor: tr.amount_minor });
    }
    const dg = (await call(ann, 'create_group', { name: 'Short', currency: 'EUR' })).group.group_id;
    const inv = (await call(ann, 'create_invite', { group_id: dg })).invite;
    await call(bob, 'join_group', { code: inv.code });
    await call(bob, 'leave_group', { group_id: dg });
    await call(ann, 'archive_group', { group_id: dg });
    await readEverything(ann, { other: bob, groupId: dg }); // an archived group
    await readEverything(bob, { other: ann }); // after leaving; inbox has "archived"/"left" items
    const helperKey = (await call(ann, 'create_api_key', { scopes: ['svc:read'], label: 'helper', expires_in: '30d' })).key;
    await call(ann, 'list_api_keys', {});
    check(readOnly(ann), 'list_api_keys', await h.call(readOnly(ann), 'list_api_keys', {}));
    await call(ann, 'revoke_api_key', { key_id: helperKey.key_id });
    // Webhook endpoints (a faked public address: no network in tests).
    h.services.resolveHost = async () => [{ address: '93.184.216.34', family: 4 }];
    const hook = (await call(ann, 'create_webhook', { url: 'https://hooks.example/kitty', event_types: ['expense.created'] })).webhook;
    await call(ann, 'list_webhooks', {});
    check(readOnly(ann), 'list_webhooks', await h.call(readOnly(ann), 'list_webhooks', {}));
    await call(ann, 'update_webhook', { webhook_id: hook.webhook_id, paused: true });
    await call(ann, 'test_webhook', { webhook_id: hook.webhook_id });
    await call(ann, 'rotate_webhook_secret', { webhook_id: hook.webhook_id });
    await call(ann, 'delete_webhook', { webhook_id: hook.webhook_id });
    delete h.services.resolveHost;
    await call(ann, 'rotate_api_key', {});

    expect([...new Set(problems)]).toEqual([]);
    const missing = h.registry.catalogue.map((t) => t.name).filter((n) => !called.has(n));
    expect(missing, `tools never driven successfully (add them to this test): ${missing.join(', ')}`).toEqual([]);
  });
});
