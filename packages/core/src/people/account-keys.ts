/**
 * The account page's API keys of one agent: list, create (read-only or read+write, label, expiry),
 * rotate one key, revoke one key — on the same functions as the key tools (areas/account/api-key-admin.ts,
 * access/api-keys.ts). After a change, `Services.onCredentialsChanged` drops authentication caches.
 */
import { z } from 'zod';
import type { Db } from '../kernel/context.ts';
import { ToolError } from '../kernel/errors.ts';
import { text, uuid } from '../kernel/text.ts';
import { rotateApiKeys } from '../access/api-keys.ts';
import { createApiKey, deleteApiKey, listApiKeys, toKey, MAX_KEY_EXPIRY_DAYS } from '../areas/account/api-key-admin.ts';
import { accountRouterFactory, personProcedure } from './account-trpc.ts';
import { change, notFound, ownAgent } from './account-scope.ts';

/** The key, if its agent belongs to this person. @throws NOT_FOUND otherwise. */
async function ownKey(db: Db, humanId: string, keyId: string) {
  const key = await db.apiKey.findFirst({
    where: { id: keyId, agent: { humanId } },
    include: { agent: { select: { id: true, handle: true } } },
  });
  if (!key) throw notFound('key');
  return key;
}

export const keysRouter = accountRouterFactory({
  /** The keys of one of this person's agents, newest first (secrets are never shown again). */
  list: personProcedure.input(z.strictObject({ agent_id: uuid })).query(async ({ ctx, input }) => {
    await ownAgent(ctx.services.prisma, ctx.session.humanId, input.agent_id);
    return { keys: await listApiKeys(ctx.services.prisma, input.agent_id, ctx.services.now()) };
  }),
  /** An extra key: read-only (svc:read) or read+write, optional label and expiry. The secret is in this answer only. */
  create: personProcedure
    .input(
      z.strictObject({
        agent_id: uuid,
        access: z.enum(['read', 'read_write']),
        label: text(1, 60, 'label').optional(),
        expires_in_days: z.number().int().min(1).max(MAX_KEY_EXPIRY_DAYS).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const agent = await ownAgent(tx, ctx.session.humanId, input.agent_id);
        const now = ctx.services.now();
        const expiresAt = input.expires_in_days ? new Date(now.getTime() + input.expires_in_days * 86_400_000) : null;
        const { row, apiKey } = await createApiKey(tx, { agentId: agent.id, access: input.access, label: input.label, expiresAt, now });
        await log('key_created', agent.id, {
          handle: agent.handle,
          key_prefix: row.prefix,
          ...(row.label ? { key_label: row.label } : {}),
          scopes: row.scopes,
          ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}),
        });
        return { key: toKey(row, now), api_key: apiKey };
      }),
    ),
  /** Replaces a key: the new one keeps its scopes, label and expiry; the old one works 10 more minutes. */
  rotate: personProcedure.input(z.strictObject({ key_id: uuid })).mutation(async ({ ctx, input }) => {
    const out = await change(ctx, async (tx, log) => {
      const key = await ownKey(tx, ctx.session.humanId, input.key_id);
      const now = ctx.services.now();
      if (toKey(key, now).status !== 'active') {
        throw new ToolError('INVALID_STATE', 'This key was already rotated or has expired; rotate the current key instead.', {
          suggestedAction: 'Rotate the key marked active, or create a new key.',
        });
      }
      const rotated = await rotateApiKeys(tx, {
        agentId: key.agentId,
        now,
        keyIds: [key.id],
        newKey: { scopes: key.scopes, label: key.label, expiresAt: key.expiresAt },
      });
      await log('key_rotated', key.agentId, {
        handle: key.agent.handle,
        key_prefix: key.prefix,
        ...(key.label ? { key_label: key.label } : {}),
        new_key_prefix: rotated.prefix,
        old_key_expires_at: rotated.oldKeyExpiresAt.toISOString(),
      });
      const row = await tx.apiKey.findUniqueOrThrow({ where: { id: rotated.keyId } });
      return {
        agentId: key.agentId,
        result: { key: toKey(row, now), api_key: rotated.apiKey, old_key_expires_at: rotated.oldKeyExpiresAt.toISOString() },
      };
    });
    ctx.services.onCredentialsChanged?.(out.agentId);
    return out.result;
  }),
  /** Revokes a key at once: the row is deleted and authentication caches drop it. */
  revoke: personProcedure.input(z.strictObject({ key_id: uuid })).mutation(async ({ ctx, input }) => {
    const agentId = await change(ctx, async (tx, log) => {
      const key = await ownKey(tx, ctx.session.humanId, input.key_id);
      await deleteApiKey(tx, key.agentId, key.id);
      await log('key_revoked', key.agentId, {
        handle: key.agent.handle,
        key_prefix: key.prefix,
        ...(key.label ? { key_label: key.label } : {}),
      });
      return key.agentId;
    });
    ctx.services.onCredentialsChanged?.(agentId);
    return { revoked: true };
  }),
});
