/**
 * Sending a message (send_message): resolves the one recipient — an agent, a group, or the group of
 * the expense or payment the message is about — checks who may be messaged, and writes the message,
 * the conversation's last_message_at, the participants' unread counts, the recipients' inbox items
 * and (for a group) the activity, in the caller's transaction.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError, validationError } from '../../kernel/errors.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../access/groups.ts';
import { agentByHandle, assertNotSelf, canMessage, canReach, pairKey } from '../../access/reachability.ts';
import { toMessage, upsertConversation, preview } from './messages.ts';
import { appendActivity } from '../../kernel/activity.ts';
import { appendEvent } from '../../kernel/events.ts';
import { notifyAll } from '../../kernel/notify.ts';
import { AGENT_REF_SELECT } from '../../access/agents.ts';

/** What send_message received, validated on the wire: at most one of to_handle/group_id; body is plain text (1-4000 characters). */
export interface OutgoingMessage {
  to_handle?: string | undefined;
  group_id?: string | undefined;
  about?: { type: 'expense' | 'payment'; id: string } | undefined;
  body: string;
}

const refusal = (h: string) =>
  new ToolError('FORBIDDEN', `You cannot message @${h}.`, {
    suggestedAction: 'You can message your contacts, agents who have you as a contact, and members of groups you share.',
  });

/**
 * Sends `m` from `actor` at `now`. Recipient: to_handle (a direct conversation; with `about`
 * that agent must be in the about's group), group_id, or `about` alone (its group's conversation);
 * a direct ledger's messages go to the pair's conversation. Who may be messaged: contacts, agents
 * who have the caller as a contact, and fellow members of a shared group; a group member who
 * blocked the sender gets no inbox item. Unread counts rise by one per recipient.
 * Returns the message (wire shape) and the conversation id.
 * Errors: VALIDATION_ERROR (not exactly one recipient; yourself; about in another group than
 * group_id or the recipient not in its group), NOT_FOUND (handle, group, or an expense/payment the
 * caller cannot see), FORBIDDEN (cannot message this agent; not a member), GROUP_ARCHIVED,
 * DIRECT_LEDGER_NOT_ACCEPTED.
 */
export async function sendMessage(db: Db, actor: Pick<Actor, 'agentId' | 'handle'>, m: OutgoingMessage, now: Date) {
  const me = actor.agentId;
  const myHandle = actor.handle;

  // The expense or payment referenced, and its group (visible only to its members).
  let aboutGroupId: string | null = null;
  if (m.about) {
    const row =
      m.about.type === 'expense'
        ? await db.expense.findUnique({ where: { id: m.about.id }, select: { groupId: true } })
        : await db.payment.findUnique({ where: { id: m.about.id }, select: { groupId: true } });
    const member = row
      ? await db.membership.findUnique({ where: { groupId_agentId: { groupId: row.groupId, agentId: me } }, select: { leftAt: true } })
      : null;
    if (!row || !member || member.leftAt) {
      throw new ToolError('NOT_FOUND', `No ${m.about.type} you can see has id ${m.about.id}.`, { details: { about: m.about } });
    }
    aboutGroupId = row.groupId;
    if (m.group_id && m.group_id !== aboutGroupId)
      throw validationError('about.id', `this ${m.about.type} belongs to another group than group_id`, 'group_mismatch');
  }
  const groupId = m.group_id ?? (m.to_handle ? undefined : (aboutGroupId ?? undefined));
  if ((m.to_handle === undefined) === (groupId === undefined)) {
    throw validationError('to_handle', 'give exactly one recipient: to_handle or group_id (or about alone for its group)', 'exactly_one');
  }

  let conversation: { id: string };
  let recipients: string[];
  let line: string;
  let activityGroupId: string | null = null;
  if (m.to_handle !== undefined) {
    const to = await agentByHandle(db, m.to_handle, 'to_handle');
    assertNotSelf(me, to.id, 'to_handle', 'message');
    if (!(await canMessage(db, me, to.id))) throw refusal(to.handle);
    if (aboutGroupId) {
      const tm = await db.membership.findUnique({
        where: { groupId_agentId: { groupId: aboutGroupId, agentId: to.id } },
        select: { leftAt: true },
      });
      if (!tm || tm.leftAt)
        throw validationError('about.id', `@${to.handle} is not a member of the group of this ${m.about!.type}`, 'not_in_group');
    }
    conversation = await upsertConversation(db, 'direct', pairKey(me, to.id), null, now);
    recipients = [to.id];
    line = `@${myHandle}: ${preview(m.body)}`;
  } else {
    const { group } = await requireMembership(db, groupId!, me);
    assertNotArchived(group);
    activityGroupId = group.id;
    if (group.kind === 'direct') {
      await assertLedgerAccepted(db, group, { messaging: true });
      const other = await db.membership.findFirst({
        where: { groupId: group.id, agentId: { not: me }, leftAt: null },
        select: { agent: { select: AGENT_REF_SELECT } },
      });
      if (!other) throw new ToolError('INTERNAL', 'direct ledger without its second member');
      // Money is never held hostage, but a blocked agent cannot write to the blocker.
      if (!(await canReach(db, me, other.agent.id))) throw refusal(other.agent.handle);
      conversation = await upsertConversation(db, 'direct', pairKey(me, other.agent.id), null, now);
      recipients = [other.agent.id];
      line = `@${myHandle}: ${preview(m.body)}`;
    } else {
      conversation = await upsertConversation(db, 'group', group.id, group.id, now);
      const members = await db.membership.findMany({ where: { groupId: group.id, leftAt: null }, select: { agentId: true } });
      recipients = members.map((x) => x.agentId).filter((id) => id !== me);
      line = `@${myHandle} in "${group.name}": ${preview(m.body, 60)}`;
    }
  }

  const message = await db.message.create({
    data: {
      conversationId: conversation.id,
      senderId: me,
      body: m.body,
      aboutType: m.about?.type ?? null,
      aboutId: m.about?.id ?? null,
      createdAt: now,
    },
  });
  await db.$executeRaw`UPDATE conversations SET last_message_at = GREATEST(last_message_at, ${now}) WHERE id = ${conversation.id}::uuid`;
  // Participants: the sender (unread unchanged) and every recipient (unread + 1), in one statement.
  const everyone = [me, ...recipients];
  await db.$executeRaw`
    INSERT INTO conversation_participants (conversation_id, agent_id, unread_count)
    SELECT ${conversation.id}::uuid, a, CASE WHEN a = ${me}::uuid THEN 0 ELSE 1 END FROM unnest(${everyone}::uuid[]) AS a
    ON CONFLICT (conversation_id, agent_id) DO UPDATE SET unread_count = conversation_participants.unread_count + EXCLUDED.unread_count`;
  // Inbox items for recipients; a group member who blocked the sender still sees the group's messages but gets no inbox item.
  const blockers = recipients.length
    ? (await db.block.findMany({ where: { blockedId: me, blockerId: { in: recipients } }, select: { blockerId: true } })).map(
        (b) => b.blockerId,
      )
    : [];
  await notifyAll(
    db,
    recipients.filter((r) => !blockers.includes(r)),
    me,
    {
      kind: 'message',
      text: line,
      entityType: 'conversation',
      entityId: conversation.id,
      ...(activityGroupId ? { groupId: activityGroupId } : {}),
    },
  );
  await appendEvent(db, {
    type: 'message.received',
    groupId: activityGroupId ?? null,
    actorId: me,
    recipients,
    data: { message_id: message.id, conversation_id: conversation.id, body: m.body, ...(m.about ? { about: m.about } : {}) },
    link: { entityType: 'conversation', entityId: conversation.id },
  });
  if (activityGroupId) {
    await appendActivity(db, {
      groupId: activityGroupId,
      actorId: me,
      action: 'message.sent',
      entityType: 'message',
      entityId: message.id,
      after: { conversation_id: conversation.id, about: m.about ?? null },
    });
  }
  return {
    message: toMessage({ ...message, sender: await db.agent.findUniqueOrThrow({ where: { id: me }, select: AGENT_REF_SELECT }) }),
    conversation_id: conversation.id,
  };
}
