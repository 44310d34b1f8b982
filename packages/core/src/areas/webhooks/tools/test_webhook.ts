import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { ownWebhook, queuePing } from '../webhooks.ts';
import { webhookId } from './shared.ts';

export const test_webhook = writeTool
  .meta({
    area: 'events',
    title: 'Send a test event',
    description:
      'Queues a signed `ping` event ({type: "ping", data: {webhook_id}}) to the endpoint, also when paused; its result shows in list_webhooks within seconds.',
    annotations: { ...WRITE, openWorldHint: true },
    errors: { NOT_FOUND: 'no endpoint of yours has this webhook_id' },
  })
  .input(z.strictObject({ webhook_id: webhookId }))
  .output(output({ event_id: z.string().describe('The webhook-id of the ping.') }))
  .mutation(async ({ ctx, input }) => {
    await ownWebhook(ctx.db, ctx.auth.agentId, input.webhook_id);
    const eventId = await queuePing(ctx.db, ctx.auth.agentId, input.webhook_id, ctx.services.now());
    return { event_id: eventId, suggested_next: ['list_webhooks: see the delivery'] };
  });
