/**
 * Errors agents met, made to say what to do (through the registry, as REST and MCP call it):
 * - a lower-case currency code: "currency codes are upper case: EUR";
 * - a handle that is not a member but close to one: "did you mean @…?" (details.did_you_mean), for payers,
 *   split participants, record_payment's handles and the member tools;
 * - a group_id (expense_id, payment_id) that is not a UUID, or missing, names the tool that lists them;
 * - import_expenses without (or with an unknown) format says it is required and lists the formats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, type TestAgent } from '../harness.ts';

let h: Harness;
let ann: TestAgent;
let bob: TestAgent;
let groupId: string;
beforeAll(async () => {
  h = await createHarness();
  ann = await h.agent('annabel');
  bob = await h.agent('bobby-lee');
  groupId = (await h.call(ann, 'create_group', { name: 'Hints', currency: 'EUR' })).group.group_id;
  const inv = (await h.call(ann, 'create_invite', { group_id: groupId })).invite;
  await h.call(bob, 'join_group', { code: inv.code });
});
afterAll(async () => {
  await h?.close();
});

const issues = (e: { details?: Record<string, unknown> }) => e.details?.issues as Array<{ path: string; message: string }>;

describe('error hints', () => {
  it('lower-case currency codes', async () => {
    for (const [tool, args, path] of [
      ['create_group', { name: 'x', currency: 'eur' }, 'currency'],
      ['open_direct_group', { handle: bob.handle, currency: 'usd' }, 'currency'],
      [
        'add_expense',
        { group_id: groupId, description: 'x', original_currency: 'gbp', original_amount_minor: 100, exchange_rate: '1.1' },
        'original_currency',
      ],
    ] as const) {
      const e = await h.fail(ann, tool, args);
      expect(e.kittyCode).toBe('VALIDATION_ERROR');
      const issue = issues(e).find((i) => i.path === path)!;
      expect(issue.message, tool).toBe(`currency codes are upper case: ${String((args as Record<string, unknown>)[path]).toUpperCase()}`);
    }
    const other = await h.fail(ann, 'create_group', { name: 'x', currency: 'EURO' });
    expect(issues(other)[0]!.message).toBe('currency must be an ISO 4217 code like EUR');
  });

  it('a handle close to a member suggests the member', async () => {
    const typo = bob.handle.replace('bobby', 'boby');
    const cases = [
      ['add_expense', { group_id: groupId, description: 'x', amount_minor: 100, payers: [{ handle: typo }] }, 'payers.0.handle'],
      [
        'add_expense',
        { group_id: groupId, description: 'x', amount_minor: 100, split: { participants: [{ handle: typo }] } },
        'split.participants.0.handle',
      ],
      ['record_payment', { group_id: groupId, to_handle: typo, amount_minor: 100 }, 'to_handle'],
    ] as const;
    for (const [tool, args, path] of cases) {
      const e = await h.fail(ann, tool, args);
      expect(e.kittyCode, tool).toBe('VALIDATION_ERROR');
      expect(issues(e).find((i) => i.path === path)?.message, tool).toBe(
        `@${typo} is not an active member of this group; did you mean "@${bob.handle}"?`,
      );
      expect(e.details?.did_you_mean).toEqual([bob.handle]);
    }
    const role = await h.fail(ann, 'set_member_role', { group_id: groupId, handle: typo, role: 'admin' });
    expect(role.kittyCode).toBe('NOT_FOUND');
    expect(role.message).toContain(`did you mean "@${bob.handle}"?`);
    // Nothing near: no suggestion.
    const far = await h.fail(ann, 'record_payment', { group_id: groupId, to_handle: 'zzz-nobody-here', amount_minor: 100 });
    expect(issues(far)[0]!.message).toBe('@zzz-nobody-here is not an active member of this group');
    expect(far.details?.did_you_mean).toEqual([]);
  });

  it('a malformed or missing id names the tool that lists them', async () => {
    const bad = await h.fail(ann, 'get_group', { group_id: 'Trip' });
    expect(issues(bad)[0]).toMatchObject({ path: 'group_id', message: 'not a group id: ids are UUIDs; list_groups shows yours' });
    const missing = await h.fail(ann, 'get_balances', {});
    expect(issues(missing)[0]).toMatchObject({ path: 'group_id', message: 'required: the group id (a UUID) that list_groups shows' });
    expect(issues(await h.fail(ann, 'get_expense', { expense_id: '12' }))[0]!.message).toContain('list_expenses');
    expect(issues(await h.fail(ann, 'get_payment', { payment_id: 12 }))[0]!.message).toContain('list_payments');
  });

  it('import_expenses names the formats', async () => {
    const csv = 'Date,Description,Category,Cost,Currency\n';
    const missing = await h.fail(ann, 'import_expenses', { group_id: groupId, csv });
    expect(issues(missing).find((i) => i.path === 'format')?.message).toBe(
      'required: the app the export comes from, one of "splitwise", "spliit", "kitty"',
    );
    const unknown = await h.fail(ann, 'import_expenses', { group_id: groupId, csv, format: 'tricount' });
    expect(issues(unknown).find((i) => i.path === 'format')?.message).toBe(
      'unknown format: the app the export comes from, one of "splitwise", "spliit", "kitty"',
    );
  });
});
