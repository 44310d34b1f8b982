/**
 * Runs before every test file of every package (vitest.shared.ts `setupFiles`): a test file fails
 * when node-postgres warns "Calling client.query() when the client is already executing a query"
 * — the sign of concurrent queries on one connection (one transaction), which pg 9 turns into an
 * error. (packages/db createDb chains a transaction's queries; this keeps it that way.)
 */
import { afterAll } from 'vitest';

const seen: Error[] = [];
process.on('warning', (w) => {
  if (w.message.includes('when the client is already executing a query')) seen.push(w);
});

afterAll(async () => {
  await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
  if (seen.length) throw new Error(`node-postgres warned during this file (concurrent queries on one connection):\n${seen[0]!.stack}`);
});
