/**
 * Running a tool's tRPC procedure the way tRPC's own caller does (`createProcedureCaller` /
 * `callRecursive` in @trpc/server 11), with the same middlewares in the same order — scope check,
 * idempotency, transaction, input and output validation — and the same results and errors, but
 * with the runtime's object spread instead of tRPC's transpiled `_objectSpread2` helper, which
 * copies every option object and context through `Object.defineProperty` at each middleware and
 * cost a few percent of every tool call's CPU time.
 *
 * Kept in step with tRPC by test/kernel/run-procedure.test.ts, which runs procedures through both.
 */
import { TRPCError, getTRPCErrorFromUnknown } from '@trpc/server';

/** The options tRPC's caller passes down the middleware chain (`ProcedureCallOptions`). */
interface CallOptions {
  ctx: unknown;
  path: string;
  type: 'query' | 'mutation' | 'subscription';
  input?: unknown;
  getRawInput: () => Promise<unknown>;
  signal: AbortSignal | undefined;
  batchIndex: number;
}

/** What `next()` may change for the rest of the chain. */
interface NextOptions {
  ctx?: Record<string, unknown>;
  input?: unknown;
  getRawInput?: () => Promise<unknown>;
}

type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: unknown };
type Middleware = (
  opts: CallOptions & { meta: unknown; next: (o?: NextOptions) => Promise<MiddlewareResult> },
) => Promise<MiddlewareResult>;

/** The parts of a procedure's `_def` the chain needs. */
export interface ProcedureDef {
  middlewares: readonly unknown[];
  meta?: unknown;
}

/** tRPC's `middlewareMarker` (a string constant, not checked at run time). */
const MARKER = 'middlewareMarker';

async function step(middlewares: readonly Middleware[], index: number, meta: unknown, opts: CallOptions): Promise<MiddlewareResult> {
  try {
    return await middlewares[index]!({
      ...opts,
      meta,
      next(nextOpts) {
        return step(middlewares, index + 1, meta, {
          ...opts,
          ctx: nextOpts?.ctx ? { ...(opts.ctx as object), ...nextOpts.ctx } : opts.ctx,
          input: nextOpts && 'input' in nextOpts ? nextOpts.input : opts.input,
          getRawInput: nextOpts?.getRawInput ?? opts.getRawInput,
        });
      },
    });
  } catch (cause) {
    return { ok: false, error: getTRPCErrorFromUnknown(cause), marker: MARKER } as MiddlewareResult;
  }
}

/**
 * Runs the procedure whose definition is `def` with `opts`, as calling the procedure itself would.
 * @returns the resolver's data after the output validation
 * @throws the TRPCError the chain ended with (its `cause` is what a middleware or the resolver threw)
 */
export async function runProcedure(def: ProcedureDef, opts: CallOptions): Promise<unknown> {
  const result = await step(def.middlewares as readonly Middleware[], 0, def.meta, opts);
  if (!result)
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares - did you forget to `return next()`?' });
  if (!result.ok) throw result.error;
  return result.data;
}
