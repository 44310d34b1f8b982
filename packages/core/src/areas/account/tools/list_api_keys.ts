import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { apiKeySchema, assertKeyCredential, listApiKeys } from '../api-key-admin.ts';

export const list_api_keys = readTool
  .meta({
    area: 'account',
    title: 'List my API keys',
    description: 'Your API keys, newest first, with scopes, label, expiry and status; never a secret. current marks the key of this call.',
    annotations: READ,
    errors: { FORBIDDEN: 'an OAuth token or a key in its rotation grace: only a current API key manages keys' },
  })
  .input(z.strictObject({}))
  .output(output({ keys: z.array(apiKeySchema.extend({ current: z.boolean().describe('The key of this call.') })) }))
  .query(async ({ ctx }) => {
    const { keyId } = assertKeyCredential(ctx.auth, ctx.services);
    const keys = await listApiKeys(ctx.db, ctx.auth.agentId, ctx.services.now());
    return {
      keys: keys.map((k) => ({ ...k, current: k.key_id === keyId })),
      suggested_next: ['create_api_key: a read-only key for a helper', 'revoke_api_key: withdraw a key you no longer use'],
    };
  });
