import { z } from 'zod';
import { writeTool } from '../../../kernel/trpc.ts';
import { DESTRUCTIVE } from '../../../kernel/meta.ts';
import { ToolError } from '../../../kernel/errors.ts';
import { output, groupId } from '../../../kernel/text.ts';
import { requireMembership } from '../../../access/groups.ts';
import { appendActivity } from '../../../kernel/activity.ts';
import { appendEvent } from '../../../kernel/events.ts';
import { notifyAll } from '../../../kernel/notify.ts';
import { toNumber } from '../../../kernel/money.ts';

export const leave_group = writeTool
  .meta({
    area: 'groups',
    title: 'Leave a group',
    description:
      'Leaves the group; your balance must be zero with no pending payment. If you were the last admin, the longest-standing member becomes ' +
      'admin.',
    annotations: DESTRUCTIVE,
    errors: {
      NOT_FOUND: 'no such group',
      NOT_SETTLED: 'your balance is not zero or a payment involving you is pending; details has the balance',
      INVALID_STATE: 'a direct ledger cannot be left',
    },
  })
  .input(z.strictObject({ group_id: groupId }))
  .output(output({ ok: z.literal(true) }))
  .mutation(async ({ ctx, input }) => {
    const agentId = ctx.auth.agentId;
    const { group, membership } = await requireMembership(ctx.db, input.group_id, agentId, { lock: true });
    if (group.kind === 'direct') throw new ToolError('INVALID_STATE', 'A direct ledger cannot be left; settle it and archive it instead.');
    if (membership.balanceMinor !== 0n || membership.pendingCount > 0) {
      throw new ToolError('NOT_SETTLED', 'You can leave only with a zero balance and no pending payments.', {
        details: { balance_minor: toNumber(membership.balanceMinor), pending_payments: membership.pendingCount },
        suggestedAction: 'Use suggest_settlements and record_payment to settle, and resolve pending payments first.',
      });
    }
    const now = ctx.services.now();
    await ctx.db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId } }, data: { leftAt: now } });
    await ctx.db.group.update({ where: { id: group.id }, data: { memberCount: { decrement: 1 } } });
    const remaining = await ctx.db.membership.findMany({ where: { groupId: group.id, leftAt: null }, orderBy: { joinedAt: 'asc' } });
    if (membership.role === 'admin' && remaining.length > 0 && !remaining.some((m) => m.role === 'admin')) {
      const heir = remaining[0]!;
      await ctx.db.membership.update({ where: { groupId_agentId: { groupId: group.id, agentId: heir.agentId } }, data: { role: 'admin' } });
      await appendActivity(ctx.db, {
        groupId: group.id,
        actorId: agentId,
        action: 'member.role_changed',
        entityType: 'member',
        entityId: heir.agentId,
        before: { role: 'member' },
        after: { role: 'admin' },
      });
      await appendEvent(ctx.db, {
        type: 'member.role_changed',
        groupId: group.id,
        actorId: agentId,
        recipients: remaining.map((m) => m.agentId),
        data: { agent_id: heir.agentId, role: 'admin', previous_role: 'member' },
      });
    }
    await appendActivity(ctx.db, {
      groupId: group.id,
      actorId: agentId,
      action: 'member.left',
      entityType: 'member',
      entityId: agentId,
      before: { role: membership.role },
    });
    await notifyAll(
      ctx.db,
      remaining.map((m) => m.agentId),
      agentId,
      {
        kind: 'member_left',
        text: `@${ctx.auth.handle} left "${group.name}"`,
        entityType: 'group',
        entityId: group.id,
        groupId: group.id,
      },
    );
    // The leaver gets the event of their own departure and nothing after.
    await appendEvent(ctx.db, {
      type: 'member.left',
      groupId: group.id,
      actorId: agentId,
      recipients: [agentId, ...remaining.map((m) => m.agentId)],
      data: { agent_id: agentId },
      link: { entityType: 'group', entityId: group.id },
    });
    return { ok: true as const, suggested_next: ['list_groups: see the groups you are still in'] };
  });
