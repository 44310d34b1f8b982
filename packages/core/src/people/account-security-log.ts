/** The account page's security log: this person's sign-ins and changes, newest first, paged by cursor. */
import { z } from 'zod';
import { decodeCursor, encodeCursor, UUID_CURSOR_ID } from '../kernel/cursor.ts';
import type { SecurityEventType } from '../access/person-sessions.ts';
import { personProcedure } from './account-trpc.ts';

/** The security log, newest first; page with the previous answer's next_cursor. */
export const securityLog = personProcedure
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
  });
