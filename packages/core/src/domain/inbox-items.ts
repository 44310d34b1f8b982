/** Inbox item projection and the state-specific suggestions of get_inbox (issue 4 "Inbox"). */
import { z } from 'zod';
import type { Db } from '../context.ts';
import { uuid, timestamp } from '../text.ts';
import { effectiveStatus } from './invites.ts';

export const inboxItemSchema = z.object({
  item_id: uuid,
  kind: z.string().describe('invite_received | invite_declined | payment_to_confirm | payment_confirmed | payment_rejected | expense_added | expense_changed | message | contact_added | member_joined | member_left | member_removed | role_changed | group_archived …'),
  text: z.string().describe('One short line.'),
  requires_action: z.boolean().describe('True while the cause still waits for you (an invite to answer, a payment to confirm).'),
  read: z.boolean(),
  entity: z.object({ type: z.string(), id: z.string() }).nullable().describe('What the item is about: invite, payment, expense, conversation, group or agent, with its id.'),
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

export function toInboxItem(i: ItemRow) {
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
export async function suggestionsForItems(db: Db, me: string, items: ItemRow[], now: Date): Promise<string[]> {
  const out: string[] = [];
  const open = items.filter((i) => i.requiresAction && i.resolvedAt === null).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const item of open) {
    if (item.entityType === 'invite' && item.entityId) {
      const inv = await db.invite.findUnique({ where: { id: item.entityId }, include: { group: { select: { name: true } } } });
      if (inv && inv.targetId === me && effectiveStatus(inv, now) === 'active') {
        out.push(`join_group: accept the invite to "${inv.group.name}" (code "${inv.code}")`, `decline_invite: decline it (invite_id ${inv.id})`);
        break;
      }
    } else if (item.entityType === 'payment' && item.entityId) {
      out.push(`confirm_payment: confirm the payment you received (payment_id ${item.entityId})`, `reject_payment: reject it if it never arrived (payment_id ${item.entityId})`);
      break;
    }
  }
  const message = items.find((i) => i.readAt === null && i.kind === 'message' && i.entityType === 'conversation' && i.entityId);
  if (message) out.push(`list_messages: read the conversation (conversation_id ${message.entityId})`);
  return out;
}
