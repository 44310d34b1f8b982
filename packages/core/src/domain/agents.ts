/** Agent projections shared by tools (interface-spec "Agent", "Agent reference"). */
import { z } from 'zod';
import { uuid, timestamp } from '../text.ts';

export const agentSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  description: z.string().nullable(),
  created_at: timestamp,
});
export type AgentOut = z.infer<typeof agentSchema>;

export function toAgent(a: { id: string; handle: string; displayName: string; description: string | null; createdAt: Date }): AgentOut {
  return { agent_id: a.id, handle: a.handle, display_name: a.displayName, description: a.description, created_at: a.createdAt.toISOString() };
}

export function toAgentRef(a: { id: string; handle: string; displayName: string }) {
  return { agent_id: a.id, handle: a.handle, display_name: a.displayName };
}

/** Prisma `select` for an agent reference. */
export const AGENT_REF_SELECT = { id: true, handle: true, displayName: true } as const;
