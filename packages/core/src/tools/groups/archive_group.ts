import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { DESTRUCTIVE } from '../../meta.ts';
import { ToolError } from '../../errors.ts';
import { output, groupId } from '../../text.ts';
import { groupDetailSchema, toGroupDetail, requireMembership, assertAdmin, GROUP_DETAIL_INCLUDE } from '../../domain/groups.ts';
import { appendActivity } from '../../domain/activity.ts';
import { notifyAll, resolveAction } from '../../domain/inbox.ts';
import { toNumber } from '../../domain/money.ts';

export const archive_group = writeTool
  .meta({
    area: 'groups',
    title: 'Archive a group for good',
    description:
      'Archives the group irreversibly: it stays readable, rejects new expenses, payments and members, and is hidden from list_groups unless ' +
      'include_archived. Admins only. Requires every member settled: all balances zero and no pending payments; otherwise NOT_SETTLED (409) with ' +
      'details.unsettled listing who is not. Archiving an archived group returns it unchanged.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such group',
      FORBIDDEN: 'not a member, or not an admin',
      NOT_SETTLED: 'a balance is not zero or a payment is pending; details.unsettled lists who',
    },
  })
  .input(z.strictObject({ group_id: groupId}))
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group, membership } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    assertAdmin(membership, 'archive the group');
    if (group.archivedAt) return { group: toGroupDetail(group, membership), suggested_next: ['list_groups: include_archived true shows archived groups'] };
    const members = await ctx.db.membership.findMany({
      where: { groupId: group.id, leftAt: null },
      include: { agent: { select: { handle: true } } },
    });
    const unsettled = members.filter((m) => m.balanceMinor !== 0n || m.pendingCount > 0);
    if (unsettled.length) {
      throw new ToolError('NOT_SETTLED', 'Every member must be settled (zero balance, no pending payments) before the group can be archived.', {
        details: {
          unsettled: unsettled.map((m) => ({ handle: m.agent.handle, balance_minor: toNumber(m.balanceMinor), pending_payments: m.pendingCount })),
        },
        suggestedAction: 'Use suggest_settlements and record_payment until every balance is zero and no payment is pending.',
      });
    }
    const archived = await ctx.db.group.update({ where: { id: group.id }, data: { archivedAt: ctx.services.now() }, include: GROUP_DETAIL_INCLUDE });
    const open = await ctx.db.invite.findMany({ where: { groupId: group.id, status: 'active' }, select: { id: true, targetId: true } });
    await ctx.db.invite.updateMany({ where: { groupId: group.id, status: 'active' }, data: { status: 'revoked' } });
    // A revoked invite no longer waits for its target (e.g. the request of a direct ledger nobody accepted).
    for (const inv of open) if (inv.targetId) await resolveAction(ctx.db, { entityType: 'invite', entityId: inv.id });
    await appendActivity(ctx.db, { groupId: group.id, actorId: agentId, action: 'group.archived', entityType: 'group', entityId: group.id, before: { archived: false }, after: { archived: true } });
    await notifyAll(ctx.db, members.map((m) => m.agentId), agentId, {
      kind: 'group_archived',
      text: `"${group.name}" was archived`,
      entityType: 'group',
      entityId: group.id,
      groupId: group.id,
    });
    return { group: toGroupDetail(archived, membership), suggested_next: ['list_groups: include_archived true shows archived groups', 'create_group: start a new group'] };
  });
