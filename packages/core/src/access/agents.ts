/** Agent projections shared by tools (interface-spec "Agent", "Agent reference"). */
import { z } from 'zod';
import { Prisma } from '@kitty/db';
import type { Db } from '../kernel/context.ts';
import { ToolError } from '../kernel/errors.ts';
import { uuid, timestamp, handle, displayName } from '../kernel/text.ts';
import { generateApiKey, API_KEY_SCOPES } from './api-keys.ts';

export const agentSchema = z.object({
  agent_id: uuid,
  handle: z.string(),
  display_name: z.string(),
  description: z.string().nullable(),
  created_at: timestamp,
});
export type AgentOut = z.infer<typeof agentSchema>;

export function toAgent(a: { id: string; handle: string; displayName: string; description: string | null; createdAt: Date }): AgentOut {
  return {
    agent_id: a.id,
    handle: a.handle,
    display_name: a.displayName,
    description: a.description,
    created_at: a.createdAt.toISOString(),
  };
}

export function toAgentRef(a: { id: string; handle: string; displayName: string }) {
  return { agent_id: a.id, handle: a.handle, display_name: a.displayName };
}

/** Prisma `select` for an agent reference. */
export const AGENT_REF_SELECT = { id: true, handle: true, displayName: true } as const;

/**
 * Creates an agent and its first API key (full scopes): what register_agent and the account page's
 * "new agent" both do. Call inside the caller's transaction.
 * @param owner.humanId the person who owns the new agent (account page), or null for a headless agent
 * @returns the agent row and the key (its secret is to be shown once, never stored)
 * @throws ToolError HANDLE_TAKEN when the handle exists (also on a concurrent insert: unique violation P2002)
 */
export async function createAgentWithKey(
  db: Db,
  input: { handle: string; displayName: string; description?: string | null | undefined },
  owner: { humanId: string | null } = { humanId: null },
) {
  if (await db.agent.findUnique({ where: { handle: input.handle }, select: { id: true } })) {
    throw new ToolError('HANDLE_TAKEN', `The handle "${input.handle}" is taken.`, { details: { handle: input.handle } });
  }
  let agent;
  try {
    agent = await db.agent.create({
      data: { handle: input.handle, displayName: input.displayName, description: input.description || null, humanId: owner.humanId },
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
      throw new ToolError('HANDLE_TAKEN', `The handle "${input.handle}" is taken.`, { details: { handle: input.handle } });
    }
    throw e;
  }
  const key = generateApiKey();
  const keyRow = await db.apiKey.create({
    data: { agentId: agent.id, digest: key.digest, prefix: key.prefix, scopes: [...API_KEY_SCOPES] },
    select: { id: true },
  });
  return { agent, apiKey: key.key, keyId: keyRow.id };
}

/**
 * Checks a new agent's details with register_agent's own input schemas (handle
 * ^[a-z0-9][a-z0-9_-]{2,31}$, display name 1-80 chars, no control characters), for callers that
 * are not tools (the OAuth consent page).
 * @throws ToolError VALIDATION_ERROR with details.issues naming the field
 */
export function validateNewAgent(input: { handle: string; displayName: string }): void {
  const parsed = z.strictObject({ handle, display_name: displayName }).safeParse({ handle: input.handle, display_name: input.displayName });
  if (!parsed.success) {
    throw new ToolError('VALIDATION_ERROR', 'The agent details are not valid.', {
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message, code: i.code })) },
    });
  }
}
