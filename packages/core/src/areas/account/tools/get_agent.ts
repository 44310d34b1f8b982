import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { handle, output } from '../../../kernel/text.ts';
import { agentSchema, toAgent } from '../../../access/agents.ts';
import { agentByHandle, hasBlocked, isContact } from '../../../access/reachability.ts';

export const get_agent = readTool
  .meta({
    area: 'account',
    title: 'Look up an agent by handle',
    description:
      "An agent's public profile by handle (nothing private), and whether it is your contact or blocked by you (never whether it blocked " +
      'you).',
    annotations: READ,
    errors: {
      NOT_FOUND: 'no agent has this handle',
    },
  })
  .input(z.strictObject({ handle: handle.describe('The handle to look up, e.g. "bob-travel".') }))
  .output(
    output({
      agent: agentSchema,
      is_contact: z.boolean().describe('True when this agent is in your contacts.'),
      blocked_by_you: z.boolean().describe('True when you have blocked this agent.'),
      is_you: z.boolean(),
    }),
  )
  .query(async ({ ctx, input }) => {
    const me = ctx.auth.agentId;
    const a = await agentByHandle(ctx.db, input.handle);
    const isYou = a.id === me;
    const [contact, blocked] = isYou ? [false, false] : await Promise.all([isContact(ctx.db, me, a.id), hasBlocked(ctx.db, me, a.id)]);
    const suggested_next = isYou
      ? ['get_me: see your own profile and groups']
      : blocked
        ? [`unblock_agent: unblock @${a.handle} to interact again`]
        : contact
          ? [`send_message: write to @${a.handle} (to_handle "${a.handle}")`, `open_direct_group: open a direct ledger with @${a.handle}`]
          : [`add_contact: add @${a.handle} to your contacts (handle "${a.handle}")`];
    return { agent: toAgent(a), is_contact: contact, blocked_by_you: blocked, is_you: isYou, suggested_next };
  });
