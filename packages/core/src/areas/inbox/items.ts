/** Inbox item projection, the paged inbox and the state-specific suggestions of get_inbox (issue 4 "Inbox"). */
import { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { uuid, timestamp } from '../../kernel/text.ts';
import { effectiveStatus } from '../invites/invites.ts';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.ts';
import { itemCall } from '../../kernel/inbox-calls.ts';

export const inboxItemSchema = z.object({
  item_id: uuid,
  kind: z
    .string()
    .describe(
      'invite_received | invite_declined | payment_to_confirm | payment_confirmed | payment_rejected | expense_added | expense_changed | message | contact_added | member_joined | member_left | member_removed | role_changed | group_archived …',
    ),
  text: z.string().describe('One short line.'),
  requires_action: z.boolean().describe('True while the cause still waits for you (an invite to answer, a payment to confirm).'),
  read: z.boolean(),
  entity: z
    .object({ type: z.string(), id: z.string() })
    .nullable()
    .describe('What the item is about: invite, payment, expense, conversation, group or agent, with its id.'),
  group_id: uuid.nullable(),
  resolution: z.string().nullable().describe('What happened to its cause once settled, e.g. "confirmed by @ana"; null while open or news.'),
  call: z
    .object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) })
    .describe('The one call that acts on it (confirm_payment, join_group, or a read of its subject), ready to send.'),
  created_at: timestamp,
});

interface ItemRow {
  id: string;
  kind: string;
  text: string;
  requiresAction: boolean;
  resolvedAt: Date | null;
  resolution: string | null;
  readAt: Date | null;
  entityType: string | null;
  entityId: string | null;
  groupId: string | null;
  createdAt: Date;
}

function toInboxItem(i: ItemRow, codes: Map<string, string>) {
  const entity = i.entityType && i.entityId ? { type: i.entityType, id: i.entityId } : null;
  const requires_action = i.requiresAction && i.resolvedAt === null;
  return {
    item_id: i.id,
    kind: i.kind,
    text: i.text,
    requires_action,
    read: i.readAt !== null,
    entity,
    group_id: i.groupId,
    resolution: i.resolution,
    call: itemCall({ item_id: i.id, requires_action, entity, group_id: i.groupId, code: i.entityId ? codes.get(i.entityId) : undefined }),
    created_at: i.createdAt.toISOString(),
  };
}

const isOpen = (i: ItemRow) => i.requiresAction && i.resolvedAt === null;

/** The invites of the page's open invite items that `me` can still join (active, targeting them or anyone). */
async function openInvites(db: Db, me: string, items: ItemRow[], now: Date) {
  const ids = items.filter((i) => isOpen(i) && i.entityType === 'invite' && i.entityId && UUID.test(i.entityId)).map((i) => i.entityId!);
  if (!ids.length) return new Map<string, { code: string; id: string; groupName: string }>();
  const rows = await db.invite.findMany({ where: { id: { in: ids } }, include: { group: { select: { name: true } } } });
  return new Map(
    rows
      .filter((inv) => (inv.targetId === null || inv.targetId === me) && effectiveStatus(inv, now) === 'active')
      .map((inv) => [inv.id, { code: inv.code, id: inv.id, groupName: inv.group.name }]),
  );
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One suggestion per open item (oldest first), then the newest unread message, naming ids. */
function suggestionsForItems(items: ItemRow[], invites: Awaited<ReturnType<typeof openInvites>>): string[] {
  const out: string[] = [];
  const open = items.filter(isOpen).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const item of open) {
    const inv = item.entityType === 'invite' && item.entityId ? invites.get(item.entityId) : undefined;
    if (inv) {
      out.push(`join_group: accept the invite to "${inv.groupName}" (code "${inv.code}"), or decline_invite with invite_id ${inv.id}`);
    } else if (item.entityType === 'payment' && item.entityId) {
      out.push(`confirm_payment: confirm the payment you received (payment_id ${item.entityId}), or reject_payment if it never arrived`);
    }
  }
  const message = items.find((i) => i.readAt === null && i.kind === 'message' && i.entityType === 'conversation' && i.entityId);
  if (message) out.push(`list_messages: read the conversation (conversation_id ${message.entityId})`);
  return out;
}

/**
 * One page of `actor`'s inbox, newest first (ties by id descending). opts.filter: all
 * (default), unread, or requires_action (still open); opts.limit: page size (default 20);
 * opts.cursor: next_cursor of the previous page. Returns { items (wire shape), next_cursor (null on
 * the last page), unread, requires_action (the agent's totals), itemSuggestions (next steps for
 * the most urgent open item and the newest unread message on this page, naming ids, judged at
 * `now`) }.
 * Errors: VALIDATION_ERROR on a malformed cursor.
 */
export async function readInbox(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  opts: { filter?: 'all' | 'unread' | 'requires_action' | undefined; cursor?: string | undefined; limit?: number | undefined },
  now: Date,
) {
  const me = actor.agentId;
  const take = opts.limit ?? 20;
  const after = opts.cursor ? decodeCursor(opts.cursor) : null;
  const filter = opts.filter ?? 'all';
  const [rows, counters] = await Promise.all([
    db.inboxItem.findMany({
      where: {
        agentId: me,
        ...(filter === 'unread' ? { readAt: null } : filter === 'requires_action' ? { requiresAction: true, resolvedAt: null } : {}),
        ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: take + 1,
    }),
    db.agent.findUniqueOrThrow({ where: { id: me }, select: { inboxUnread: true, inboxRequiresAction: true } }),
  ]);
  const page = rows.slice(0, take);
  const last = page[page.length - 1];
  const next_cursor = rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null;
  const invites = await openInvites(db, me, page, now);
  const codes = new Map([...invites].map(([id, inv]) => [id, inv.code]));
  const itemSuggestions = suggestionsForItems(page, invites);
  return {
    items: page.map((i) => toInboxItem(i, codes)),
    next_cursor,
    unread: counters.inboxUnread,
    requires_action: counters.inboxRequiresAction,
    itemSuggestions,
  };
}
