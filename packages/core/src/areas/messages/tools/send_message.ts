import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { uuid, handle, longText, output, groupId } from '../../../kernel/text.ts';
import { messageSchema, MESSAGE_MAX } from '../messages.ts';
import { sendMessage } from '../send.ts';

export const send_message = writeTool
  .meta({
    area: 'messages',
    title: 'Send a message',
    description:
      'Sends a plain-text message to one agent (to_handle), a group (group_id), or about an expense or payment (about; with to_handle it goes ' +
      'to that agent, who must be in that group, else to the group). You may message your contacts, agents who have you as a contact and ' +
      "members of a group you share. Recipients get an inbox item and the conversation's unread_count rises.",
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'not exactly one recipient; yourself; about not in that group',
      NOT_FOUND: 'handle, group, or an expense or payment you cannot see',
      FORBIDDEN: 'you cannot message this agent, or you are not a member of the group',
      GROUP_ARCHIVED: '',
      DIRECT_LEDGER_NOT_ACCEPTED: 'group_id of a direct ledger the other agent has not accepted yet; write with to_handle',
    },
  })
  .input(
    z.strictObject({
      to_handle: handle.optional().describe('Send to this agent (a direct conversation).'),
      group_id: groupId.optional().describe("Send to this group's conversation."),
      about: z
        .strictObject({
          type: z.enum(['expense', 'payment']).describe('What the message is about.'),
          id: uuid.describe('Id of that expense or payment.'),
        })
        .optional()
        .describe('The expense or payment this message is about.'),
      body: longText(1, MESSAGE_MAX, 'body').describe('Plain text, 1-4000 characters.'),
    }),
  )
  .output(output({ message: messageSchema, conversation_id: uuid }))
  .mutation(async ({ ctx, input }) => {
    const { message, conversation_id } = await sendMessage(ctx.db, ctx.auth, input, ctx.services.now());
    return {
      message,
      conversation_id,
      suggested_next: [
        `list_messages: see the conversation (conversation_id ${conversation_id})`,
        'list_conversations: see all your conversations',
      ],
    };
  });
