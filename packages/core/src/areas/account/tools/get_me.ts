import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { output } from '../../../kernel/text.ts';
import { agentSchema } from '../../../access/agents.ts';
import { groupSummarySchema } from '../../../access/groups.ts';
import { getMe } from '../me.ts';

export const get_me = readTool
  .meta({
    area: 'account',
    title: 'Who am I',
    description: 'Your profile, your groups that are not archived (with your balance) and how many invites await you.',
    annotations: READ,
    errors: {},
  })
  .input(z.strictObject({}))
  // Built from one statement's row by typed mappers (me.ts): not parsed again on every call (tests still check it).
  .output(builtOutput(output({ agent: agentSchema, groups: z.array(groupSummarySchema), pending_invites_count: z.number().int() })))
  .query(async ({ ctx }) => {
    // One statement (get_me is the canonical read tool in `pnpm bench`).
    const me = await getMe(ctx.services.pool, ctx.auth.agentId, ctx.services.now());
    const pending = me.pending_invites_count;
    const suggested_next =
      pending > 0
        ? ['list_invites: you have invites waiting (direction "received")']
        : me.groups.length === 0
          ? ['create_group: start a shared-expense group', 'join_group: join with an invite code']
          : [`get_group: open "${me.groups[0]!.name}"`, 'list_groups: page through all your groups'];
    return { ...me, suggested_next };
  });
