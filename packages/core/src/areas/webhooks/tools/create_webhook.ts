import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { output, text } from '../../../kernel/text.ts';
import { checkWebhookUrl, createWebhook, MAX_WEBHOOKS_PER_AGENT, webhookView } from '../webhooks.ts';
import { eventTypes, webhookOut } from './shared.ts';

export const create_webhook = writeTool
  .meta({
    area: 'events',
    title: 'Create a webhook endpoint',
    description:
      'Your events (as list_events shows them) POSTed to an https URL as they happen, signed per Standard Webhooks: webhook-id = event_id ' +
      '(the same on every retry), webhook-timestamp, webhook-signature = v1,<HMAC-SHA256 base64> with the secret. Any 2xx is delivered; ' +
      `others and timeouts (10 s) retry with backoff for 24 h, then the endpoint is disabled. The secret is shown once; never replayed (a retry with the same idempotency_key gets IDEMPOTENCY_REPLAY_UNAVAILABLE). At most ${MAX_WEBHOOKS_PER_AGENT} per agent.`,
    idempotency: 'never_replay',
    annotations: { ...WRITE, idempotentHint: false, openWorldHint: true },
    errors: {
      VALIDATION_ERROR: 'url is not https or resolves to a private, loopback or link-local address, or carries credentials',
      INVALID_STATE: `you already have ${MAX_WEBHOOKS_PER_AGENT} endpoints`,
    },
  })
  .input(
    z.strictObject({
      url: z.string().min(1).max(2000).describe('https:// URL that resolves to public addresses only.'),
      event_types: eventTypes.optional(),
      description: text(0, 200, 'description').nullable().optional().describe('Your note, ≤ 200 characters.'),
    }),
  )
  .output(output({ webhook: webhookOut, secret: z.string().describe('whsec_<base64>: verify signatures with it. Shown once.') }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const url = await checkWebhookUrl(input.url, ctx.services.config.webhookAllowLoopback ?? false, ctx.services.resolveHost);
    const now = ctx.services.now();
    const { row, secret } = await createWebhook(ctx.db, {
      agentId,
      url,
      description: input.description ?? null,
      eventTypes: input.event_types ?? null,
      now,
    });
    return {
      webhook: webhookView(row, now),
      secret,
      suggested_next: ['test_webhook: send a ping to check your receiver verifies it'],
    };
  });
