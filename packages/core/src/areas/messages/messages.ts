/**
 * Conversations and messages (issue 4 "Messages"). One conversation per direct pair
 * (key "<smaller id>:<larger id>") and one per group (key = group id); a `direct` ledger's
 * messages go to its pair's conversation. Unread counts live on the participant row and are
 * maintained in the same transaction as the message and its inbox items.
 * Bodies are plain text: stored and returned as given, never interpreted as HTML or Markdown.
 */
import { z } from 'zod';
import type { Db } from '../../kernel/context.ts';
import { agentRef, timestamp, uuid } from '../../kernel/text.ts';
import { toAgentRef } from '../../access/agents.ts';

export const MESSAGE_MAX = 4000;

const aboutSchema = z.object({ type: z.enum(['expense', 'payment']), id: uuid });

export const messageSchema = z.object({
  message_id: uuid,
  conversation_id: uuid,
  sender: agentRef,
  body: z.string().describe('Plain text as sent.'),
  about: aboutSchema.nullable().describe('Expense or payment it is about.'),
  created_at: timestamp,
});

export interface MessageRow {
  id: string;
  conversationId: string;
  body: string;
  aboutType: string | null;
  aboutId: string | null;
  createdAt: Date;
  sender: { id: string; handle: string; displayName: string };
}

export function toMessage(m: MessageRow) {
  return {
    message_id: m.id,
    conversation_id: m.conversationId,
    sender: toAgentRef(m.sender),
    body: m.body,
    about: m.aboutType && m.aboutId ? { type: m.aboutType as 'expense' | 'payment', id: m.aboutId } : null,
    created_at: m.createdAt.toISOString(),
  };
}

export const conversationSchema = z.object({
  conversation_id: uuid,
  kind: z.enum(['direct', 'group']),
  with: agentRef.nullable().describe('For a direct conversation: the other agent.'),
  group: z
    .object({ group_id: uuid, name: z.string(), kind: z.enum(['group', 'direct']) })
    .nullable()
    .describe('For a group conversation: the group.'),
  unread_count: z.number().int().describe('Your unread messages here.'),
  last_message: messageSchema.nullable(),
  last_message_at: timestamp,
});

/**
 * Get-or-create the conversation with `key`, safe under concurrency: INSERT … ON CONFLICT DO NOTHING
 * waits for a concurrent insert of the same key and then skips, so the read that follows finds the
 * row. (Prisma's upsert with an empty update falls back to read-then-insert, which raced: two first
 * messages of a pair at once gave a unique violation and a 500.)
 */
export async function upsertConversation(db: Db, kind: 'direct' | 'group', key: string, groupId: string | null, now: Date) {
  await db.$executeRaw`
    INSERT INTO conversations (id, kind, key, group_id, last_message_at, created_at)
    VALUES (gen_random_uuid(), ${kind}, ${key}, ${groupId}::uuid, ${now}::timestamptz, ${now}::timestamptz)
    ON CONFLICT (key) DO NOTHING`;
  return db.conversation.findUniqueOrThrow({ where: { key } });
}

/** One line for the inbox: whitespace collapsed, cut to fit. */
export function preview(body: string, max = 80): string {
  const s = body.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
