/** Who may change an expense (issue 3: any member may edit, as in the peers, unless the group says otherwise). */
import { ToolError } from '../../kernel/errors.ts';

export function assertCanEdit(
  group: { membersCanEdit: boolean },
  membership: { role: string; agentId: string },
  expense: { createdById: string },
): void {
  if (group.membersCanEdit || membership.role === 'admin' || expense.createdById === membership.agentId) return;
  throw new ToolError('FORBIDDEN', "In this group only admins and the expense's creator may change expenses.", {
    details: { required_role: 'admin' },
  });
}
