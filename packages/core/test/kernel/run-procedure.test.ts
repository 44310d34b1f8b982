/**
 * `runProcedure` runs a procedure's middleware chain as tRPC's own caller does: same context merging
 * (`next({ ctx })` adds to the context), same input and raw-input overrides, same meta, same results, and the
 * same errors (a thrown error becomes the TRPCError wrapping it; input and output validation fail alike). Each
 * case runs through both and compares.
 */
import { describe, expect, it } from 'vitest';
import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { appRouter } from '../../src/index.ts';
import { runProcedure } from '../../src/kernel/run-procedure.ts';

const t = initTRPC.context<{ base: number; seen?: string[] }>().meta<{ label: string }>().create({ isServer: true });
const boom = new Error('boom');

const addA = t.middleware(({ ctx, meta, next }) => next({ ctx: { a: `${meta?.label}:${ctx.base}` } }));
const rawOverride = t.middleware(async ({ getRawInput, next }) => {
  const raw = (await getRawInput()) as Record<string, unknown>;
  return next({ getRawInput: async () => ({ ...raw, extra: 1 }) });
});
const base = t.procedure
  .meta({ label: 'm' })
  .use(addA)
  .input(z.object({ n: z.number() }).loose());

const procs = {
  ok: base
    .use(rawOverride)
    .input(z.object({ extra: z.number() }).loose())
    .use(({ ctx, next }) => next({ ctx: { b: ctx.a.length } }))
    .output(z.object({ a: z.string(), b: z.number(), input: z.unknown(), keys: z.array(z.string()) }))
    .query(({ ctx, input }) => ({ a: ctx.a, b: ctx.b, input, keys: Object.keys(ctx).sort() })),
  throws: base
    .use(() => {
      throw boom;
    })
    .query(() => ({})),
  badInput: base.query(() => ({})),
  badOutput: base.output(z.object({ x: z.string() })).query(() => ({ x: 1 }) as never),
  resolverThrows: base.mutation(() => {
    throw new TRPCError({ code: 'CONFLICT', message: 'taken' });
  }),
  noNext: base.use((async () => undefined) as never).query(() => ({})),
};

async function both(name: keyof typeof procs, args: unknown) {
  const proc = procs[name] as unknown as ((o: unknown) => Promise<unknown>) & {
    _def: { type: 'query' | 'mutation'; middlewares: unknown[] };
  };
  const opts = () => ({
    path: name,
    getRawInput: async () => args,
    ctx: { base: 7 },
    type: proc._def.type,
    signal: undefined,
    batchIndex: 0,
  });
  const settle = (p: Promise<unknown>) =>
    p.then(
      (data) => ({ data }),
      (error: unknown) => ({ error }),
    );
  return [await settle(proc(opts())), await settle(runProcedure(proc._def, opts()))] as const;
}

describe('runProcedure', () => {
  it('merges the context, applies input and raw-input overrides, validates the output, as tRPC does', async () => {
    const [trpc, ours] = await both('ok', { n: 1 });
    expect(ours).toEqual(trpc);
    expect(ours).toEqual({ data: { a: 'm:7', b: 3, input: { n: 1, extra: 1 }, keys: ['a', 'b', 'base'] } });
  });

  it('fails the same way: middleware throws, bad input, bad output, resolver error, a middleware without next()', async () => {
    for (const [name, args] of [
      ['throws', { n: 1 }],
      ['badInput', { n: 'x' }],
      ['badOutput', { n: 1 }],
      ['resolverThrows', { n: 1 }],
      ['noNext', { n: 1 }],
    ] as const) {
      const [trpc, ours] = (await both(name, args)) as unknown as [{ error: TRPCError }, { error: TRPCError }];
      expect(ours.error, name).toBeInstanceOf(TRPCError);
      expect([ours.error.code, ours.error.message, ours.error.cause?.constructor], name).toEqual([
        trpc.error.code,
        trpc.error.message,
        trpc.error.cause?.constructor,
      ]);
    }
    const [, ours] = (await both('throws', { n: 1 })) as unknown as [unknown, { error: TRPCError }];
    expect(ours.error.cause).toBe(boom);
  });

  it('every tool procedure has the middleware chain it reads, with one parser per tRPC validator (so each is replaced)', () => {
    for (const [name, proc] of Object.entries(
      (appRouter._def as unknown as { procedures: Record<string, { _def: { middlewares: unknown; inputs: unknown[]; output?: unknown } }> })
        .procedures,
    )) {
      const mws = proc._def.middlewares as Array<{ _type?: string }>;
      expect(Array.isArray(mws) && mws.length > 0 && mws.every((m) => typeof m === 'function'), name).toBe(true);
      expect(mws.filter((m) => m._type === 'input').length, name).toBe(proc._def.inputs.length);
      expect(mws.filter((m) => m._type === 'output').length, name).toBe(proc._def.output === undefined ? 0 : 1);
      expect(proc._def.inputs.length, name).toBeGreaterThan(0);
    }
  });
});
