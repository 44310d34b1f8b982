/**
 * Opaque keyset cursors for newest-first lists: base64url of "<ISO time>|<id>".
 * A malformed cursor is a VALIDATION_ERROR naming `cursor`.
 */
import { validationError } from './errors.ts';

/** Id shapes a list may require of its cursor: a row uuid, or a bigint sequence id. */
export const UUID_CURSOR_ID = /^[0-9a-f-]{36}$/;
export const SERIAL_CURSOR_ID = /^\d{1,19}$/;

export function encodeCursor(t: Date, id: string | bigint): string {
  return Buffer.from(`${t.toISOString()}|${id}`).toString('base64url');
}

/** Decodes a cursor; with `idPattern`, its id must also match it (else VALIDATION_ERROR). */
export function decodeCursor(cursor: string, idPattern?: RegExp): { t: Date; id: string } {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const [iso, id] = raw.split('|');
  const t = new Date(iso ?? '');
  if (!iso || !id || Number.isNaN(t.getTime())) throw validationError('cursor', 'not a cursor returned by this list', 'invalid_cursor');
  if (idPattern && !idPattern.test(id)) throw validationError('cursor', 'not a cursor returned by this list', 'invalid_cursor');
  return { t, id };
}

/** Keyset condition for lists ordered by (createdAt desc, id desc): rows strictly after the cursor. */
export function olderThan(c: { t: Date; id: string }) {
  return { OR: [{ createdAt: { lt: c.t } }, { createdAt: c.t, id: { lt: c.id } }] };
}

/** The `updated_after` filter of sync-style lists (VALIDATION_ERROR naming it unless a timestamp). */
export function parseUpdatedAfter(value: string): Date {
  const t = new Date(value);
  if (Number.isNaN(t.getTime())) throw validationError('updated_after', 'must be an ISO 8601 timestamp', 'invalid_timestamp');
  return t;
}

/** Cuts `take + 1` fetched rows to a page of `take` and the cursor of its last row (null on the last page). */
export function pageOf<T extends { createdAt: Date; id: string | bigint }>(
  rows: T[],
  take: number,
): { page: T[]; next_cursor: string | null } {
  const page = rows.slice(0, take);
  const last = page[page.length - 1];
  return { page, next_cursor: rows.length > take && last ? encodeCursor(last.createdAt, last.id) : null };
}
