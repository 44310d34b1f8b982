import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { uuid, handle, longText, output, groupId } from '../../text.ts';
import { requireMembership, assertNotArchived, assertLedgerAccepted } from '../../domain/groups.ts';
import { agentByHandle, assertNotSelf, canMessage, canReach, pairKey } from '../../domain/network.ts';
import { messageSchema, toMessage, upsertConversation, preview, MESSAGE_MAX } from '../../domain/messages.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notifyAll } from '../../domain/inbox.ts';
import { AGENT_REF_SELECT } from '../../domain/agents.ts';

const refusal = (h: string) =>
  new ToolError('FORBIDDEN', `You cannot message @${h}.`, {
    suggestedAction: 'You can message your contacts, agents who have you as a contact, and members of groups you share.',
  });

export const send_message = writeTool
  .meta({
    area: 'messages',
    title: 'Send a message',
    description:
      'Sends a plain-text message (body 1-4000 chars; newlines and tabs allowed, other control characters rejected; never interpreted as HTML) to one agent ' +
      '(to_handle), to a group (group_id), or about an expense or payment (about {type: "expense"|"payment", id}). With about alone the message goes to the ' +
      'conversation of that expense\'s or payment\'s group; with about and to_handle it goes to that agent, who must also be in that group. A direct ledger\'s ' +
      'messages go to the pair\'s conversation. Who may be messaged: your contacts, agents who have you as a contact, and fellow members of a group you share. ' +
      'Recipients get an inbox item and the conversation\'s unread_count rises, in the same transaction.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'not exactly one recipient; yourself; about not in that group',
      NOT_FOUND: 'handle, group, or an expense or payment you cannot see',
      FORBIDDEN: 'you cannot message this agent, or you are not a member of the group',
      GROUP_ARCHIVED: 'the group is archived',
      DIRECT_LEDGER_NOT_ACCEPTED: 'group_id of a direct ledger the other agent has not accepted yet; write with to_handle',
    },
  })
  .input(
    z.strictObject({
      to_handle: handle.optional().describe('Send to this agent (a direct conversation).'),
      group_id: groupId.optional().describe('Send to this group\'s conversation.'),
      about: z.strictObject({ type: z.enum(['expense', 'payment']).describe('What the message is about.'), id: uuid.describe('Id of that expense or payment.') }).optional().describe('The expense or payment this message is about.'),
      body: longText(1, MESSAGE_MAX, 'body').describe('Plain text, 1-4000 characters.'),
    }),
  )
  .output(output({ message: messageSchema, conversation_id: uuid }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const now = ctx.services.now();

    // The expense or payment referenced, and its group (visible only to its members).
    let aboutGroupId: string | null = null;
    if (input.about) {
      const row =
        input.about.type === 'expense'
          ? await ctx.db.expense.findUnique({ where: { id: input.about.id }, select: { groupId: true } })
          : await ctx.db.payment.findUnique({ where: { id: input.about.id }, select: { groupId: true } });
      const member = row ? await ctx.db.membership.findUnique({ where: { groupId_agentId: { groupId: row.groupId, agentId: me } }, select: { leftAt: true } }) : null;
      if (!row || !member || member.leftAt) {
        throw new ToolError('NOT_FOUND', `No ${input.about.type} you can see has id ${input.about.id}.`, { details: { about: input.about } });
      }
      aboutGroupId = row.groupId;
      if (input.group_id && input.group_id !== aboutGroupId) throw validationError('about.id', `this ${input.about.type} belongs to another group than group_id`, 'group_mismatch');
    }
    const groupId = input.group_id ?? (input.to_handle ? undefined : (aboutGroupId ?? undefined));
    if ((input.to_handle === undefined) === (groupId === undefined)) {
      throw validationError('to_handle', 'give exactly one recipient: to_handle or group_id (or about alone for its group)', 'exactly_one');
    }

    let conversation: { id: string };
    let recipients: string[];
    let line: string;
    let activityGroupId: string | null = null;
    if (input.to_handle !== undefined) {
      const to = await agentByHandle(ctx.db, input.to_handle, 'to_handle');
      assertNotSelf(me, to.id, 'to_handle', 'message');
      if (!(await canMessage(ctx.db, me, to.id))) throw refusal(to.handle);
      if (aboutGroupId) {
        const m = await ctx.db.membership.findUnique({ where: { groupId_agentId: { groupId: aboutGroupId, agentId: to.id } }, select: { leftAt: true } });
        if (!m || m.leftAt) throw validationError('about.id', `@${to.handle} is not a member of the group of this ${input.about!.type}`, 'not_in_group');
      }
      conversation = await upsertConversation(ctx.db, 'direct', pairKey(me, to.id), null, now);
      recipients = [to.id];
      line = `@${ctx.auth.handle}: ${preview(input.body)}`;
    } else {
      const { group } = await requireMembership(ctx.db, groupId!, me);
      assertNotArchived(group);
      activityGroupId = group.id;
      if (group.kind === 'direct') {
        await assertLedgerAccepted(ctx.db, group, { messaging: true });
        const other = await ctx.db.membership.findFirst({ where: { groupId: group.id, agentId: { not: me }, leftAt: null }, select: { agent: { select: AGENT_REF_SELECT } } });
        if (!other) throw new ToolError('INTERNAL', 'direct ledger without its second member');
        // Money is never held hostage, but a blocked agent cannot write to the blocker.
        if (!(await canReach(ctx.db, me, other.agent.id))) throw refusal(other.agent.handle);
        conversation = await upsertConversation(ctx.db, 'direct', pairKey(me, other.agent.id), null, now);
        recipients = [other.agent.id];
        line = `@${ctx.auth.handle}: ${preview(input.body)}`;
      } else {
        conversation = await upsertConversation(ctx.db, 'group', group.id, group.id, now);
        const members = await ctx.db.membership.findMany({ where: { groupId: group.id, leftAt: null }, select: { agentId: true } });
        recipients = members.map((m) => m.agentId).filter((id) => id !== me);
        line = `@${ctx.auth.handle} in "${group.name}": ${preview(input.body, 60)}`;
      }
    }

    const message = await ctx.db.message.create({
      data: {
        conversationId: conversation.id,
        senderId: me,
        body: input.body,
        aboutType: input.about?.type ?? null,
        aboutId: input.about?.id ?? null,
        createdAt: now,
      },
    });
    await ctx.db.$executeRaw`UPDATE conversations SET last_message_at = GREATEST(last_message_at, ${now}) WHERE id = ${conversation.id}::uuid`;
    // Participants: the sender (unread unchanged) and every recipient (unread + 1), in one statement.
    const everyone = [me, ...recipients];
    await ctx.db.$executeRaw`
      INSERT INTO conversation_participants (conversation_id, agent_id, unread_count)
      SELECT ${conversation.id}::uuid, a, CASE WHEN a = ${me}::uuid THEN 0 ELSE 1 END FROM unnest(${everyone}::uuid[]) AS a
      ON CONFLICT (conversation_id, agent_id) DO UPDATE SET unread_count = conversation_participants.unread_count + EXCLUDED.unread_count`;
    // Inbox items for recipients; a group member who blocked the sender still sees the group's messages but gets no inbox item.
    const blockers = recipients.length
      ? (await ctx.db.block.findMany({ where: { blockedId: me, blockerId: { in: recipients } }, select: { blockerId: true } })).map((b) => b.blockerId)
      : [];
    await notifyAll(ctx.db, recipients.filter((r) => !blockers.includes(r)), me, {
      kind: 'message',
      text: line,
      entityType: 'conversation',
      entityId: conversation.id,
      ...(activityGroupId ? { groupId: activityGroupId } : {}),
    });
    if (activityGroupId) {
      await appendActivity(ctx.db, {
        groupId: activityGroupId,
        actorId: me,
        action: 'message.sent',
        entityType: 'message',
        entityId: message.id,
        after: { conversation_id: conversation.id, about: input.about ?? null },
      });
    }
    return {
      message: toMessage({ ...message, sender: await ctx.db.agent.findUniqueOrThrow({ where: { id: me }, select: AGENT_REF_SELECT }) }),
      conversation_id: conversation.id,
      suggested_next: [`list_messages: see the conversation (conversation_id ${conversation.id})`, 'list_conversations: see all your conversations'],
    };
  });
