/**
 * Who may read a conversation (issue 4: another agent's messages are never readable):
 * a direct conversation's two agents, and a group conversation's active members.
 */
import type { Db } from '../context.ts';
import { ToolError } from '../errors.ts';
import { AGENT_REF_SELECT } from './agents.ts';
import { requireMembership } from './groups.ts';
import { agentByHandle, pairKey } from './network.ts';

export interface ResolvedConversation {
  /** Null when the conversation has no message yet. */
  id: string | null;
  kind: 'direct' | 'group';
  key: string;
}

/** The conversation named by exactly one of conversation_id, with_handle or group_id, if the caller may read it. */
export async function resolveConversation(
  db: Db,
  me: string,
  sel: { conversation_id?: string | undefined; with_handle?: string | undefined; group_id?: string | undefined },
): Promise<ResolvedConversation> {
  if (sel.conversation_id !== undefined) {
    const c = await db.conversation.findUnique({ where: { id: sel.conversation_id } });
    let allowed = false;
    if (c?.kind === 'direct') allowed = c.key.split(':').includes(me);
    else if (c?.groupId) {
      const m = await db.membership.findUnique({ where: { groupId_agentId: { groupId: c.groupId, agentId: me } }, select: { leftAt: true } });
      allowed = m !== null && m.leftAt === null;
    }
    if (!c || !allowed) {
      throw new ToolError('NOT_FOUND', `No conversation of yours has conversation_id ${sel.conversation_id}.`, { suggestedAction: 'list_conversations shows your conversations.' });
    }
    return { id: c.id, kind: c.kind as 'direct' | 'group', key: c.key };
  }
  let kind: 'direct' | 'group';
  let key: string;
  if (sel.with_handle !== undefined) {
    const other = await agentByHandle(db, sel.with_handle, 'with_handle');
    kind = 'direct';
    key = pairKey(me, other.id);
  } else {
    const { group } = await requireMembership(db, sel.group_id!, me);
    if (group.kind === 'direct') {
      const other = await db.membership.findFirst({ where: { groupId: group.id, agentId: { not: me } }, select: { agent: { select: AGENT_REF_SELECT } } });
      kind = 'direct';
      key = pairKey(me, other?.agent.id ?? me);
    } else {
      kind = 'group';
      key = group.id;
    }
  }
  const c = await db.conversation.findUnique({ where: { key }, select: { id: true } });
  return { id: c?.id ?? null, kind, key };
}
