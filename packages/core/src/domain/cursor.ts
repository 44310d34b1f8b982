/**
 * Opaque keyset cursors for newest-first lists: base64url of "<ISO time>|<id>".
 * A malformed cursor is a VALIDATION_ERROR naming `cursor`.
 */
import { validationError } from '../errors.ts';

export function encodeCursor(t: Date, id: string | bigint): string {
  return Buffer.from(`${t.toISOString()}|${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { t: Date; id: string } {
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const [iso, id] = raw.split('|');
  const t = new Date(iso ?? '');
  if (!iso || !id || Number.isNaN(t.getTime())) throw validationError('cursor', 'not a cursor returned by this list', 'invalid_cursor');
  return { t, id };
}
