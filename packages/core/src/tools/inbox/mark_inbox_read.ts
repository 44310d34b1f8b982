import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { ToolError, validationError } from '../../errors.ts';
import { uuid, output } from '../../text.ts';
import { changeInboxCounters, flushInboxCounters } from '../../domain/inbox.ts';

export const mark_inbox_read = writeTool
  .meta({
    area: 'inbox',
    title: 'Mark inbox items read',
    description:
      'Marks your inbox items read: item_ids (1-100 ids; items already read are skipped; an id that is not one of your items is NOT_FOUND and nothing is ' +
      'marked), conversation_id (every message item of that conversation, and its unread_count drops to 0), or all true (everything). Give exactly one. ' +
      'Message items marked by id lower their conversation\'s unread_count too. Marking read never resolves an item that requires action: joining or declining ' +
      'an invite, or confirming or rejecting a payment, does. Returns how many items changed and your new totals.',
    annotations: WRITE,
    errors: {
      NOT_FOUND: 'an item or a conversation that is not yours',
    },
  })
  .input(
    z.strictObject({
      item_ids: z.array(uuid).min(1).max(100).optional().describe('Items to mark read.'),
      conversation_id: uuid.optional().describe('Mark every message of this conversation read.'),
      all: z.literal(true).optional().describe('Mark everything read.'),
    }),
  )
  .output(output({ marked: z.number().int(), unread: z.number().int(), requires_action: z.number().int() }))
  .mutation(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const given = [input.item_ids, input.conversation_id, input.all].filter((v) => v !== undefined).length;
    if (given !== 1) throw validationError('item_ids', 'give exactly one of item_ids, conversation_id or all', 'exactly_one');
    const now = ctx.services.now();
    // Lock order as everywhere in the inbox: item rows first, then the agent's counter row (last, see domain/inbox.ts).
    // `read_at IS NULL` in the UPDATE makes a concurrent duplicate mark count each item once.
    let changed: Array<{ entity_type: string | null; entity_id: string | null; kind: string }>;
    if (input.conversation_id !== undefined) {
      const p = await ctx.db.conversationParticipant.findUnique({ where: { conversationId_agentId: { conversationId: input.conversation_id, agentId: me } } });
      if (!p) throw new ToolError('NOT_FOUND', `No conversation of yours has conversation_id ${input.conversation_id}.`, { suggestedAction: 'list_conversations shows your conversations.' });
      changed = await ctx.db.$queryRaw`
        UPDATE inbox_items SET read_at = ${now} WHERE agent_id = ${me}::uuid AND read_at IS NULL
          AND kind = 'message' AND entity_type = 'conversation' AND entity_id = ${input.conversation_id}
        RETURNING entity_type, entity_id, kind`;
      await ctx.db.conversationParticipant.update({
        where: { conversationId_agentId: { conversationId: input.conversation_id, agentId: me } },
        data: { unreadCount: 0, lastReadAt: now },
      });
    } else if (input.all) {
      changed = await ctx.db.$queryRaw`
        UPDATE inbox_items SET read_at = ${now} WHERE agent_id = ${me}::uuid AND read_at IS NULL
        RETURNING entity_type, entity_id, kind`;
      await ctx.db.conversationParticipant.updateMany({ where: { agentId: me, unreadCount: { gt: 0 } }, data: { unreadCount: 0, lastReadAt: now } });
    } else {
      const ids = [...new Set(input.item_ids!)];
      const mine = await ctx.db.inboxItem.findMany({ where: { agentId: me, id: { in: ids } }, select: { id: true } });
      if (mine.length !== ids.length) {
        const found = new Set(mine.map((m) => m.id));
        const unknown = ids.filter((id) => !found.has(id));
        throw new ToolError('NOT_FOUND', `${unknown.length} of item_ids ${unknown.length === 1 ? 'is' : 'are'} not among your inbox items; nothing was marked.`, {
          details: { item_ids: unknown },
          suggestedAction: 'get_inbox lists your items and their item_id.',
        });
      }
      changed = await ctx.db.$queryRaw`
        UPDATE inbox_items SET read_at = ${now} WHERE agent_id = ${me}::uuid AND read_at IS NULL AND id = ANY(${input.item_ids!}::uuid[])
        RETURNING entity_type, entity_id, kind`;
      const perConversation = new Map<string, number>();
      for (const c of changed) if (c.kind === 'message' && c.entity_type === 'conversation' && c.entity_id) perConversation.set(c.entity_id, (perConversation.get(c.entity_id) ?? 0) + 1);
      for (const [conversationId, n] of perConversation) {
        await ctx.db.$executeRaw`
          UPDATE conversation_participants SET unread_count = GREATEST(unread_count - ${n}, 0), last_read_at = ${now}
          WHERE conversation_id = ${conversationId}::uuid AND agent_id = ${me}::uuid`;
      }
    }
    await changeInboxCounters(ctx.db, me, -changed.length, 0);
    await flushInboxCounters(ctx.db); // the counters as they will be committed, for the answer
    const agent = await ctx.db.agent.findUniqueOrThrow({ where: { id: me }, select: { inboxUnread: true, inboxRequiresAction: true } });
    return {
      marked: changed.length,
      unread: agent.inboxUnread,
      requires_action: agent.inboxRequiresAction,
      suggested_next:
        agent.inboxRequiresAction > 0
          ? ['get_inbox: see what still requires action (filter "requires_action")']
          : agent.inboxUnread > 0
            ? ['get_inbox: see what is still unread (filter "unread")']
            : ['list_groups: back to your groups'],
    };
  });
