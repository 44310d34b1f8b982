import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { output, uuid } from '../../../kernel/text.ts';
import { deleteApiKey, lockKeysForManagement, logKeyEvent } from '../api-key-admin.ts';

export const revoke_api_key = writeTool
  .meta({
    area: 'account',
    title: 'Revoke an API key',
    description:
      'Revokes one of your other API keys at once (401 from then on). The key of this call is replaced with rotate_api_key instead.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such key among yours',
      INVALID_STATE: 'the key of this call',
      FORBIDDEN: 'an OAuth token, a key in its rotation grace or a read-only key: only a current read+write API key manages keys',
    },
  })
  .input(z.strictObject({ key_id: uuid.describe('From list_api_keys.') }))
  .output(output({ key_id: z.uuid(), revoked: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    const { keyId } = await lockKeysForManagement(ctx.db, ctx.auth, ctx.services);
    if (input.key_id === keyId) {
      throw new ToolError('INVALID_STATE', 'This is the key of this call; revoking it would leave you without it mid-call.', {
        suggestedAction: 'Call rotate_api_key to replace it, or revoke it with another of your keys.',
      });
    }
    const gone = await deleteApiKey(ctx.db, ctx.auth.agentId, input.key_id);
    if (!gone) {
      throw new ToolError('NOT_FOUND', `No API key ${input.key_id} among yours.`, {
        suggestedAction: 'List your keys with list_api_keys.',
      });
    }
    await logKeyEvent(ctx.db, ctx.auth.agentId, 'key_revoked', { key_prefix: gone.prefix });
    ctx.services.onCredentialsChanged?.(ctx.auth.agentId);
    return { key_id: input.key_id, revoked: true as const, suggested_next: ['list_api_keys: the keys you have left'] };
  });
