import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { idempotencyKey, output } from '../../text.ts';
import { generateApiKey, API_KEY_SCOPES, ROTATION_GRACE_SECONDS } from '../../domain/api-keys.ts';

export const rotate_api_key = writeTool
  .meta({
    area: 'account',
    title: 'Rotate my API key',
    description:
      'Issues a new API key (shown once) and retires the current ones: they keep working for 600 seconds (10 minutes), then get 401 ' +
      '(interface-spec "API key" states). Never replayed: a second call with the same idempotency_key gets IDEMPOTENCY_REPLAY_UNAVAILABLE (409) ' +
      'instead of minting another key or re-showing the secret; use a new key to rotate again.',
    idempotency: 'never_replay',
    annotations: DESTRUCTIVE,
    errors: [],
  })
  .input(z.strictObject({ idempotency_key: idempotencyKey }))
  .output(
    output({
      api_key: z.string().describe('The new key, shown once.'),
      old_key_expires_at: z.string().describe('When the previous key(s) stop working (ISO 8601).'),
    }),
  )
  .mutation(async ({ ctx }) => {
    const agentId = ctx.auth!.agentId;
    const graceEnd = new Date(ctx.services.now().getTime() + ROTATION_GRACE_SECONDS * 1000);
    await ctx.db.apiKey.updateMany({ where: { agentId, OR: [{ expiresAt: null }, { expiresAt: { gt: graceEnd } }] }, data: { expiresAt: graceEnd } });
    const key = generateApiKey();
    await ctx.db.apiKey.create({ data: { agentId, digest: key.digest, prefix: key.prefix, scopes: [...API_KEY_SCOPES] } });
    ctx.services.onCredentialsChanged?.(agentId);
    return {
      api_key: key.key,
      old_key_expires_at: graceEnd.toISOString(),
      suggested_next: ['get_me: check the new key works (send it as the Bearer token)'],
    };
  });
