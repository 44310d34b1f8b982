/**
 * The published types are generated from the registry's JSON Schemas; this checks (at type-check
 * time, `pnpm lint`) that they say the same as the server's own types (inferred from its tRPC
 * router): same tool names, and per tool input and output assignable both ways; the error codes and the error body
 * are core's (its one error table, its one ErrorBody schema); ToolInput (what a method takes) leaves idempotency_key optional.
 */
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { AppRouter, ErrorBody as CoreErrorBody, ErrorCode as CoreErrorCode } from '@kitty/core';
import { describe, expect, it } from 'vitest';
import type { ErrorBody, ErrorCode, KittyError, ToolInput, ToolInputs, ToolOutputs } from '../src/index.ts';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Tool names whose types differ (never when all agree). */
type Mismatch<X, Y> = { [K in keyof X & keyof Y]: Same<X[K], Y[K]> extends true ? never : K }[keyof X & keyof Y];

const sameNames: Same<keyof ToolInputs, keyof inferRouterInputs<AppRouter>> = true;
const sameOutputNames: Same<keyof ToolOutputs, keyof inferRouterOutputs<AppRouter>> = true;
const inputsDiffer: Mismatch<ToolInputs, inferRouterInputs<AppRouter>> | 'none' = 'none';
const outputsDiffer: Mismatch<ToolOutputs, inferRouterOutputs<AppRouter>> | 'none' = 'none';
const sameCodes: Same<ErrorCode, CoreErrorCode> = true;
const sameBody: Same<ErrorBody, CoreErrorBody> = true;
const errorCodeTyped: Same<KittyError['code'], ErrorCode> = true;
// A method's arguments need no idempotency_key (the client adds one); on the wire (ToolInputs) it is required.
const keyOptional: Same<undefined extends ToolInput<'add_expense'>['idempotency_key'] ? true : false, true> = true;
const keyRequired: Same<undefined extends ToolInputs['add_expense']['idempotency_key'] ? true : false, false> = true;

describe('generated tool types', () => {
  it('agree with the server (the type-check fails otherwise; a stale build too: `pnpm build` regenerates)', () => {
    expect([sameNames, sameOutputNames, inputsDiffer, outputsDiffer]).toEqual([true, true, 'none', 'none']);
  });
  it("take the error codes and the error body from core's error table, and idempotency_key optional in ToolInput", () => {
    expect([sameCodes, sameBody, errorCodeTyped, keyOptional, keyRequired]).toEqual([true, true, true, true, true]);
  });
});
