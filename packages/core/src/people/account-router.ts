/**
 * The `account` router behind the account page (`/account`): a signed-in person's agents, API keys,
 * connected apps (OAuth grants), passkeys, a read-only overview and the security log.
 *
 * Rules (see trpc.ts for session and CSRF):
 * - every read and change is scoped to `ctx.session.humanId`: another person's agent, key, grant or
 *   passkey is NOT_FOUND, exactly like one that does not exist (no probing);
 * - every change is one transaction together with its security-log entry (recordSecurityEvent);
 * - agent creation and key rotation reuse the domain functions of register_agent and rotate_api_key;
 * - after a key or grant changes, `Services.onCredentialsChanged` drops authentication caches.
 * Types reach the browser through `AccountRouter` (apps/account imports the type only).
 */
import { z } from 'zod';
import type { Prisma } from '@kitty/db';
import type { Db } from '../kernel/context.ts';
import { ToolError } from '../kernel/errors.ts';
import { handle, displayName, description, text, uuid } from '../kernel/text.ts';
import { createAgentWithKey } from '../access/agents.ts';
import { digestApiKey, isWellFormedApiKey, rotateApiKeys } from '../access/api-keys.ts';
import { createApiKey, deleteApiKey, listApiKeys, toKey, MAX_KEY_EXPIRY_DAYS } from '../areas/account/api-key-admin.ts';

export { KEY_ACCESS, MAX_KEY_EXPIRY_DAYS, type KeyAccess } from '../areas/account/api-key-admin.ts';
import { toGroupSummary } from '../access/groups.ts';
import { formatMinor, toNumber } from '../kernel/money.ts';
import { decodeCursor, encodeCursor, UUID_CURSOR_ID } from '../kernel/cursor.ts';
import { recordSecurityEvent, type SecurityEventType } from '../access/person-sessions.ts';
import { accountRouterFactory, personProcedure, publicProcedure, type AccountContext } from './account-trpc.ts';
import { spendingCharts } from './stats.ts';

type PersonCtx = AccountContext & { session: { humanId: string; sessionId: string } };

/** One transaction for a change, with its security-log entry. */
async function change<T>(
  ctx: PersonCtx,
  fn: (tx: Db, log: (type: SecurityEventType, agentId: string | null, details: Prisma.InputJsonObject) => Promise<void>) => Promise<T>,
): Promise<T> {
  return ctx.services.prisma.$transaction(async (tx) => {
    const log = (type: SecurityEventType, agentId: string | null, details: Prisma.InputJsonObject) =>
      recordSecurityEvent(tx, { humanId: ctx.session.humanId, type, agentId, details, origin: ctx.origin });
    return fn(tx, log);
  });
}

function notFound(what: string): ToolError {
  return new ToolError('NOT_FOUND', `No such ${what} among yours.`, { suggestedAction: 'Reload the account page to see what exists now.' });
}

/** The agent, if this person owns it. @throws NOT_FOUND otherwise (also for other people's agents). */
async function ownAgent(db: Db, humanId: string, agentId: string) {
  const agent = await db.agent.findFirst({ where: { id: agentId, humanId }, select: { id: true, handle: true, displayName: true } });
  if (!agent) throw notFound('agent');
  return agent;
}

/** The key, if its agent belongs to this person. @throws NOT_FOUND otherwise. */
async function ownKey(db: Db, humanId: string, keyId: string) {
  const key = await db.apiKey.findFirst({
    where: { id: keyId, agent: { humanId } },
    include: { agent: { select: { id: true, handle: true } } },
  });
  if (!key) throw notFound('key');
  return key;
}

function toAgentOut(a: {
  id: string;
  handle: string;
  displayName: string;
  description: string | null;
  createdAt: Date;
  lastActiveAt: Date | null;
}) {
  return {
    agent_id: a.id,
    handle: a.handle,
    display_name: a.displayName,
    description: a.description,
    created_at: a.createdAt.toISOString(),
    last_active_at: a.lastActiveAt?.toISOString() ?? null,
  };
}

const keyLabel = text(1, 60, 'label');

export const accountRouter = accountRouterFactory({
  /** Who is signed in (null when nobody): the page redirects to the sign-in page on null. */
  session: publicProcedure.query(async ({ ctx }) => {
    if (!ctx.session) return { signed_in: false as const, human: null };
    const h = await ctx.services.prisma.human.findUnique({
      where: { id: ctx.session.humanId },
      select: { id: true, displayName: true, email: true, createdAt: true },
    });
    if (!h) return { signed_in: false as const, human: null };
    return {
      signed_in: true as const,
      human: { human_id: h.id, display_name: h.displayName, email: h.email, created_at: h.createdAt.toISOString() },
    };
  }),

  passkeys: accountRouterFactory({
    /** This person's passkeys and linked OpenID identities (the sign-in methods). */
    list: personProcedure.query(async ({ ctx }) => {
      const humanId = ctx.session.humanId;
      const [passkeys, identities] = await Promise.all([
        ctx.services.prisma.passkey.findMany({ where: { humanId }, orderBy: { createdAt: 'asc' } }),
        ctx.services.prisma.externalIdentity.findMany({ where: { humanId }, orderBy: { createdAt: 'asc' } }),
      ]);
      return {
        passkeys: passkeys.map((p) => ({
          passkey_id: p.id,
          name: p.name,
          device_type: p.deviceType,
          backed_up: p.backedUp,
          created_at: p.createdAt.toISOString(),
          last_used_at: p.lastUsedAt?.toISOString() ?? null,
        })),
        identities: identities.map((i) => ({ identity_id: i.id, issuer: i.issuer, email: i.email, created_at: i.createdAt.toISOString() })),
      };
    }),
    /** Renames a passkey (its name is the authenticator's at first, e.g. "iCloud Keychain"). */
    rename: personProcedure
      .input(z.strictObject({ passkey_id: z.string().min(1).max(1024), name: text(1, 60, 'name').trim().min(1, 'name must not be blank') }))
      .mutation(({ ctx, input }) =>
        change(ctx, async (tx, log) => {
          const passkey = await tx.passkey.findFirst({ where: { id: input.passkey_id, humanId: ctx.session.humanId } });
          if (!passkey) throw notFound('passkey');
          if (passkey.name === input.name) return { passkey_id: passkey.id, name: passkey.name };
          await tx.passkey.update({ where: { id: passkey.id }, data: { name: input.name } });
          await log('passkey_renamed', null, { passkey_name: input.name, previous_name: passkey.name });
          return { passkey_id: passkey.id, name: input.name };
        }),
      ),
    /** Removes a passkey. @throws INVALID_STATE when it is the last way to sign in. */
    remove: personProcedure.input(z.strictObject({ passkey_id: z.string().min(1).max(1024) })).mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const humanId = ctx.session.humanId;
        // Lock the person's row so two removals cannot both see "one more left".
        await tx.$queryRaw`SELECT id FROM humans WHERE id = ${humanId}::uuid FOR UPDATE`;
        const passkey = await tx.passkey.findFirst({ where: { id: input.passkey_id, humanId } });
        if (!passkey) throw notFound('passkey');
        const [passkeys, identities] = await Promise.all([
          tx.passkey.count({ where: { humanId } }),
          tx.externalIdentity.count({ where: { humanId } }),
        ]);
        if (passkeys + identities <= 1) {
          throw new ToolError('INVALID_STATE', 'This is your only way to sign in; removing it would lock you out.', {
            suggestedAction: 'Add another passkey first, then remove this one.',
          });
        }
        await tx.passkey.delete({ where: { id: passkey.id } });
        await log('passkey_removed', null, { passkey_name: passkey.name });
        return { removed: true };
      }),
    ),
  }),

  agents: accountRouterFactory({
    /** This person's agents, oldest first. */
    list: personProcedure.query(async ({ ctx }) => {
      const agents = await ctx.services.prisma.agent.findMany({
        where: { humanId: ctx.session.humanId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: { id: true, handle: true, displayName: true, description: true, createdAt: true, lastActiveAt: true },
      });
      return { agents: agents.map(toAgentOut) };
    }),
    /** Creates an agent owned by this person, with one read+write key (the secret is in this answer only). */
    create: personProcedure
      .input(z.strictObject({ handle, display_name: displayName, description: description.optional() }))
      .mutation(({ ctx, input }) =>
        change(ctx, async (tx, log) => {
          const created = await createAgentWithKey(
            tx,
            { handle: input.handle, displayName: input.display_name, description: input.description },
            { humanId: ctx.session.humanId },
          );
          await log('agent_created', created.agent.id, { handle: created.agent.handle });
          return { agent: toAgentOut(created.agent), api_key: created.apiKey };
        }),
      ),
    /**
     * Claims a headless agent by one of its current API keys (proof of control). The key is only
     * compared by digest and never stored or returned.
     * @throws VALIDATION_ERROR for a malformed key; NOT_FOUND for an unknown, revoked, expired or rotated key;
     *         FORBIDDEN when another person owns the agent; ALREADY_EXISTS when it is already yours
     */
    claim: personProcedure.input(z.strictObject({ api_key: z.string().min(1).max(200) })).mutation(({ ctx, input }) =>
      change(ctx, async (tx, log) => {
        const presented = input.api_key.trim();
        if (!isWellFormedApiKey(presented)) {
          throw new ToolError(
            'VALIDATION_ERROR',
            'api_key: this is not a Kitty API key (they start with "kitty_" and end with a checksum).',
            {
              details: {
                issues: [{ path: 'api_key', message: 'not a well-formed Kitty API key (typo or truncated?)', code: 'invalid_api_key' }],
              },
              suggestedAction: 'Paste the whole key the agent received from register_agent or rotate_api_key.',
            },
          );
        }
        const now = ctx.services.now();
        const key = await tx.apiKey.findUnique({
          where: { digest: digestApiKey(presented) },
          include: { agent: { select: { id: true, humanId: true } } },
        });
        if (!key || key.rotatedAt || (key.expiresAt && key.expiresAt.getTime() <= now.getTime())) {
          throw new ToolError(
            'NOT_FOUND',
            'This API key is unknown, revoked, expired or was rotated; it cannot prove control of an agent.',
            {
              suggestedAction: "Use the agent's current key (a rotated key is not enough).",
            },
          );
        }
        if (key.agent.humanId === ctx.session.humanId) {
          throw new ToolError('ALREADY_EXISTS', 'This agent is already yours.', { suggestedAction: 'Find it under My agents.' });
        }
        if (key.agent.humanId !== null) {
          throw new ToolError('FORBIDDEN', 'This agent belongs to another person and cannot be claimed.', {
            details: { reason: 'owned_by_another_person' },
            suggestedAction: 'Ask its owner to manage it, or register a new agent.',
          });
        }
        // Conditional update: two people claiming at once → exactly one wins.
        const won = await tx.agent.updateMany({ where: { id: key.agent.id, humanId: null }, data: { humanId: ctx.session.humanId } });
        if (won.count !== 1)
          throw new ToolError('FORBIDDEN', 'This agent was just claimed by someone else.', {
            details: { reason: 'owned_by_another_person' },
          });
        const agent = await tx.agent.findUniqueOrThrow({
          where: { id: key.agent.id },
          select: { id: true, handle: true, displayName: true, description: true, createdAt: true, lastActiveAt: true },
        });
        await log('agent_claimed', agent.id, { handle: agent.handle, key_prefix: key.prefix });
        return { agent: toAgentOut(agent) };
      }),
    ),
  }),

  keys: accountRouterFactory({
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
          label: keyLabel.optional(),
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
  }),

  apps: accountRouterFactory({
    /** Connected apps: OAuth grants of this person still in force, newest first. */
    list: personProcedure.query(async ({ ctx }) => {
      const rows = await ctx.services.prisma.oAuthConnection.findMany({
        where: { humanId: ctx.session.humanId, revokedAt: null },
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        include: { agent: { select: { id: true, handle: true, displayName: true } } },
      });
      return {
        apps: rows.map((c) => ({
          connection_id: c.id,
          client_id: c.clientId,
          client_name: c.clientName,
          client_host: c.clientHost,
          agent: { agent_id: c.agent.id, handle: c.agent.handle, display_name: c.agent.displayName },
          scopes: c.scopes,
          created_at: c.createdAt.toISOString(),
          last_used_at: c.lastUsedAt?.toISOString() ?? null,
        })),
      };
    }),
    /**
     * Disconnects an app: the grant is marked revoked and every stored token, code and grant record of it
     * (oauth_payloads with that grant id) is deleted in the same transaction.
     */
    disconnect: personProcedure.input(z.strictObject({ connection_id: z.string().min(1).max(200) })).mutation(async ({ ctx, input }) => {
      const agentId = await change(ctx, async (tx, log) => {
        const conn = await tx.oAuthConnection.findFirst({
          where: { id: input.connection_id, humanId: ctx.session.humanId, revokedAt: null },
        });
        if (!conn) throw notFound('connected app');
        await tx.oAuthConnection.update({ where: { id: conn.id }, data: { revokedAt: ctx.services.now() } });
        await tx.oAuthPayload.deleteMany({ where: { grantId: conn.id } });
        await log('app_disconnected', conn.agentId, { client_name: conn.clientName ?? conn.clientId, client_host: conn.clientHost });
        return conn.agentId;
      });
      ctx.services.onGrantRevoked?.(input.connection_id);
      ctx.services.onCredentialsChanged?.(agentId);
      return { disconnected: true };
    }),
  }),

  /** Read-only overview: per agent, its groups with balances and pending payments, and inbox counts. */
  overview: personProcedure.query(async ({ ctx }) => {
    const agents = await ctx.services.prisma.agent.findMany({
      where: { humanId: ctx.session.humanId },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: {
        id: true,
        handle: true,
        displayName: true,
        inboxUnread: true,
        inboxRequiresAction: true,
        memberships: {
          where: { leftAt: null, group: { archivedAt: null } },
          include: { group: true },
          orderBy: [{ group: { createdAt: 'desc' } }],
          take: 100,
        },
      },
    });
    return {
      agents: agents.map((a) => ({
        agent_id: a.id,
        handle: a.handle,
        display_name: a.displayName,
        inbox: { unread: a.inboxUnread, requires_action: a.inboxRequiresAction },
        groups: a.memberships.map((m) => ({
          ...toGroupSummary(m.group, m),
          pending_payments: m.pendingCount,
          balance_pending_minor: toNumber(m.balancePendingMinor),
          balance_pending: formatMinor(m.balancePendingMinor, m.group.currency),
        })),
      })),
    };
  }),

  /** Spending of one group of one of this person's agents, by month and by category (the overview's charts). */
  groupStats: personProcedure.input(z.strictObject({ agent_id: uuid, group_id: uuid })).query(async ({ ctx, input }) => {
    const db = ctx.services.prisma;
    const agent = await ownAgent(db, ctx.session.humanId, input.agent_id);
    return spendingCharts(db, agent.id, input.group_id);
  }),

  /** The security log, newest first; page with the previous answer's next_cursor. */
  securityLog: personProcedure
    .input(
      z.strictObject({
        cursor: z.string().min(1).max(200).nullish(),
        limit: z.number().int().min(1).max(100).optional(),
        /** Sent by tRPC's infinite-query integration; pages always go from newest to oldest. */
        direction: z.enum(['forward', 'backward']).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const take = input.limit ?? 50;
      const after = input.cursor ? decodeCursor(input.cursor, UUID_CURSOR_ID) : null;
      const rows = await ctx.services.prisma.securityEvent.findMany({
        where: {
          humanId: ctx.session.humanId,
          ...(after ? { OR: [{ createdAt: { lt: after.t } }, { createdAt: after.t, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: take + 1,
      });
      const page = rows.slice(0, take);
      const last = page[page.length - 1];
      const agentIds = [...new Set(page.map((e) => e.agentId).filter((x): x is string => !!x))];
      const agents = agentIds.length
        ? await ctx.services.prisma.agent.findMany({ where: { id: { in: agentIds } }, select: { id: true, handle: true } })
        : [];
      const handles = new Map(agents.map((a) => [a.id, a.handle]));
      return {
        events: page.map((e) => ({
          event_id: e.id,
          type: e.type as SecurityEventType,
          created_at: e.createdAt.toISOString(),
          ip: e.ip,
          user_agent: e.userAgent,
          agent_handle: e.agentId ? (handles.get(e.agentId) ?? null) : null,
          details: e.details as Record<string, unknown>,
        })),
        next_cursor: rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null,
      };
    }),
});

/** The account router's type: what the account page's tRPC client is typed from. */
export type AccountRouter = typeof accountRouter;
