/** Folders the tests start processes in or read from, independent of where a test file sits under test/. */
import path from 'node:path';

/** apps/server */
export const SERVER_DIR = path.resolve(import.meta.dirname, '..');
/** The repository root. */
export const ROOT = path.resolve(SERVER_DIR, '..', '..');
