import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output, text } from '../../../kernel/text.ts';
import { updateWebhook, webhookView } from '../webhooks.ts';
import { eventTypes, webhookId, webhookOut } from './shared.ts';

export const update_webhook = writeTool
  .meta({
    area: 'events',
    title: 'Update a webhook endpoint',
    description:
      'Changes what an endpoint receives or pauses it. Paused: nothing is sent; events wait in your feed and go out on resume (if still kept). ' +
      'paused=false also resumes an endpoint disabled after failing deliveries.',
    annotations: WRITE,
    errors: { NOT_FOUND: 'no endpoint of yours has this webhook_id' },
  })
  .input(
    z.strictObject({
      webhook_id: webhookId,
      event_types: eventTypes.optional().describe('Only these event types (null: all; omitted: unchanged).'),
      paused: z.boolean().optional().describe('true: stop sending; false: resume (also a disabled endpoint).'),
      description: text(0, 200, 'description').nullable().optional().describe('Your note, ≤ 200 characters.'),
    }),
  )
  .output(output({ webhook: webhookOut }))
  .mutation(async ({ ctx, input }) => {
    const now = ctx.services.now();
    const row = await updateWebhook(
      ctx.db,
      ctx.auth.agentId,
      input.webhook_id,
      { eventTypes: input.event_types, description: input.description, paused: input.paused },
      now,
    );
    return { webhook: webhookView(row, now), suggested_next: ['list_webhooks: see your endpoints'] };
  });
