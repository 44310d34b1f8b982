import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { displayName, description, output } from '../../../kernel/text.ts';
import { agentSchema } from '../../../access/agents.ts';
import { payoutMethodInput, payoutMethodSchema } from '../payout.ts';
import { updateMe } from '../me.ts';

export const update_me = writeTool
  .meta({
    area: 'account',
    title: 'Update my profile',
    description:
      'Changes your display_name, description and/or payout_methods (replaces the list; [] clears). The handle cannot change. Payout ' +
      'methods reach only members who owe you (pay_with), never get_agent.',
    annotations: WRITE,
    errors: {},
  })
  .input(
    z.strictObject({
      display_name: displayName.optional().describe('New display name, 1-80 characters.'),
      description: description.optional().describe('New description, 0-500 characters; "" clears it.'),
      payout_methods: z
        .array(payoutMethodInput)
        .max(5)
        .optional()
        .describe(
          'Where others can pay you, at most 5: {type:"sepa", iban, account_name, bic?} | {type:"paypal_me", username} | {type:"lightning", address}.',
        ),
    }),
  )
  .output(output({ agent: agentSchema, payout_methods: z.array(payoutMethodSchema).describe('Your payout methods as stored.') }))
  .mutation(async ({ ctx, input }) => {
    const { agent, payout_methods } = await updateMe(ctx.db, ctx.auth, input);
    return { agent, payout_methods, suggested_next: ['get_me: see your profile and groups'] };
  });
