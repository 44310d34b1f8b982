/**
 * End-to-end scenarios against the running server, each driven twice: over REST with the
 * typed client, and over MCP with the official SDK client. Same tools, same results, same
 * error envelope. After each scenario the ledger invariants are verified (balances sum to
 * zero, stored balances equal the history).
 *
 * - issue 3: a trip with four agents, mixed splits, a foreign-currency expense, a refund,
 *   partial payments, settle-up by suggestions, archive.
 * - issue 4: two agents meet by handle, become contacts, open a direct ledger, a targeted invite
 *   is previewed and declined, a second is accepted, messages flow, inbox counts rise and fall.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KittyError } from '@kitty/client';
import { verifyLedger } from '@kitty/core';
import { startTestServer, type TestServer } from '../server-harness.ts';

let s: TestServer;
const mcpClients: Client[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  for (const c of mcpClients) await c.close().catch(() => {});
  await s?.close();
});

/** The failure both transports report: the error envelope's code and details. */
class CallError extends Error {
  readonly code: string;
  readonly details: any;
  constructor(code: string, details: any) {
    super(code);
    this.code = code;
    this.details = details;
  }
}

interface Actor {
  handle: string;
  agentId: string;
  call(tool: string, args?: Record<string, unknown>): Promise<any>;
}

type Transport = 'rest' | 'mcp';

async function actor(transport: Transport, prefix: string): Promise<Actor> {
  const a = await s.agent(prefix);
  if (transport === 'rest') {
    return {
      handle: a.handle,
      agentId: a.agentId,
      async call(tool, args = {}) {
        try {
          return await a.client.call(tool, args);
        } catch (e) {
          if (e instanceof KittyError) throw new CallError(e.code, e.details);
          throw e;
        }
      },
    };
  }
  const client = new Client({ name: 'kitty-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${a.apiKey}` } } }),
  );
  mcpClients.push(client);
  return {
    handle: a.handle,
    agentId: a.agentId,
    async call(tool, args = {}) {
      const desc = s.kitty.registry.tools.get(tool);
      const withKey = desc?.kind === 'write' && !('idempotency_key' in args) ? { ...args, idempotency_key: `mcp-${randomUUID()}` } : args;
      const r = await client.callTool({ name: tool, arguments: withKey });
      if (r.isError) {
        const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
        const env = JSON.parse(text);
        expect(env.ok).toBe(false);
        throw new CallError(env.error.code, env.error.details);
      }
      // The text copy carries the same JSON as structuredContent.
      const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
      expect(JSON.parse(text)).toEqual(r.structuredContent);
      return r.structuredContent;
    },
  };
}

async function failCode(p: Promise<unknown>): Promise<CallError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CallError) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}

async function expectLedgerOk(groupId: string) {
  const report = await verifyLedger(s.kitty.services.prisma, { groupId });
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  const members = await s.kitty.services.prisma.membership.findMany({ where: { groupId } });
  expect(members.reduce((sum, m) => sum + m.balanceMinor, 0n)).toBe(0n);
}

for (const transport of ['rest', 'mcp'] as const) {
  describe(`trip scenario over ${transport.toUpperCase()}`, () => {
    it('four agents, mixed splits, foreign currency, refund, partial payments, settle-up, archive', async () => {
      const [ana, ben, cai, dee] = await Promise.all(['ana', 'ben', 'cai', 'dee'].map((p) => actor(transport, p)));
      const g = await ana!.call('create_group', { name: 'Alps trip', currency: 'EUR' });
      const gid = g.group.group_id;
      expect(g.suggested_next[0]).toMatch(/^create_invite/);
      const inv = await ana!.call('create_invite', { group_id: gid, max_uses: 3 });
      for (const who of [ben!, cai!, dee!]) {
        const j = await who.call('join_group', { code: inv.invite.code });
        expect(j.group.group_id).toBe(gid);
      }
      // Equal split of 100.00 among four: 25.00 each.
      await ana!.call('add_expense', { group_id: gid, description: 'Groceries', amount_minor: 10000 });
      await expectLedgerOk(gid);
      // Exact split paid by Ben.
      await ben!.call('add_expense', {
        group_id: gid,
        description: 'Ski passes',
        amount_minor: 24000,
        split: {
          method: 'exact',
          participants: [
            { handle: ana!.handle, amount_minor: 6000 },
            { handle: ben!.handle, amount_minor: 6000 },
            { handle: cai!.handle, amount_minor: 12000 },
          ],
        },
      });
      // Percent split that cannot round evenly: 100.01 at 33.33/33.33/33.34.
      await cai!.call('add_expense', {
        group_id: gid,
        description: 'Fondue',
        amount_minor: 10001,
        split: {
          method: 'percent',
          participants: [
            { handle: ana!.handle, percent: '33.33' },
            { handle: cai!.handle, percent: '33.33' },
            { handle: dee!.handle, percent: '33.34' },
          ],
        },
      });
      // Shares, with two payers.
      await dee!.call('add_expense', {
        group_id: gid,
        description: 'Chalet',
        amount_minor: 90000,
        payers: [
          { handle: dee!.handle, amount_minor: 60000 },
          { handle: ana!.handle, amount_minor: 30000 },
        ],
        split: {
          method: 'shares',
          participants: [
            { handle: ana!.handle, shares: 2 },
            { handle: ben!.handle, shares: 1 },
            { handle: cai!.handle, shares: 1 },
            { handle: dee!.handle, shares: 2 },
          ],
        },
      });
      // Foreign currency: CHF 45.50 at 1.0523 EUR/CHF = 47.88 EUR (rounded half away from zero).
      const fx = await ben!.call('add_expense', {
        group_id: gid,
        description: 'Cable car',
        original_currency: 'CHF',
        original_amount_minor: 4550,
        exchange_rate: '1.0523',
      });
      expect(fx.expense.amount_minor).toBe(4788);
      // A refund: negative amount, split equally.
      const refund = await ana!.call('add_expense', { group_id: gid, description: 'Groceries refund', amount_minor: -2002 });
      expect(refund.expense.amount_minor).toBe(-2002);
      await expectLedgerOk(gid);

      // A split that does not add up is refused with the field named; nothing is written.
      const bad = await failCode(
        ana!.call('add_expense', {
          group_id: gid,
          description: 'Bad',
          amount_minor: 1000,
          split: {
            method: 'percent',
            participants: [
              { handle: ana!.handle, percent: 50 },
              { handle: ben!.handle, percent: 49 },
            ],
          },
        }),
      );
      expect(bad.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(bad.details.issues)).toContain('split');

      // Partial payment: the biggest debtor pays half of one suggested transfer; the payee confirms.
      const plan = await ben!.call('suggest_settlements', { group_id: gid });
      expect(plan.transfers.length).toBeGreaterThan(0);
      expect(plan.transfers.length).toBeLessThanOrEqual(3);
      const actors = new Map([ana!, ben!, cai!, dee!].map((x) => [x.handle, x]));
      const t0 = plan.transfers[0];
      const payer = actors.get(t0.from.handle)!;
      const payee = actors.get(t0.to.handle)!;
      const half = Math.floor(t0.amount_minor / 2);
      const p1 = await payer.call('record_payment', { group_id: gid, to_handle: payee.handle, amount_minor: half, note: 'first half' });
      expect(p1.payment.status).toBe('pending');
      // Pending payments show up but do not move balances; leaving is blocked for those involved.
      const pendingView = await payer.call('get_balances', { group_id: gid });
      expect(pendingView.members.find((m: any) => m.handle === payer.handle).balance_pending_minor).toBe(half);
      expect((await failCode(payer.call('leave_group', { group_id: gid }))).code).toBe('NOT_SETTLED');
      // The payee's inbox asks for confirmation, and suggested_next names the payment.
      const inbox = await payee.call('get_inbox', { filter: 'requires_action' });
      expect(inbox.items.some((i: any) => JSON.stringify(i).includes(p1.payment.payment_id))).toBe(true);
      // A third party cannot confirm.
      const third = [ana!, ben!, cai!, dee!].find((x) => x !== payer && x !== payee)!;
      expect((await failCode(third.call('confirm_payment', { payment_id: p1.payment.payment_id }))).code).toBe('FORBIDDEN');
      const confirmed = await payee.call('confirm_payment', { payment_id: p1.payment.payment_id });
      expect(confirmed.payment.status).toBe('confirmed');
      expect((await failCode(payer.call('cancel_payment', { payment_id: p1.payment.payment_id }))).code).toMatch(
        /^(PAYMENT_NOT_PENDING|INVALID_STATE)$/,
      );
      await expectLedgerOk(gid);

      // Settle up by following the suggestions, each recorded by its payee (confirmed at once).
      for (let round = 0; round < 5; round++) {
        const next = await ana!.call('suggest_settlements', { group_id: gid });
        if (next.transfers.length === 0) break;
        for (const t of next.transfers) {
          const r = await actors
            .get(t.to.handle)!
            .call('record_payment', { group_id: gid, from_handle: t.from.handle, to_handle: t.to.handle, amount_minor: t.amount_minor });
          expect(r.payment.status).toBe('confirmed');
        }
      }
      const final = await ana!.call('get_balances', { group_id: gid });
      for (const m of final.members) expect(m.balance_minor).toBe(0);
      await expectLedgerOk(gid);

      const archived = await ana!.call('archive_group', { group_id: gid });
      expect(archived.group.archived).toBe(true);
      expect((await failCode(ben!.call('add_expense', { group_id: gid, description: 'Late', amount_minor: 100 }))).code).toBe(
        'GROUP_ARCHIVED',
      );
      await expectLedgerOk(gid);
    });
  });

  describe(`network scenario over ${transport.toUpperCase()}`, () => {
    it('meet by handle, contacts, direct ledger, targeted invites declined and accepted, messages, inbox', async () => {
      const [kim, lou] = await Promise.all([actor(transport, 'kim'), actor(transport, 'lou')]);
      const profile = await kim!.call('get_agent', { handle: lou!.handle });
      expect(profile.agent.handle).toBe(lou!.handle);
      expect(JSON.stringify(profile)).not.toContain('api_key');

      await kim!.call('add_contact', { handle: lou!.handle, alias: 'Lou from the trip' });
      await lou!.call('add_contact', { handle: kim!.handle });
      const louInbox0 = await lou!.call('get_inbox', {});
      expect(louInbox0.unread).toBeGreaterThanOrEqual(1); // "kim added you as a contact"

      const direct = await kim!.call('open_direct_group', { handle: lou!.handle, currency: 'EUR' });
      expect(direct.group.kind).toBe('direct');
      expect(direct.group.member_count).toBe(2);
      const again = await lou!.call('open_direct_group', { handle: kim!.handle, currency: 'EUR' });
      expect(again.group.group_id).toBe(direct.group.group_id);

      const g = await kim!.call('create_group', { name: 'Book club', currency: 'EUR' });
      const inv1 = await kim!.call('create_invite', { group_id: g.group.group_id, target_handle: lou!.handle, note: 'monthly books' });
      const before = await lou!.call('get_inbox', { filter: 'requires_action' });
      expect(before.requires_action).toBeGreaterThanOrEqual(1);
      const preview = await lou!.call('get_invite', { code: inv1.invite.code });
      expect(preview.invite.status).toBe('active');
      expect(preview.invite.group_name).toBe('Book club');
      const declined = await lou!.call('decline_invite', { invite_id: inv1.invite.invite_id });
      expect(declined.invite.status).toBe('declined');
      const afterDecline = await lou!.call('get_inbox', { filter: 'requires_action' });
      expect(afterDecline.requires_action).toBe(before.requires_action - 1);
      const refused = await failCode(lou!.call('join_group', { code: inv1.invite.code }));
      expect(refused.code).toBe('INVITE_UNAVAILABLE');
      expect(refused.details.status).toBe('declined');

      const inv2 = await kim!.call('create_invite', { group_id: g.group.group_id, target_handle: lou!.handle });
      const joined = await lou!.call('join_group', { code: inv2.invite.url });
      expect(joined.already_member).toBe(false);

      const m1 = await kim!.call('send_message', { to_handle: lou!.handle, body: 'Welcome! <b>not html</b>\nSee you Thursday.' });
      expect(m1.message.body).toBe('Welcome! <b>not html</b>\nSee you Thursday.');
      const convs = await lou!.call('list_conversations', {});
      const conv = convs.conversations.find((c: any) => c.conversation_id === m1.conversation_id);
      expect(conv.unread_count).toBe(1);
      const msgs = await lou!.call('list_messages', { conversation_id: m1.conversation_id });
      expect(msgs.messages[0].body).toContain('Welcome');
      await lou!.call('send_message', { to_handle: kim!.handle, body: 'Thanks!' });
      const unreadBefore = (await lou!.call('get_inbox', {})).unread;
      const marked = await lou!.call('mark_inbox_read', { all: true });
      expect(marked.unread).toBe(0);
      expect(unreadBefore).toBeGreaterThan(0);
      const me = await lou!.call('get_me', {});
      expect(me.inbox).toBeUndefined();
      // Another agent's inbox and conversations are never readable.
      const eve = await actor(transport, 'eve');
      expect((await failCode(eve.call('list_messages', { conversation_id: m1.conversation_id }))).code).toMatch(/^(FORBIDDEN|NOT_FOUND)$/);
      await expectLedgerOk(direct.group.group_id);
    });
  });
}
