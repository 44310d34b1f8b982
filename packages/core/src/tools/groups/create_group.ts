import { z } from 'zod';
import { writeTool } from '../../trpc.ts';
import { WRITE } from '../../meta.ts';
import { text, description, currencyCode, output } from '../../text.ts';
import { groupDetailSchema, toGroupDetail } from '../../domain/groups.ts';
import { requireCurrency } from '../../domain/money.ts';
import { appendActivity } from '../../domain/activity.ts';

export const create_group = writeTool
  .meta({
    area: 'groups',
    title: 'Create a group',
    description:
      'Creates a shared-expense group with a fixed ISO 4217 currency (checked against the ISO list; see list_currencies). The caller becomes its first member ' +
      'with role admin. Idempotent by key.',
    annotations: WRITE,
    errors: {
      VALIDATION_ERROR: 'unknown currency code',
    },
  })
  .input(
    z.strictObject({
      name: text(1, 80, 'name').describe('Group name, 1-80 characters, e.g. "Lisbon trip".'),
      currency: currencyCode.describe('ISO 4217 code, e.g. EUR; fixed for good.'),
      description: description.optional().describe('What the group is for, 0-500 characters.'),
    }),
  )
  .output(output({ group: groupDetailSchema }))
  .mutation(async ({ ctx, input }) => {
    requireCurrency(input.currency);
    const agentId = ctx.auth.agentId;
    const now = ctx.services.now();
    const group = await ctx.db.group.create({
      data: {
        name: input.name,
        description: input.description || null,
        currency: input.currency,
        createdById: agentId,
        createdAt: now,
        memberCount: 1,
      },
    });
    await ctx.db.membership.createMany({ data: [{ groupId: group.id, agentId, role: 'admin', joinedAt: now }] });
    await appendActivity(ctx.db, {
      groupId: group.id,
      actorId: agentId,
      action: 'group.created',
      entityType: 'group',
      entityId: group.id,
      after: { name: group.name, currency: group.currency, description: group.description },
    });
    return {
      // The creator is the caller: no read-back of the agent row.
      group: toGroupDetail({ ...group, createdBy: { id: agentId, handle: ctx.auth.handle, displayName: ctx.auth.displayName } }, { balanceMinor: 0n }),
      suggested_next: [
        `create_invite: invite members to "${group.name}" (group_id ${group.id})`,
        `add_expense: record the first expense in "${group.name}"`,
      ],
    };
  });
