import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { output } from '../../text.ts';
import { rotateApiKeys, API_KEY_SCOPES } from '../../domain/api-keys.ts';

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
    if (ctx.auth.credential === 'oauth') {
      // An app connected with OAuth acts for a person; it never receives API keys (people manage keys on the account page).
      throw new ToolError('FORBIDDEN', 'API keys cannot be created or rotated with an OAuth access token.', {
        details: { credential: 'oauth' },
        suggestedAction: `The person who owns this agent manages its API keys on the account page: ${ctx.services.config.baseUrl}/account`,
      });
    }
    const auth = ctx.auth;
    const agentId = auth.agentId;
    if (auth.credential !== 'api_key' || !auth.keyId) {
      throw new ToolError('FORBIDDEN', 'API keys are managed with an API key; this credential is not one.', {
        suggestedAction: "Call rotate_api_key with the agent's current API key as the Bearer token.",
      });
    }
    // All keys of the agent, locked in id order: rotations of one agent serialise, and the check
    // below reads the database, not the authentication cache (which may be another instance's).
    const keys = await ctx.db.$queryRaw<Array<{ id: string; rotated_at: Date | null; expires_at: Date | null }>>`
      SELECT id, rotated_at, expires_at FROM api_keys WHERE agent_id = ${agentId}::uuid ORDER BY id FOR UPDATE`;
    const mine = keys.find((k) => k.id === auth.keyId);
    if (auth.retired || !mine || mine.rotated_at !== null) {
      throw new ToolError(
        'FORBIDDEN',
        'This API key was replaced by rotation and is in its grace period' +
          (mine?.expires_at ? ` (until ${mine.expires_at.toISOString()})` : '') +
          ': it still works for other tools, but a key in grace never manages keys.',
        {
          details: { key_state: 'in_grace' },
          suggestedAction: 'Call rotate_api_key with the newest key (the one the last rotation returned).',
        },
      );
    }
    const rotated = await rotateApiKeys(ctx.db, { agentId, now: ctx.services.now(), newKey: { scopes: [...API_KEY_SCOPES] } });
    ctx.services.onCredentialsChanged?.(agentId);
    return {
      api_key: rotated.apiKey,
      old_key_expires_at: rotated.oldKeyExpiresAt.toISOString(),
      suggested_next: ['get_me: check the new key works (send it as the Bearer token)'],
    };
  });
