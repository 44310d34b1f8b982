/**
 * Listing invites (list_invites): the ones an agent received or sent.
 */
import type { Db, Services } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { toInvite, INVITE_INCLUDE } from './invites.ts';

/**
 * `actor`'s invites newest first (up to 200): received (targeted at them), sent (created by them) or
 * all (default), optionally of one group; wire shape, each with its status at `services.now()`.
 */
export async function listInvites(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  input: { direction?: 'received' | 'sent' | 'all' | undefined; group_id?: string | undefined },
  services: Pick<Services, 'now' | 'config'>,
) {
  const me = actor.agentId;
  const direction = input.direction ?? 'all';
  const who =
    direction === 'received'
      ? { targetId: me }
      : direction === 'sent'
        ? { createdById: me }
        : { OR: [{ targetId: me }, { createdById: me }] };
  const rows = await db.invite.findMany({
    where: { ...who, ...(input.group_id ? { groupId: input.group_id } : {}) },
    include: INVITE_INCLUDE,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: 200,
  });
  const now = services.now();
  const invites = rows.map((r) => toInvite(r, services.config.baseUrl, now));
  return invites;
}
