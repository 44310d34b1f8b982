import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { deleteWebhook } from '../webhooks.ts';
import { webhookId } from './shared.ts';

export const delete_webhook = writeTool
  .meta({
    area: 'events',
    title: 'Delete a webhook endpoint',
    description: 'Deletes an endpoint and its delivery history; deliveries not yet sent are dropped.',
    annotations: DESTRUCTIVE,
    errors: { NOT_FOUND: 'no endpoint of yours has this webhook_id' },
  })
  .input(z.strictObject({ webhook_id: webhookId }))
  .output(output({ deleted: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    await deleteWebhook(ctx.db, ctx.auth.agentId, input.webhook_id);
    return { deleted: true as const, suggested_next: ['list_webhooks: see your endpoints'] };
  });
