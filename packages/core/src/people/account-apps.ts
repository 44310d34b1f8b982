/** The account page's connected apps: OAuth grants of this person still in force, and disconnecting one. */
import { z } from 'zod';
import { toAgentRef } from '../access/agents.ts';
import { accountRouterFactory, personProcedure } from './account-trpc.ts';
import { change, notFound } from './account-scope.ts';

export const appsRouter = accountRouterFactory({
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
        agent: toAgentRef(c.agent),
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
});
