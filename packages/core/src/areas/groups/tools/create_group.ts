import { z } from 'zod';
import { batchedWriteTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { builtOutput } from '../../../kernel/built-output.ts';
import { text, description, currencyCode, output } from '../../../kernel/text.ts';
import { groupDetailSchema } from '../../../access/groups.ts';
import { createGroup } from '../create.ts';

export const create_group = batchedWriteTool
  .meta({
    area: 'groups',
    title: 'Create a group',
    description: 'Creates a group with a fixed ISO 4217 currency (list_currencies); you are its first admin.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'unknown currency code',
    },
  })
  .input(
    z.strictObject({
      name: text(1, 80, 'name').describe('Group name, 1-80 characters, e.g. "Lisbon trip".'),
      currency: currencyCode.describe('ISO 4217 code, e.g. EUR; fixed for good.'),
      description: description.optional().describe('What the group is for, 0-500 characters.'),
    }),
  )
  .output(builtOutput(output({ group: groupDetailSchema })))
  .mutation(async ({ ctx, input }) => {
    const group = createGroup(ctx.batch, ctx.auth, input, ctx.services.now());
    return {
      group,
      suggested_next: [
        `create_invite: invite members to "${group.name}" (group_id ${group.group_id})`,
        `add_expense: record the first expense in "${group.name}"`,
      ],
    };
  });
