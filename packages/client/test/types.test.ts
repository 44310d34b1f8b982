/**
 * The published types are generated from the registry's JSON Schemas; this checks (at type-check
 * time, `pnpm lint`) that they say the same as the server's own types (inferred from its tRPC
 * router): same tool names, and per tool input and output assignable both ways.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@kitty/core';
import { describe, expect, it } from 'vitest';
import type { ToolInputs, ToolOutputs } from '../src/index.ts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Tool names whose types differ (never when all agree). */
type Mismatch<X, Y> = { [K in keyof X & keyof Y]: Same<X[K], Y[K]> extends true ? never : K }[keyof X & keyof Y];

const sameNames: Same<keyof ToolInputs, keyof inferRouterInputs<AppRouter>> = true;
const sameOutputNames: Same<keyof ToolOutputs, keyof inferRouterOutputs<AppRouter>> = true;
const inputsDiffer: Mismatch<ToolInputs, inferRouterInputs<AppRouter>> | 'none' = 'none';
const outputsDiffer: Mismatch<ToolOutputs, inferRouterOutputs<AppRouter>> | 'none' = 'none';

describe('generated tool types', () => {
  it('agree with the server (the type-check fails otherwise; a stale build too: `pnpm build` regenerates)', () => {
    expect([sameNames, sameOutputNames, inputsDiffer, outputsDiffer]).toEqual([true, true, 'none', 'none']);
  });
});
