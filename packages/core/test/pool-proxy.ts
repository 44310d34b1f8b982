/** Fault and interleaving injection for tests: a pg pool whose checked-out clients run a hook around each query. */
import type { Pool } from 'pg';

/** Called instead of a client's query: `real` runs the query as asked; `args` are query's arguments (args[0] may be a config with a statement `name`). */
export type QueryHook = (real: (...args: unknown[]) => Promise<unknown>, args: unknown[]) => Promise<unknown>;

/**
 * `realPool` with `hook` around every query of clients taken with `await pool.connect()` (the
 * batched writes' path). `pool.query`, which uses the callback form of connect, is left as it is.
 */
export function poolWithQuery(realPool: Pool, hook: QueryHook): Pool {
  return new Proxy(realPool, {
    get(target, prop) {
      if (prop === 'connect')
        return async (callback?: unknown) => {
          if (callback) return (realPool.connect as (cb: unknown) => void)(callback);
          const client = await realPool.connect();
          return new Proxy(client, {
            get(c, p) {
              if (p === 'query')
                return (...args: unknown[]) =>
                  hook((...a: unknown[]) => (c.query as (...x: unknown[]) => Promise<unknown>).apply(c, a), args);
              return Reflect.get(c, p, c);
            },
          });
        };
      return Reflect.get(target, prop, target);
    },
  });
}

/** The statement name of a query's arguments (named prepared statements), or undefined. */
export const statementName = (args: unknown[]): string | undefined => (args[0] as { name?: string } | undefined)?.name;

/**
 * The JSON text of a batch statement's document (`kitty_apply_batch` or `kitty_apply_batches`): its first parameter,
 * which group commit sends as jsonb in binary form (the version byte 1, then UTF-8 JSON text).
 */
export const sentDocument = (args: unknown[]): string => {
  const parameter = (args[0] as { values: unknown[] }).values[0];
  if (!Buffer.isBuffer(parameter) || parameter[0] !== 1) throw new Error('not a binary jsonb parameter');
  return parameter.subarray(1).toString('utf8');
};
