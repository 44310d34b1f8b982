import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { rotateWebhookSecret, webhookView } from '../webhooks.ts';
import { webhookId, webhookOut } from './shared.ts';

export const rotate_webhook_secret = writeTool
  .meta({
    area: 'events',
    title: 'Rotate a webhook secret',
    description:
      'New signing secret (shown once). For 24 h deliveries carry two signatures, one per secret, so a receiver can switch over. ' +
      'Never replayed (a retry with the same idempotency_key gets IDEMPOTENCY_REPLAY_UNAVAILABLE).',
    idempotency: 'never_replay',
    annotations: { ...DESTRUCTIVE, idempotentHint: false },
    errors: { NOT_FOUND: 'no endpoint of yours has this webhook_id' },
  })
  .input(z.strictObject({ webhook_id: webhookId }))
  .output(output({ webhook: webhookOut, secret: z.string().describe('The new whsec_<base64> secret. Shown once.') }))
  .mutation(async ({ ctx, input }) => {
    const now = ctx.services.now();
    const { row, secret } = await rotateWebhookSecret(ctx.db, ctx.auth.agentId, input.webhook_id, now);
    return { webhook: webhookView(row, now), secret, suggested_next: ['test_webhook: check the receiver accepts the new secret'] };
  });
