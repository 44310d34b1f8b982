/** Account page, API keys of one agent: list, create, rotate, revoke. */
import { z } from 'zod';
import { ToolError } from '../errors.ts';
import { uuid } from '../text.ts';
import { generateApiKey, rotateApiKeys } from '../domain/api-keys.ts';
import { accountRouterFactory, personProcedure } from './trpc.ts';
import { KEY_ACCESS, MAX_KEY_EXPIRY_DAYS, change, ownAgent, ownKey, toKey, keyLabel } from './shared.ts';

export const keysRouter = accountRouterFactory({
  /** The keys of one of this person's agents, newest first (secrets are never shown again). */
  list: personProcedure.input(z.strictObject({ agent_id: uuid })).query(async ({ ctx, input }) => {
    await ownAgent(ctx.services.prisma, ctx.session.humanId, input.agent_id);
    const keys = await ctx.services.prisma.apiKey.findMany({
      where: { agentId: input.agent_id },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    const now = ctx.services.now();
    return { keys: keys.map((k) => toKey(k, now)) };
  }),
  /** An extra key: read-only (svc:read) or read+write, optional label and expiry. The secret is in this answer only. */
  create: personProcedure
    .input(
      z.strictObject({
        agent_id: uuid,
        access: z.enum(['read', 'read_write']),
        label: keyLabel.optional(),
        expires_in_days: z.number().int().min(1).max(MAX_KEY_EXPIRY_DAYS).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const agent = await ownAgent(tx, ctx.session.humanId, input.agent_id);
        const now = ctx.services.now();
        const expiresAt = input.expires_in_days ? new Date(now.getTime() + input.expires_in_days * 86_400_000) : null;
        const key = generateApiKey();
        const row = await tx.apiKey.create({
          data: {
            agentId: agent.id,
            digest: key.digest,
            prefix: key.prefix,
            scopes: [...KEY_ACCESS[input.access]],
            label: input.label ?? null,
            expiresAt,
            createdAt: now,
          },
        });
        await log('key_created', agent.id, {
          handle: agent.handle,
          key_prefix: key.prefix,
          scopes: row.scopes,
          ...(expiresAt ? { expires_at: expiresAt.toISOString() } : {}),
        });
        return { key: toKey(row, now), api_key: key.key };
      }),
    ),
  /** Replaces a key: the new one keeps its scopes, label and expiry; the old one works 10 more minutes. */
  rotate: personProcedure.input(z.strictObject({ key_id: uuid })).mutation(async ({ ctx, input }) => {
    const out = await change(ctx, async (tx, log) => {
      const key = await ownKey(tx, ctx.session.humanId, input.key_id);
      const now = ctx.services.now();
      if (key.rotatedAt || (key.expiresAt && key.expiresAt.getTime() <= now.getTime())) {
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
      await tx.apiKey.delete({ where: { id: key.id } });
      await log('key_revoked', key.agentId, { handle: key.agent.handle, key_prefix: key.prefix });
      return key.agentId;
    });
    ctx.services.onCredentialsChanged?.(agentId);
    return { revoked: true };
  }),
});
