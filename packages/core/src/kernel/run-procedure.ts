/**
 * Running a tool's tRPC procedure the way tRPC's own caller does (`createProcedureCaller` /
 * `callRecursive` in @trpc/server 11), with the same middlewares in the same order — scope check,
 * idempotency, transaction, input and output validation — and the same results and errors, but
 * with the runtime's object spread instead of tRPC's transpiled `_objectSpread2` helper, which
 * copies every option object and context through `Object.defineProperty` at each middleware and
 * cost a few percent of every tool call's CPU time. tRPC's own input and output validators (made by
 * `.input()` and `.output()`) use that helper too, to merge the inputs and to rebuild the result: they
 * are replaced by the same validators with the runtime's spread, around the same parsers (tRPC's
 * `getParseFn` of the procedure's `inputs` and `output`).
 *
 * Kept in step with tRPC by test/kernel/run-procedure.test.ts, which runs procedures through both.
 */
import { TRPCError, getTRPCErrorFromUnknown } from '@trpc/server';
import { getParseFn } from '@trpc/server/unstable-core-do-not-import';

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
  /** The parsers given to `.input()`, in order: one per input validator among `middlewares`. */
  inputs?: readonly unknown[];
  /** The parser given to `.output()`, if any. */
  output?: unknown;
}

/** tRPC's `isObject`: a non-null object that is not an array. */
const isObject = (value: unknown): value is Record<string, unknown> => !!value && !Array.isArray(value) && typeof value === 'object';

/** tRPC's input validator (`createInputMiddleware`): parses the raw input and merges it over the inputs parsed before. */
function inputValidator(parse: (value: unknown) => unknown): Middleware {
  return async (opts) => {
    const rawInput = await opts.getRawInput();
    let parsed;
    try {
      parsed = await parse(rawInput);
    } catch (cause) {
      throw new TRPCError({ code: 'BAD_REQUEST', cause });
    }
    return opts.next({ input: isObject(opts.input) && isObject(parsed) ? { ...opts.input, ...parsed } : parsed });
  };
}

/** tRPC's output validator (`createOutputMiddleware`): parses what the rest of the chain answered. */
function outputValidator(parse: (value: unknown) => unknown): Middleware {
  return async ({ next }) => {
    const result = await next();
    if (!result.ok) return result;
    let data;
    try {
      data = await parse(result.data);
    } catch (cause) {
      throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
    }
    return { ...result, data };
  };
}

/** Each procedure's middleware chain with tRPC's validators replaced (above), made on its first call. */
const chains = new WeakMap<ProcedureDef, readonly Middleware[]>();

function chainOf(def: ProcedureDef): readonly Middleware[] {
  let chain = chains.get(def);
  if (chain) return chain;
  const middlewares = def.middlewares as ReadonlyArray<Middleware & { _type?: string }>;
  const inputs = def.inputs ?? [];
  // The validators pair with the parsers only if there are as many of each; otherwise tRPC's own run.
  const inputCount = middlewares.filter((m) => m._type === 'input').length;
  const outputCount = middlewares.filter((m) => m._type === 'output').length;
  if (inputCount !== inputs.length || outputCount !== (def.output === undefined ? 0 : 1)) chain = middlewares;
  else {
    let k = 0;
    chain = middlewares.map((m) =>
      m._type === 'input'
        ? inputValidator(getParseFn(inputs[k++] as never))
        : m._type === 'output'
          ? outputValidator(getParseFn(def.output as never))
          : m,
    );
  }
  chains.set(def, chain);
  return chain;
}

/** tRPC's `middlewareMarker` (a string constant, not checked at run time). */
const MARKER = 'middlewareMarker';

/** What a middleware's throw becomes (tRPC's `callRecursive` catch). */
const failed = (cause: unknown) => ({ ok: false, error: getTRPCErrorFromUnknown(cause), marker: MARKER }) as MiddlewareResult;

/**
 * Runs middleware `index` with `opts` and a `next` that runs the one after it. Not an async function: one promise per
 * middleware (the `.then` that turns a rejection into a failed result) instead of an async frame and its promise, and
 * each middleware's options one object literal of a fixed shape instead of two spreads.
 */
function step(middlewares: readonly Middleware[], index: number, meta: unknown, opts: CallOptions): Promise<MiddlewareResult> {
  const { ctx, path, type, input, getRawInput, signal, batchIndex } = opts;
  let result: Promise<MiddlewareResult>;
  try {
    result = middlewares[index]!({
      ctx,
      path,
      type,
      input,
      getRawInput,
      signal,
      batchIndex,
      meta,
      next: (nextOpts) =>
        step(middlewares, index + 1, meta, {
          ctx: nextOpts?.ctx ? { ...(ctx as object), ...nextOpts.ctx } : ctx,
          path,
          type,
          input: nextOpts && 'input' in nextOpts ? nextOpts.input : input,
          getRawInput: nextOpts?.getRawInput ?? getRawInput,
          signal,
          batchIndex,
        }),
    });
  } catch (cause) {
    return Promise.resolve(failed(cause));
  }
  return Promise.resolve(result).then(undefined, failed);
}

/**
 * Runs the procedure whose definition is `def` with `opts`, as calling the procedure itself would.
 * @returns the resolver's data after the output validation
 * @throws the TRPCError the chain ended with (its `cause` is what a middleware or the resolver threw)
 */
export async function runProcedure(def: ProcedureDef, opts: CallOptions): Promise<unknown> {
  const result = await step(chainOf(def), 0, def.meta, opts);
  if (!result)
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'No result from middlewares - did you forget to `return next()`?' });
  if (!result.ok) throw result.error;
  return result.data;
}
