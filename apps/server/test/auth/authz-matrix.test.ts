/**
 * Authorization matrix. For every tool whose arguments name something by id or handle, five
 * kinds of caller try it against an owner's group, expense, payment, invite, conversation and
 * inbox — over REST and over MCP (official SDK client):
 *   outsider     registered, never in the owner's group
 *   departed     was a member, left on their own
 *   removed      was a member, removed by an admin
 *   non_admin    an active member without the admin role (the payee of the pending payment)
 *   wrong_party  an active member who is neither payer nor payee of the payment (payment tools)
 * The non-admin member has also opened a direct ledger with the owner, which the owner never
 * accepted: nobody may book a debt on the owner in it.
 * Each refused attempt must get an error envelope, and the owner's state — re-read from the
 * database — must be exactly as before. A caller the rules rightly let through is listed with the
 * reason instead (and not run). The table is checked against the registry's catalogue: a new tool
 * with an id or handle argument fails this test until it has an entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { verifyLedger } from '@kitty/core';
import { startTestServer, type TestServer } from '../server-harness.ts';

type Agent = Awaited<ReturnType<TestServer['agent']>>;
const ACTORS = ['outsider', 'departed', 'removed', 'non_admin', 'wrong_party'] as const;
type Actor = (typeof ACTORS)[number];

interface World {
  owner: Agent;
  actors: Record<Actor, Agent>;
  target: Agent;
  groupId: string;
  expenseId: string;
  deletedExpenseId: string;
  /** A receipt the owner attached to expenseId. */
  receiptId: string;
  paymentId: string;
  targetedInvite: { invite_id: string; code: string };
  multiInvite: { invite_id: string; code: string };
  directConversationId: string;
  groupConversationId: string;
  ownerItemId: string;
  /** A read-only key the owner made for a helper (create_api_key). */
  ownerKeyId: string;
  /** The owner's webhook endpoint. */
  webhookId: string;
  /** A direct ledger the non-admin member opened with the owner, which the owner has not accepted. */
  pendingLedgerId: string;
}

/** One way of calling a tool against the owner's things. */
interface Variant {
  name: string;
  args: (w: World, actor: Actor) => Record<string, unknown>;
  /** Callers that must be refused. */
  refused: Actor[];
  /** Callers the rules rightly let through, with the rule. Every actor is in exactly one of the two lists (wrong_party only for payment tools). */
  allowed?: Partial<Record<Actor, string>>;
  /** Call without a credential (register_agent). */
  anonymous?: boolean;
  /** Callers for whom the call succeeds by design but must reveal nothing of the owner's (counted with the refusals). */
  revealsNothing?: Actor[];
}

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const NOT_PAYMENT = 'not a payment tool: the payment-party rule does not apply';
const MEMBER_READS = "an active member reads the group's records";
const OUTSIDERS: Actor[] = ['outsider', 'departed', 'removed'];
const memberOnlyRead = (name: string, args: Variant['args']): Variant[] => [
  { name, args, refused: OUTSIDERS, allowed: { non_admin: MEMBER_READS, wrong_party: NOT_PAYMENT } },
];
const adminOnly = (name: string, args: Variant['args']): Variant[] => [
  { name, args, refused: [...OUTSIDERS, 'non_admin'], allowed: { wrong_party: NOT_PAYMENT } },
];

const MATRIX: Record<string, Variant[]> = {
  // account
  revoke_api_key: [
    { name: "the owner's helper key", args: (w) => ({ key_id: w.ownerKeyId }), refused: [...OUTSIDERS, 'non_admin', 'wrong_party'] },
  ],
  get_agent: [
    {
      name: 'owner profile',
      args: (w) => ({ handle: w.owner.handle }),
      refused: [],
      allowed: {
        outsider: 'public profile by design',
        departed: 'public profile',
        removed: 'public profile',
        non_admin: 'public profile',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  register_agent: [
    {
      name: 'new agent with an invite addressed to someone else',
      anonymous: true,
      args: (w) => ({ handle: `reg-${randomUUID().slice(0, 8)}`, display_name: 'Intruder', invite_code: w.targetedInvite.code }),
      refused: ['outsider'],
      allowed: {
        departed: 'takes no credential: the caller is always a new agent (the outsider row)',
        removed: 'as departed',
        non_admin: 'as departed',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  // groups
  get_group: memberOnlyRead('owner group', (w) => ({ group_id: w.groupId })),
  update_group: [
    {
      name: 'rename',
      args: (w) => ({ group_id: w.groupId, name: 'Taken over' }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'any member may rename a group', wrong_party: NOT_PAYMENT },
    },
    ...adminOnly('who may edit expenses', (w) => ({ group_id: w.groupId, members_can_edit_expenses: true })),
  ],
  archive_group: adminOnly('archive', (w) => ({ group_id: w.groupId })),
  leave_group: [
    {
      name: 'leave',
      args: (w) => ({ group_id: w.groupId }),
      refused: OUTSIDERS,
      allowed: { non_admin: "leaving is the member's own right (it needs a zero balance)", wrong_party: NOT_PAYMENT },
    },
  ],
  remove_member: adminOnly('remove a member', (w) => ({ group_id: w.groupId, handle: w.actors.wrong_party.handle })),
  set_member_role: adminOnly('promote oneself', (w, a) => ({ group_id: w.groupId, agent_id: w.actors[a].agentId, role: 'admin' })),
  open_direct_group: [
    {
      name: 'with the owner',
      args: (w) => ({ handle: w.owner.handle, currency: 'EUR' }),
      refused: OUTSIDERS,
      allowed: {
        non_admin: "shares a group: opens a ledger awaiting the owner's acceptance, nothing bookable on the owner",
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  // invites
  create_invite: [
    {
      name: 'invite into the group',
      args: (w) => ({ group_id: w.groupId, max_uses: 5 }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'any member may invite', wrong_party: NOT_PAYMENT },
    },
  ],
  list_invites: [
    {
      name: 'invites of the group',
      args: (w) => ({ group_id: w.groupId, direction: 'all' }),
      refused: [],
      allowed: { non_admin: 'lists only invites the caller sent or received', wrong_party: NOT_PAYMENT },
      // The target of an invite may not be a member yet, so this is not refused: it must show nothing of the owner's.
      revealsNothing: OUTSIDERS,
    },
  ],
  get_invite: [
    ...memberOnlyRead('by invite_id', (w) => ({ invite_id: w.targetedInvite.invite_id })),
    {
      name: 'by code',
      args: (w) => ({ code: w.targetedInvite.code }),
      refused: [],
      allowed: {
        outsider: 'the code is the secret: whoever holds it may preview (nothing is consumed)',
        departed: 'as outsider',
        removed: 'as outsider',
        non_admin: 'as outsider',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  join_group: [
    {
      name: 'with an invite addressed to someone else, or (removed) the invite they came in with',
      args: (w, a) => ({ code: a === 'removed' ? w.multiInvite.code : w.targetedInvite.code }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'already a member: answered already_member, nothing consumed', wrong_party: NOT_PAYMENT },
    },
  ],
  decline_invite: [
    {
      name: 'decline an invite addressed to someone else',
      args: (w) => ({ invite_id: w.targetedInvite.invite_id }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
  ],
  revoke_invite: [
    {
      name: "revoke the owner's invite",
      args: (w) => ({ invite_id: w.targetedInvite.invite_id }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
  ],
  // contacts: each acts on the caller's own lists
  add_contact: [
    {
      name: 'the owner',
      args: (w) => ({ handle: w.owner.handle }),
      refused: [],
      allowed: {
        outsider: 'contacts are one-sided by design; the owner is only told',
        departed: 'as outsider',
        removed: 'as outsider',
        non_admin: 'as outsider',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  update_contact: [
    {
      name: 'the owner (not a contact of the caller)',
      args: (w) => ({ handle: w.owner.handle, alias: 'x' }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
  ],
  remove_contact: [
    {
      name: 'the owner (not a contact of the caller)',
      args: (w) => ({ handle: w.owner.handle }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
  ],
  block_agent: [
    {
      name: 'the owner',
      args: (w) => ({ handle: w.owner.handle }),
      refused: [],
      allowed: {
        outsider: "blocking changes only the blocker's own list",
        departed: 'as outsider',
        removed: 'as outsider',
        non_admin: 'as outsider',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  unblock_agent: [
    {
      name: 'the owner (not blocked by the caller)',
      args: (w) => ({ handle: w.owner.handle }),
      refused: [],
      allowed: {
        outsider: "acts on the caller's own block list (idempotent)",
        departed: 'as outsider',
        removed: 'as outsider',
        non_admin: 'as outsider',
        wrong_party: NOT_PAYMENT,
      },
    },
  ],
  // messages and inbox
  send_message: [
    {
      name: 'to the group',
      args: (w) => ({ group_id: w.groupId, body: 'let me in' }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'members write to their group', wrong_party: NOT_PAYMENT },
    },
    {
      name: 'to the owner',
      args: (w) => ({ to_handle: w.owner.handle, body: 'hello' }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'shares a group with the owner', wrong_party: NOT_PAYMENT },
    },
  ],
  list_messages: [
    {
      name: "owner's direct conversation with the payee",
      args: (w) => ({ conversation_id: w.directConversationId }),
      refused: [...OUTSIDERS, 'wrong_party'],
      allowed: { non_admin: 'a participant of that conversation' },
    },
    ...memberOnlyRead('group conversation by id', (w) => ({ conversation_id: w.groupConversationId })),
    ...memberOnlyRead('group conversation by group_id', (w) => ({ group_id: w.groupId })),
  ],
  mark_inbox_read: [
    { name: "owner's inbox item", args: (w) => ({ item_ids: [w.ownerItemId] }), refused: [...OUTSIDERS, 'non_admin', 'wrong_party'] },
    {
      name: "owner's direct conversation",
      args: (w) => ({ conversation_id: w.directConversationId }),
      refused: [...OUTSIDERS, 'wrong_party'],
      allowed: { non_admin: 'a participant: marks only its own side read' },
    },
  ],
  // expenses (the group lets only admins and the creator edit)
  add_expense: [
    {
      name: 'expense in the group',
      args: (w) => ({ group_id: w.groupId, description: 'Sneaky', amount_minor: 999 }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'members add expenses', wrong_party: NOT_PAYMENT },
    },
    {
      name: 'a debt on the departed and the removed',
      args: (w) => ({
        group_id: w.groupId,
        description: 'On them',
        amount_minor: 900,
        split: {
          method: 'equal',
          participants: [{ handle: w.actors.non_admin.handle }, { handle: w.actors.departed.handle }, { handle: w.actors.removed.handle }],
        },
      }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
    {
      name: 'a debt on the owner in a direct ledger the owner has not accepted',
      args: (w) => ({
        group_id: w.pendingLedgerId,
        description: 'Unsolicited',
        amount_minor: 5000,
        split: { method: 'equal', participants: [{ handle: w.actors.non_admin.handle }, { handle: w.owner.handle }] },
      }),
      refused: [...OUTSIDERS, 'non_admin'],
      allowed: { wrong_party: NOT_PAYMENT },
    },
  ],
  get_expense: memberOnlyRead('owner expense', (w) => ({ expense_id: w.expenseId })),
  list_expenses: memberOnlyRead('expenses of the group', (w) => ({ group_id: w.groupId })),
  update_expense: adminOnly("change the owner's expense", (w) => ({ expense_id: w.expenseId, amount_minor: 1 })),
  delete_expense: adminOnly("delete the owner's expense", (w) => ({ expense_id: w.expenseId })),
  restore_expense: adminOnly("restore the owner's deleted expense", (w) => ({ expense_id: w.deletedExpenseId })),
  attach_receipt: adminOnly("attach a receipt to the owner's expense", (w) => ({
    expense_id: w.expenseId,
    filename: 'x.png',
    content_base64: PNG,
  })),
  remove_receipt: adminOnly("remove the owner's receipt", (w) => ({ receipt_id: w.receiptId })),
  get_group_stats: memberOnlyRead('spending statistics', (w) => ({ group_id: w.groupId, by: 'member' })),
  // payments: owner paid the payee (pending)
  record_payment: [
    {
      name: 'a payment to the owner',
      args: (w) => ({ group_id: w.groupId, to_handle: w.owner.handle, amount_minor: 100, allow_overpayment: true }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'a member records what it paid', wrong_party: 'records its own payment' },
    },
    {
      name: 'a payment between two others',
      args: (w) => ({
        group_id: w.groupId,
        from_handle: w.owner.handle,
        to_handle: w.actors.non_admin.handle,
        amount_minor: 100,
        allow_overpayment: true,
      }),
      refused: [...OUTSIDERS, 'wrong_party'],
      allowed: { non_admin: 'the payee records a payment it received' },
    },
    {
      name: 'a payment from the owner in a direct ledger the owner has not accepted',
      args: (w) => ({ group_id: w.pendingLedgerId, from_handle: w.owner.handle, to_handle: w.actors.non_admin.handle, amount_minor: 100 }),
      refused: [...OUTSIDERS, 'non_admin', 'wrong_party'],
    },
  ],
  get_payment: memberOnlyRead('the pending payment', (w) => ({ payment_id: w.paymentId })).map((v) => ({
    ...v,
    allowed: { non_admin: MEMBER_READS, wrong_party: "members see the group's payments" },
  })),
  list_payments: memberOnlyRead('payments of the group', (w) => ({ group_id: w.groupId })),
  confirm_payment: [
    {
      name: 'confirm',
      args: (w) => ({ payment_id: w.paymentId }),
      refused: [...OUTSIDERS, 'wrong_party'],
      allowed: { non_admin: 'the payee confirms' },
    },
  ],
  reject_payment: [
    {
      name: 'reject',
      args: (w) => ({ payment_id: w.paymentId, reason: 'no' }),
      refused: [...OUTSIDERS, 'wrong_party'],
      allowed: { non_admin: 'the payee rejects' },
    },
  ],
  cancel_payment: [{ name: 'cancel', args: (w) => ({ payment_id: w.paymentId }), refused: [...OUTSIDERS, 'non_admin', 'wrong_party'] }],
  // balances and records
  get_balances: memberOnlyRead('balances', (w) => ({ group_id: w.groupId })),
  suggest_settlements: memberOnlyRead('settlements', (w) => ({ group_id: w.groupId })),
  export_group: memberOnlyRead('export', (w) => ({ group_id: w.groupId })),
  list_activity: memberOnlyRead('activity', (w) => ({ group_id: w.groupId, entity_type: 'expense', entity_id: w.expenseId })),
  import_expenses: [
    {
      name: 'import into the group',
      args: (w) => ({
        group_id: w.groupId,
        format: 'splitwise',
        csv: `Date,Description,Category,Cost,Currency,${w.owner.handle}\n2026-01-02,Taxi,Transport,10.00,EUR,0.00\n`,
      }),
      refused: OUTSIDERS,
      allowed: { non_admin: 'members may import', wrong_party: NOT_PAYMENT },
    },
  ],
  // webhooks: only the owning agent sees or changes its endpoints (NOT_FOUND for anyone else)
  ...Object.fromEntries(
    ['update_webhook', 'delete_webhook', 'test_webhook', 'rotate_webhook_secret'].map((tool) => [
      tool,
      [
        {
          name: "owner's endpoint",
          args: (w: World) => ({ webhook_id: w.webhookId, ...(tool === 'update_webhook' ? { paused: false } : {}) }),
          refused: [...ACTORS],
        },
      ],
    ]),
  ),
};

/** Argument names that identify something: ids, id lists, handles, invite codes. */
const ID_ARG = /(_id|_ids|handle)$|^code$|^invite_code$/;

let s: TestServer;
let w: World;
const mcpClients = new Map<string, Client>();

async function call(a: Agent, tool: string, args: Record<string, unknown>) {
  const write = s.kitty.registry.tools.get(tool)?.kind === 'write';
  const r = await s.http(`/v1/tools/${tool}`, {
    body: { ...(write ? { idempotency_key: `setup-${randomUUID()}` } : {}), ...args },
    apiKey: a.apiKey,
  });
  if (!r.json?.ok) throw new Error(`${tool} → ${r.status} ${r.text}`);
  return r.json.data;
}

async function mcp(a: Agent): Promise<Client> {
  let c = mcpClients.get(a.apiKey);
  if (!c) {
    c = new Client({ name: 'authz-matrix', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${a.apiKey}` } } }),
    );
    mcpClients.set(a.apiKey, c);
  }
  return c;
}

/** Everything of the owner's that a refused call could have changed, read from the database. */
async function ownerState(): Promise<string> {
  const rows = await s.kitty.services.prisma.$queryRaw<Array<{ state: unknown }>>`
    SELECT json_build_object(
      'webhooks', (SELECT json_agg(h ORDER BY h.id) FROM webhooks h WHERE h.agent_id = ${w.owner.agentId}::uuid),
      'webhook_deliveries', (SELECT count(*) FROM webhook_deliveries d JOIN webhooks h ON h.id = d.webhook_id WHERE h.agent_id = ${w.owner.agentId}::uuid),
      'group', (SELECT row_to_json(g) FROM groups g WHERE g.id = ${w.groupId}::uuid),
      'members', (SELECT json_agg(m ORDER BY m.agent_id) FROM memberships m WHERE m.group_id = ${w.groupId}::uuid),
      'expenses', (SELECT json_agg(e ORDER BY e.id) FROM expenses e WHERE e.group_id = ${w.groupId}::uuid),
      'shares', (SELECT json_agg(x ORDER BY x.expense_id, x.agent_id) FROM expense_shares x JOIN expenses e ON e.id = x.expense_id WHERE e.group_id = ${w.groupId}::uuid),
      'payments', (SELECT json_agg(p ORDER BY p.id) FROM payments p WHERE p.group_id = ${w.groupId}::uuid),
      'pair_debts', (SELECT json_agg(d ORDER BY d.agent_a, d.agent_b) FROM pair_debts d WHERE d.group_id = ${w.groupId}::uuid),
      'invites', (SELECT json_agg(i ORDER BY i.id) FROM invites i WHERE i.group_id = ${w.groupId}::uuid),
      'activities', (SELECT count(*) FROM activities a WHERE a.group_id = ${w.groupId}::uuid),
      'recurrences', (SELECT count(*) FROM recurrences r WHERE r.group_id = ${w.groupId}::uuid),
      'receipts', (SELECT json_agg(json_build_object('id', r.id, 'size', r.size_bytes, 'stored', (SELECT count(*) FROM receipt_contents c WHERE c.receipt_id = r.id)) ORDER BY r.id) FROM receipts r WHERE r.group_id = ${w.groupId}::uuid),
      'owner', (SELECT json_build_object('handle', a.handle, 'display_name', a.display_name, 'description', a.description,
                  'inbox_unread', a.inbox_unread, 'inbox_requires_action', a.inbox_requires_action) FROM agents a WHERE a.id = ${w.owner.agentId}::uuid),
      'owner_items', (SELECT json_agg(json_build_object('id', i.id, 'read_at', i.read_at, 'resolved_at', i.resolved_at) ORDER BY i.id) FROM inbox_items i WHERE i.agent_id = ${w.owner.agentId}::uuid),
      'owner_keys', (SELECT json_agg(json_build_object('id', k.id, 'expires_at', k.expires_at, 'rotated_at', k.rotated_at) ORDER BY k.id) FROM api_keys k WHERE k.agent_id = ${w.owner.agentId}::uuid),
      'owner_contacts', (SELECT json_agg(c ORDER BY c.contact_id) FROM contacts c WHERE c.owner_id = ${w.owner.agentId}::uuid),
      'owner_blocks', (SELECT json_agg(b ORDER BY b.blocked_id) FROM blocks b WHERE b.blocker_id = ${w.owner.agentId}::uuid),
      'conversations', (SELECT json_agg(cp ORDER BY cp.conversation_id, cp.agent_id) FROM conversation_participants cp
                        WHERE cp.conversation_id IN (${w.directConversationId}::uuid, ${w.groupConversationId}::uuid)),
      'messages', (SELECT count(*) FROM messages m WHERE m.conversation_id IN (${w.directConversationId}::uuid, ${w.groupConversationId}::uuid)),
      'direct_ledgers', (SELECT json_agg(json_build_object('id', g.id, 'members', g.member_count,
                           'expenses', (SELECT count(*) FROM expenses e WHERE e.group_id = g.id),
                           'payments', (SELECT count(*) FROM payments p WHERE p.group_id = g.id)) ORDER BY g.id)
                         FROM groups g WHERE g.kind = 'direct' AND g.direct_key LIKE ${'%' + w.owner.agentId + '%'})
    ) AS state`;
  return JSON.stringify(rows[0]!.state);
}

beforeAll(async () => {
  s = await startTestServer();
  const owner = await s.agent('owner');
  const [outsider, departed, removed, nonAdmin, wrongParty, target] = await Promise.all(
    ['outsider', 'departed', 'removed', 'member', 'bystander', 'target'].map((p) => s.agent(p)),
  );
  const actors: Record<Actor, Agent> = {
    outsider: outsider!,
    departed: departed!,
    removed: removed!,
    non_admin: nonAdmin!,
    wrong_party: wrongParty!,
  };
  const groupId = (await call(owner, 'create_group', { name: 'Owner house', currency: 'EUR' })).group.group_id;
  const multi = (await call(owner, 'create_invite', { group_id: groupId, max_uses: 10 })).invite;
  for (const a of [nonAdmin!, wrongParty!, departed!, removed!]) await call(a, 'join_group', { code: multi.code });
  await call(departed!, 'leave_group', { group_id: groupId });
  await call(owner, 'remove_member', { group_id: groupId, handle: removed!.handle });
  await call(owner, 'update_group', { group_id: groupId, members_can_edit_expenses: false });
  const split = { method: 'equal', participants: [{ handle: owner.handle }, { handle: nonAdmin!.handle }, { handle: wrongParty!.handle }] };
  const expenseId = (await call(owner, 'add_expense', { group_id: groupId, description: 'Groceries', amount_minor: 3000, split })).expense
    .expense_id;
  const deletedExpenseId = (await call(owner, 'add_expense', { group_id: groupId, description: 'Mistake', amount_minor: 1200, split }))
    .expense.expense_id;
  await call(owner, 'delete_expense', { expense_id: deletedExpenseId });
  const receiptId = (await call(owner, 'attach_receipt', { expense_id: expenseId, filename: 'owner.png', content_base64: PNG })).receipt
    .receipt_id;
  const paymentId = (
    await call(owner, 'record_payment', { group_id: groupId, to_handle: nonAdmin!.handle, amount_minor: 500, allow_overpayment: true })
  ).payment.payment_id;
  await call(owner, 'add_contact', { handle: target!.handle });
  const targeted = (await call(owner, 'create_invite', { group_id: groupId, target_handle: target!.handle })).invite;
  const direct = await call(owner, 'send_message', { to_handle: nonAdmin!.handle, body: 'about the groceries' });
  const grp = await call(owner, 'send_message', { group_id: groupId, body: 'welcome' });
  await call(nonAdmin!, 'send_message', { to_handle: owner.handle, body: 'thanks' }); // an unread item for the owner
  const pending = await call(nonAdmin!, 'open_direct_group', { handle: owner.handle, currency: 'EUR' });
  if (pending.accepted) throw new Error('the owner has not accepted this ledger');
  const items = (await call(owner, 'get_inbox', { filter: 'unread' })).items;
  const ownerKeyId = (await call(owner, 'create_api_key', { scopes: ['svc:read'], label: 'helper' })).key.key_id;
  s.kitty.services.resolveHost = async () => [{ address: '93.184.216.34', family: 4 }];
  const webhookId = (await call(owner, 'create_webhook', { url: 'https://hooks.example/owner' })).webhook.webhook_id;
  delete s.kitty.services.resolveHost;
  // Paused: the dispatcher leaves it alone, so its row changes only if a refused call changed it.
  await call(owner, 'update_webhook', { webhook_id: webhookId, paused: true });
  w = {
    owner,
    actors,
    target: target!,
    groupId,
    expenseId,
    deletedExpenseId,
    receiptId,
    paymentId,
    targetedInvite: { invite_id: targeted.invite_id, code: targeted.code },
    multiInvite: { invite_id: multi.invite_id, code: multi.code },
    directConversationId: direct.conversation_id,
    groupConversationId: grp.conversation_id,
    ownerItemId: items[0].item_id,
    ownerKeyId,
    webhookId,
    pendingLedgerId: pending.group.group_id,
  };
}, 120_000);

afterAll(async () => {
  for (const c of mcpClients.values()) await c.close().catch(() => undefined);
  await s?.close();
});

describe('authorization matrix', () => {
  it('covers every tool whose arguments name something by id or handle, and every caller kind in each entry', () => {
    const withIds = s.kitty.registry.catalogue
      .filter((t) => Object.keys((t.input_schema as any).properties ?? {}).some((p) => ID_ARG.test(p)))
      .map((t) => t.name);
    expect(withIds.length).toBeGreaterThan(30);
    expect(
      withIds.filter((n) => !MATRIX[n]),
      'tools with an id/handle argument and no matrix entry',
    ).toEqual([]);
    expect(
      Object.keys(MATRIX).filter((n) => !withIds.includes(n)),
      'matrix entries for tools without such an argument (or unknown)',
    ).toEqual([]);
    for (const [tool, variants] of Object.entries(MATRIX)) {
      for (const v of variants) {
        for (const a of ACTORS) {
          const inRefused = v.refused.includes(a) || (v.revealsNothing ?? []).includes(a);
          const inAllowed = v.allowed?.[a] !== undefined;
          expect(inRefused !== inAllowed, `${tool} / ${v.name}: actor ${a} must be either refused or allowed with a reason`).toBe(true);
        }
      }
    }
  });

  it("every refused caller gets an error envelope over REST and MCP, and the owner's state is unchanged", async () => {
    const breaches: string[] = [];
    let tried = 0;
    let held = 0;
    const start = await ownerState();
    for (const [tool, variants] of Object.entries(MATRIX)) {
      for (const v of variants) {
        const cases: Array<[Actor, 'refused' | 'reveals_nothing']> = [
          ...v.refused.map((a) => [a, 'refused'] as [Actor, 'refused']),
          ...(v.revealsNothing ?? []).map((a) => [a, 'reveals_nothing'] as [Actor, 'reveals_nothing']),
        ];
        for (const [actor, expected] of cases) {
          const agent = w.actors[actor];
          for (const transport of ['rest', 'mcp'] as const) {
            tried++;
            const args = {
              ...v.args(w, actor),
              ...(s.kitty.registry.tools.get(tool)?.kind === 'write' ? { idempotency_key: `matrix-${randomUUID()}` } : {}),
            };
            const before = await ownerState();
            let envelope: any;
            let text: string;
            if (transport === 'rest') {
              const r = await s.http(`/v1/tools/${tool}`, { body: args, ...(v.anonymous ? {} : { apiKey: agent.apiKey }) });
              envelope = r.status >= 400 ? r.json : { ok: true, status: r.status };
              text = r.text;
            } else {
              // /mcp always needs a credential; register_agent ignores it, so the actor's own client serves.
              const r = await (await mcp(agent)).callTool({ name: tool, arguments: args });
              text = JSON.stringify(r);
              envelope = r.isError ? JSON.parse((r.content as any)[0].text) : { ok: true };
            }
            const after = await ownerState();
            const label = `${tool} / ${v.name} / ${actor} / ${transport}`;
            // The owner's secrets and private words the caller did not already send.
            const leaked = [
              w.targetedInvite.code,
              w.multiInvite.code,
              'Groceries',
              'about the groceries',
              w.targetedInvite.invite_id,
            ].filter((x) => !JSON.stringify(args).includes(x) && text.includes(x));
            const isEnvelope =
              envelope?.ok === false &&
              typeof envelope.error?.code === 'string' &&
              typeof envelope.error?.message === 'string' &&
              envelope.error.code !== 'INTERNAL';
            if (expected === 'refused' && !isEnvelope) breaches.push(`${label}: not refused (${JSON.stringify(envelope).slice(0, 200)})`);
            else if (expected === 'reveals_nothing' && envelope?.ok !== true)
              breaches.push(
                `${label}: expected an answer that shows nothing of the owner's, got ${JSON.stringify(envelope).slice(0, 200)}`,
              );
            else if (leaked.length) breaches.push(`${label}: the answer shows ${leaked.join(', ')}`);
            else if (after !== before) breaches.push(`${label}: the owner's state changed`);
            else held++;
          }
        }
      }
    }
    expect(breaches).toEqual([]);
    expect(held).toBe(tried);
    expect(await ownerState()).toBe(start);
    const ledger = await verifyLedger(s.kitty.services.prisma);
    expect(ledger.problems).toEqual([]);
    // The closing count, for the record.
    console.info(`authorization matrix: ${tried} cases tried, ${held} held`);
  }, 300_000);

  it('receipt downloads: only active members get the bytes (bearer), every other caller kind gets an error envelope', async () => {
    for (const actor of ACTORS) {
      const res = await fetch(`${s.url}/v1/receipts/${w.receiptId}`, { headers: { authorization: `Bearer ${w.actors[actor].apiKey}` } });
      const member = actor === 'non_admin' || actor === 'wrong_party';
      expect(res.status, actor).toBe(member ? 200 : 403);
      if (!member) expect(((await res.json()) as { error: { code: string } }).error.code, actor).toBe('FORBIDDEN');
      else expect(res.headers.get('content-type')).toBe('image/png');
    }
  });
});
