/** Shared by remove_member and set_member_role: a member named by agent_id or handle (exactly one). */
import { z } from 'zod';
import type { Db } from '../kernel/context.ts';
import { ToolError, validationError } from '../kernel/errors.ts';
import { uuid, handle } from '../kernel/text.ts';
import { closestNames, didYouMean } from '../kernel/suggest.ts';

export const memberRefShape = {
  agent_id: uuid.optional().describe("The member's agent_id (from get_group). Give agent_id or handle."),
  handle: handle.optional().describe("The member's handle. Give agent_id or handle."),
};

/** Resolves the named agent's active membership in the group; NOT_FOUND when it is not an active member. */
export async function resolveMember(db: Db, groupId: string, ref: { agent_id?: string | undefined; handle?: string | undefined }) {
  if ((ref.agent_id === undefined) === (ref.handle === undefined))
    throw validationError('agent_id', 'give exactly one of agent_id or handle', 'exactly_one');
  const agent = await db.agent.findUnique({
    where: ref.agent_id !== undefined ? { id: ref.agent_id } : { handle: ref.handle! },
    select: { id: true, handle: true, displayName: true },
  });
  const membership = agent ? await db.membership.findUnique({ where: { groupId_agentId: { groupId, agentId: agent.id } } }) : null;
  if (!agent || !membership || membership.leftAt) {
    const near = ref.handle
      ? closestNames(
          ref.handle,
          (await db.membership.findMany({ where: { groupId, leftAt: null }, select: { agent: { select: { handle: true } } } })).map(
            (m) => m.agent.handle,
          ),
          2,
        )
      : [];
    const hint = didYouMean(near.map((n) => `@${n}`));
    throw new ToolError(
      'NOT_FOUND',
      `${ref.handle ? `@${ref.handle}` : (ref.agent_id ?? 'This agent')} is not a member of this group${hint ? `; ${hint}` : '.'}`,
      {
        details: { group_id: groupId, ...(ref.agent_id ? { agent_id: ref.agent_id } : { handle: ref.handle }), did_you_mean: near },
        suggestedAction: 'get_group lists the active members.',
      },
    );
  }
  return { agent, membership };
}

export const memberRole = z.enum(['admin', 'member']);

/**
 * VALIDATION_ERROR for a handle that is not an active member of the group, naming the closest member
 * handles ("did you mean @ann-lee?", details.did_you_mean) when one is near.
 */
export function notAMember(path: string, h: string, memberHandles: Iterable<string>): ToolError {
  const near = closestNames(h, memberHandles, 2);
  const hint = didYouMean(near.map((n) => `@${n}`));
  const message = `@${h} is not an active member of this group${hint ? `; ${hint}` : ''}`;
  return new ToolError('VALIDATION_ERROR', `${path}: ${message}`, {
    details: { issues: [{ path, message, code: 'not_a_member' }], did_you_mean: near },
    suggestedAction: 'get_group lists the active members and their handles.',
  });
}
