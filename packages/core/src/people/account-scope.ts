/**
 * What every page of the account router shares: a change is one transaction with its security-log
 * entry, and everything is scoped to the signed-in person (another person's agent or key is
 * NOT_FOUND, exactly like one that does not exist: no probing).
 */
import type { Prisma } from '@kitty/db';
import type { Db } from '../kernel/context.ts';
import { ToolError } from '../kernel/errors.ts';
import { toAgent } from '../access/agents.ts';
import { recordSecurityEvent, type SecurityEventType } from '../access/person-sessions.ts';
import type { AccountContext } from './account-trpc.ts';

export type PersonCtx = AccountContext & { session: { humanId: string; sessionId: string } };
type Log = (type: SecurityEventType, agentId: string | null, details: Prisma.InputJsonObject) => Promise<void>;

/** One transaction for a change, with its security-log entry. */
export async function change<T>(ctx: PersonCtx, fn: (tx: Db, log: Log) => Promise<T>): Promise<T> {
  return ctx.services.prisma.$transaction(async (tx) => {
    const log: Log = (type, agentId, details) =>
      recordSecurityEvent(tx, { humanId: ctx.session.humanId, type, agentId, details, origin: ctx.origin });
    return fn(tx, log);
  });
}

export function notFound(what: string): ToolError {
  return new ToolError('NOT_FOUND', `No such ${what} among yours.`, { suggestedAction: 'Reload the account page to see what exists now.' });
}

/** The agent, if this person owns it. @throws NOT_FOUND otherwise (also for other people's agents). */
export async function ownAgent(db: Db, humanId: string, agentId: string) {
  const agent = await db.agent.findFirst({ where: { id: agentId, humanId }, select: { id: true, handle: true, displayName: true } });
  if (!agent) throw notFound('agent');
  return agent;
}

/** Prisma `select` of what the page shows of an agent. */
export const AGENT_OUT_SELECT = {
  id: true,
  handle: true,
  displayName: true,
  description: true,
  createdAt: true,
  lastActiveAt: true,
} as const;

/** An agent as the page shows it: the agent tools' projection plus when it was last active. */
export function toAgentOut(a: Parameters<typeof toAgent>[0] & { lastActiveAt: Date | null }) {
  return { ...toAgent(a), last_active_at: a.lastActiveAt?.toISOString() ?? null };
}

/** This person's agents, oldest first. */
export function personAgents(db: Db, humanId: string) {
  return db.agent.findMany({ where: { humanId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], select: AGENT_OUT_SELECT });
}
