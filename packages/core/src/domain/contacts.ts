/** Contact projection (issue 4 "Agents and contacts"). A contact list is private to its owner. */
import { z } from 'zod';
import { agentRef, timestamp } from '../text.ts';
import { toAgentRef } from './agents.ts';

export const contactSchema = z.object({
  agent: agentRef,
  alias: z.string().nullable().describe('Your private name for this contact (only you see it).'),
  note: z.string().nullable().describe('Your private note about this contact (only you see it).'),
  added_at: timestamp,
});

export const CONTACT_INCLUDE = { contact: { select: { id: true, handle: true, displayName: true } } } as const;

export function toContact(c: { alias: string | null; note: string | null; createdAt: Date; contact: { id: string; handle: string; displayName: string } }) {
  return { agent: toAgentRef(c.contact), alias: c.alias, note: c.note, added_at: c.createdAt.toISOString() };
}

/** Contact alias: 0-80 chars; note 0-500 chars. */
export const ALIAS_MAX = 80;
export const CONTACT_NOTE_MAX = 500;
