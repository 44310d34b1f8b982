/** Inbox item projection, the paged inbox and the state-specific suggestions of get_inbox (issue 4 "Inbox"). */
import { z } from 'zod';
import type { Db, ToolContext } from '../context.ts';
import { uuid, timestamp } from '../text.ts';
import { effectiveStatus } from './invites.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';

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
  created_at: timestamp,
});

interface ItemRow {
  id: string;
  kind: string;
  text: string;
  requiresAction: boolean;
  resolvedAt: Date | null;
  readAt: Date | null;
  entityType: string | null;
  entityId: string | null;
  groupId: string | null;
  createdAt: Date;
}

function toInboxItem(i: ItemRow) {
  return {
    item_id: i.id,
    kind: i.kind,
    text: i.text,
    requires_action: i.requiresAction && i.resolvedAt === null,
    read: i.readAt !== null,
    entity: i.entityType && i.entityId ? { type: i.entityType, id: i.entityId } : null,
    group_id: i.groupId,
    created_at: i.createdAt.toISOString(),
  };
}

/** Suggestions for the most urgent open item and the newest unread message, naming ids. */
async function suggestionsForItems(db: Db, me: string, items: ItemRow[], now: Date): Promise<string[]> {
  const out: string[] = [];
  const open = items.filter((i) => i.requiresAction && i.resolvedAt === null).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const item of open) {
    if (item.entityType === 'invite' && item.entityId) {
      const inv = await db.invite.findUnique({ where: { id: item.entityId }, include: { group: { select: { name: true } } } });
      if (inv && inv.targetId === me && effectiveStatus(inv, now) === 'active') {
        out.push(
          `join_group: accept the invite to "${inv.group.name}" (code "${inv.code}")`,
          `decline_invite: decline it (invite_id ${inv.id})`,
        );
        break;
      }
    } else if (item.entityType === 'payment' && item.entityId) {
      out.push(
        `confirm_payment: confirm the payment you received (payment_id ${item.entityId})`,
        `reject_payment: reject it if it never arrived (payment_id ${item.entityId})`,
      );
      break;
    }
  }
  const message = items.find((i) => i.readAt === null && i.kind === 'message' && i.entityType === 'conversation' && i.entityId);
  if (message) out.push(`list_messages: read the conversation (conversation_id ${message.entityId})`);
  return out;
}

/**
 * One page of `me`'s inbox, newest first (ties by id descending). opts.filter: all
 * (default), unread, or requires_action (still open); opts.limit: page size (default 20);
 * opts.cursor: next_cursor of the previous page. Returns { items (wire shape), next_cursor (null on
 * the last page), unread, requires_action (the agent's totals), itemSuggestions (next steps for
 * the most urgent open item and the newest unread message on this page, naming ids, judged at
 * ctx.services.now()) }.
 * Errors: VALIDATION_ERROR on a malformed cursor.
 */
export async function readInbox(
  ctx: Pick<ToolContext, 'db' | 'services'>,
  me: string,
  opts: { filter?: 'all' | 'unread' | 'requires_action' | undefined; cursor?: string | undefined; limit?: number | undefined } = {},
) {
  const { db } = ctx;
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
  const itemSuggestions = await suggestionsForItems(db, me, page, ctx.services.now());
  return {
    items: page.map(toInboxItem),
    next_cursor,
    unread: counters.inboxUnread,
    requires_action: counters.inboxRequiresAction,
    itemSuggestions,
  };
}
