import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { WRITE } from '../../../kernel/meta.ts';
import { validationError } from '../../../kernel/errors.ts';
import { output, text, expiresIn, durationSeconds } from '../../../kernel/text.ts';
import { apiKeySchema, createApiKey, lockKeysForManagement, logKeyEvent, toKey, MAX_KEY_EXPIRY_DAYS } from '../api-key-admin.ts';

const SCOPES_RULE = 'scopes must be ["svc:read"] or ["svc:read","svc:write"]';

export const create_api_key = writeTool
  .meta({
    area: 'account',
    title: 'Create an API key',
    description:
      'Creates another API key for you, e.g. a read-only one for a helper. The secret is in this answer only and never stored: the ' +
      'same idempotency_key again is IDEMPOTENCY_REPLAY_UNAVAILABLE (nothing minted); list_api_keys and revoke_api_key manage keys.',
    idempotency: 'never_replay',
    annotations: WRITE,
    errors: {
      FORBIDDEN: 'an OAuth token, a key in its rotation grace or a read-only key: only a current read+write API key manages keys',
      VALIDATION_ERROR: `${SCOPES_RULE}; expires_in over ${MAX_KEY_EXPIRY_DAYS}d`,
    },
  })
  .input(
    z.strictObject({
      scopes: z
        .array(z.enum(['svc:read', 'svc:write']))
        .min(1)
        .max(2)
        .refine((s) => s.includes('svc:read') && new Set(s).size === s.length, SCOPES_RULE)
        .describe('["svc:read"]: read-only; ["svc:read","svc:write"]: read and write.'),
      label: text(1, 60, 'label').optional().describe('Your name for it, e.g. "reporting helper".'),
      expires_in: expiresIn.optional().describe(`e.g. 12h, 90d (at most ${MAX_KEY_EXPIRY_DAYS}d); default never.`),
    }),
  )
  .output(output({ api_key: z.string().describe('The secret, shown only here.'), key: apiKeySchema }))
  .mutation(async ({ ctx, input }) => {
    const seconds = input.expires_in === undefined ? null : durationSeconds(input.expires_in);
    if (seconds !== null && seconds > MAX_KEY_EXPIRY_DAYS * 86_400)
      throw validationError('expires_in', `must be at most ${MAX_KEY_EXPIRY_DAYS}d`, 'too_big');
    await lockKeysForManagement(ctx.db, ctx.auth, ctx.services);
    const now = ctx.services.now();
    const { row, apiKey } = await createApiKey(ctx.db, {
      agentId: ctx.auth.agentId,
      access: input.scopes.includes('svc:write') ? 'read_write' : 'read',
      label: input.label ?? null,
      expiresAt: seconds === null ? null : new Date(now.getTime() + seconds * 1000),
      now,
    });
    await logKeyEvent(ctx.db, ctx.auth.agentId, 'key_created', { key_prefix: row.prefix, scopes: row.scopes });
    return {
      api_key: apiKey,
      key: toKey(row, now),
      suggested_next: ['list_api_keys: see every key of yours', `revoke_api_key: withdraw ${row.id} when it is no longer needed`],
    };
  });
