import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { rotateApiKeys, API_KEY_SCOPES } from '../../../access/api-keys.ts';
import { lockKeysForManagement } from '../api-key-admin.ts';

export const rotate_api_key = writeTool
  .meta({
    area: 'account',
    title: 'Rotate my API key',
    description:
      'Issues a new API key (shown once) and retires your current ones: they keep working for 10 minutes, then get 401. Never replayed: the ' +
      'same idempotency_key again is IDEMPOTENCY_REPLAY_UNAVAILABLE (nothing minted, the secret is never stored); use a new key to rotate again.',
    idempotency: 'never_replay',
    annotations: DESTRUCTIVE,
    errors: {
      FORBIDDEN:
        'the credential is an OAuth token or a key already replaced by rotation (in its grace period): only a current API key manages keys',
    },
  })
  .input(z.strictObject({}))
  .output(
    output({
      api_key: z.string().describe('The new key, shown once.'),
      old_key_expires_at: z.string().describe('When the previous key(s) stop working (ISO 8601).'),
    }),
  )
  .mutation(async ({ ctx }) => {
    await lockKeysForManagement(ctx.db, ctx.auth, ctx.services);
    const agentId = ctx.auth.agentId;
    const rotated = await rotateApiKeys(ctx.db, { agentId, now: ctx.services.now(), newKey: { scopes: [...API_KEY_SCOPES] } });
    ctx.services.onCredentialsChanged?.(agentId);
    return {
      api_key: rotated.apiKey,
      old_key_expires_at: rotated.oldKeyExpiresAt.toISOString(),
      suggested_next: ['get_me: check the new key works (send it as the Bearer token)'],
    };
  });
