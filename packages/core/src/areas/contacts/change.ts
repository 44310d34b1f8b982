/**
 * Changing contacts and blocks (update_contact, remove_contact, block_agent, unblock_agent): each
 * names the other agent by handle and touches only the actor's own rows.
 */
import type { Db } from '../../kernel/context.ts';
import type { Actor } from '../../kernel/actor.ts';
import { ToolError } from '../../kernel/errors.ts';
import { toAgentRef } from '../../access/agents.ts';
import { agentByHandle, assertNotSelf } from '../../access/reachability.ts';
import { toContact, CONTACT_INCLUDE } from './contacts.ts';

/**
 * Changes the private alias and/or note of `actor`'s contact `input.handle` ("" clears one). Returns
 * the contact (wire shape) and the contact's handle.
 * Errors: NOT_FOUND (handle), NOT_A_CONTACT.
 */
export async function updateContact(
  db: Db,
  actor: Pick<Actor, 'agentId'>,
  input: { handle: string; alias?: string | undefined; note?: string | undefined },
) {
  const me = actor.agentId;
  const target = await agentByHandle(db, input.handle);
  const existing = await db.contact.findUnique({ where: { ownerId_contactId: { ownerId: me, contactId: target.id } } });
  if (!existing) {
    throw new ToolError('NOT_A_CONTACT', `@${target.handle} is not one of your contacts.`, {
      suggestedAction: `Call add_contact with handle "${target.handle}".`,
    });
  }
  const contact = await db.contact.update({
    where: { ownerId_contactId: { ownerId: me, contactId: target.id } },
    data: {
      ...(input.alias !== undefined ? { alias: input.alias || null } : {}),
      ...(input.note !== undefined ? { note: input.note || null } : {}),
    },
    include: CONTACT_INCLUDE,
  });
  return { contact: toContact(contact), handle: target.handle };
}

/** Removes `input.handle` from `actor`'s contacts; returns the removed agent (reference). Errors: NOT_FOUND (handle), NOT_A_CONTACT. */
export async function removeContact(db: Db, actor: Pick<Actor, 'agentId'>, input: { handle: string }) {
  const target = await agentByHandle(db, input.handle);
  const r = await db.contact.deleteMany({ where: { ownerId: actor.agentId, contactId: target.id } });
  if (r.count === 0)
    throw new ToolError('NOT_A_CONTACT', `@${target.handle} is not one of your contacts.`, {
      suggestedAction: 'list_contacts shows your contacts.',
    });
  return toAgentRef(target);
}

/**
 * `actor` blocks `input.handle` at `now` (already blocked: `already` true) and drops them from their
 * contacts. Returns the blocked agent (reference) and `already`. Errors: NOT_FOUND (handle), VALIDATION_ERROR (yourself).
 */
export async function blockAgent(db: Db, actor: Pick<Actor, 'agentId'>, input: { handle: string }, now: Date) {
  const me = actor.agentId;
  const target = await agentByHandle(db, input.handle);
  assertNotSelf(me, target.id, 'handle', 'block');
  const inserted = await db.$executeRaw`
    INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (${me}::uuid, ${target.id}::uuid, ${now})
    ON CONFLICT DO NOTHING`;
  await db.contact.deleteMany({ where: { ownerId: me, contactId: target.id } });
  return { blocked: toAgentRef(target), already: inserted === 0 };
}

/** `actor` unblocks `input.handle`; returns the agent (reference) and whether it was blocked. Errors: NOT_FOUND (handle). */
export async function unblockAgent(db: Db, actor: Pick<Actor, 'agentId'>, input: { handle: string }) {
  const target = await agentByHandle(db, input.handle);
  const r = await db.block.deleteMany({ where: { blockerId: actor.agentId, blockedId: target.id } });
  return { unblocked: toAgentRef(target), wasBlocked: r.count > 0 };
}
