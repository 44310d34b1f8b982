/**
 * Adding a contact (add_contact): get-or-create, respecting blocks in both directions; the new
 * contact is told, in the caller's transaction.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { toContact, CONTACT_INCLUDE } from './contacts.ts';
import { agentByHandle, assertNotSelf, canReach, hasBlocked } from '../../access/reachability.ts';
import { notify } from '../../kernel/notify.ts';

/**
 * Adds the agent `req.handle` to `actor`'s contacts at `now` with an optional private alias
 * (0-80 characters) and note (0-500). Already a contact: nothing changes (created false). Being a
 * contact lets the other agent message the caller and open a direct ledger that is accepted at once.
 * Returns `contact` (wire shape), `created`, and `handle` (the contact's handle).
 * Errors: NOT_FOUND (handle), VALIDATION_ERROR (yourself), INVALID_STATE (the caller blocked them),
 * FORBIDDEN (they blocked the caller — the same generic refusal, the block stays invisible).
 */
export async function addContact(
  db: Db,
  actor: Pick<Actor, 'agentId' | 'handle'>,
  req: { handle: string; alias?: string | undefined; note?: string | undefined },
  now: Date,
) {
  const me = actor.agentId;
  const target = await agentByHandle(db, req.handle);
  assertNotSelf(me, target.id, 'handle', 'add');
  const existing = await db.contact.findUnique({
    where: { ownerId_contactId: { ownerId: me, contactId: target.id } },
    include: CONTACT_INCLUDE,
  });
  if (existing) return { contact: toContact(existing), created: false, handle: target.handle };
  if (await hasBlocked(db, me, target.id)) {
    throw new ToolError('INVALID_STATE', `You have blocked @${target.handle}.`, {
      suggestedAction: `Call unblock_agent with handle "${target.handle}" first.`,
    });
  }
  // Blocked by the target: the same generic refusal as any other, the block stays invisible.
  if (!(await canReach(db, me, target.id))) {
    throw new ToolError('FORBIDDEN', `@${target.handle} cannot be added as a contact.`, {
      suggestedAction: 'Nothing to do here; reach this agent through a shared group instead.',
    });
  }
  const contact = await db.contact.create({
    data: { ownerId: me, contactId: target.id, alias: req.alias || null, note: req.note || null, createdAt: now },
    include: CONTACT_INCLUDE,
  });
  await notify(db, {
    agentId: target.id,
    kind: 'contact_added',
    text: `@${actor.handle} added you as a contact`,
    entityType: 'agent',
    entityId: me,
  });
  return { contact: toContact(contact), created: true, handle: target.handle };
}
