/**
 * Moving one group between two Kitty servers over REST: export_group (json) on the first, its answer's
 * data passed as `document` to import_expenses with format "kitty" on the second. Expenses keep their
 * payers, shares, dates, categories and notes (equal, exact, percent and share splits, two payers, a
 * foreign-currency expense, a refund); confirmed payments are booked, pending ones and deleted expenses
 * skipped; every member's balance is the same after the import; a second import adds nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../server-harness.ts';

let source: TestServer;
let target: TestServer;
beforeAll(async () => {
  [source, target] = await Promise.all([startTestServer(), startTestServer()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([source?.close(), target?.close()]);
});

type Agent = { apiKey: string; handle: string };
const key = () => `k-${randomUUID()}`;

async function call(server: TestServer, who: Agent, tool: string, args: Record<string, unknown>) {
  const r = await server.http(`/v1/tools/${tool}`, { apiKey: who.apiKey, body: args });
  if (r.status !== 200) throw new Error(`${tool}: ${r.text}`);
  return r.json.data;
}

/** A group of the given agents (the first creates it and invites the others). */
async function group(server: TestServer, members: Agent[]): Promise<string> {
  const gid = (await call(server, members[0]!, 'create_group', { name: 'Trip', currency: 'EUR', idempotency_key: key() })).group.group_id;
  for (const m of members.slice(1)) {
    const code = (await call(server, members[0]!, 'create_invite', { group_id: gid, idempotency_key: key() })).invite.code;
    await call(server, m, 'join_group', { code, idempotency_key: key() });
  }
  return gid;
}

const balancesByHandle = async (server: TestServer, who: Agent, gid: string) =>
  Object.fromEntries(
    ((await call(server, who, 'get_balances', { group_id: gid })).members as Array<{ handle: string; balance_minor: number }>).map((b) => [
      b.handle,
      b.balance_minor,
    ]),
  );

describe('import_expenses format kitty', () => {
  it('moves a group to another server with the same balances; a second import adds nothing', async () => {
    const [ana, ben, cai] = await Promise.all(['ana', 'ben', 'cai'].map((n) => source.agent(n)));
    const gid = await group(source, [ana!, ben!, cai!]);

    await call(source, ana!, 'add_expense', {
      group_id: gid,
      description: 'Groceries',
      amount_minor: 10_000,
      category: 'groceries',
      idempotency_key: key(),
    });
    await call(source, ben!, 'add_expense', {
      group_id: gid,
      description: 'Ski passes',
      amount_minor: 24_000,
      date: '2026-02-03',
      notes: 'three days',
      split: {
        method: 'exact',
        participants: [
          { handle: ana!.handle, amount_minor: 6000 },
          { handle: cai!.handle, amount_minor: 18_000 },
        ],
      },
      idempotency_key: key(),
    });
    await call(source, cai!, 'add_expense', {
      group_id: gid,
      description: 'Fondue',
      amount_minor: 10_001,
      split: {
        method: 'percent',
        participants: [
          { handle: ana!.handle, percent: '33.33' },
          { handle: ben!.handle, percent: '33.33' },
          { handle: cai!.handle, percent: '33.34' },
        ],
      },
      idempotency_key: key(),
    });
    await call(source, ana!, 'add_expense', {
      group_id: gid,
      description: 'Chalet',
      amount_minor: 90_000,
      payers: [
        { handle: ana!.handle, amount_minor: 60_000 },
        { handle: ben!.handle, amount_minor: 30_000 },
      ],
      split: {
        method: 'shares',
        participants: [
          { handle: ana!.handle, shares: 2 },
          { handle: ben!.handle, shares: 1 },
          { handle: cai!.handle, shares: 1 },
        ],
      },
      idempotency_key: key(),
    });
    await call(source, ben!, 'add_expense', {
      group_id: gid,
      description: 'Cable car',
      original_currency: 'CHF',
      original_amount_minor: 4550,
      exchange_rate: '1.0523',
      idempotency_key: key(),
    });
    await call(source, ana!, 'add_expense', { group_id: gid, description: 'Refund', amount_minor: -2002, idempotency_key: key() });
    const gone = await call(source, cai!, 'add_expense', {
      group_id: gid,
      description: 'Mistake',
      amount_minor: 999,
      idempotency_key: key(),
    });
    await call(source, cai!, 'delete_expense', { expense_id: gone.expense.expense_id, idempotency_key: key() });
    const paid = await call(source, cai!, 'record_payment', {
      group_id: gid,
      to_handle: ana!.handle,
      amount_minor: 5000,
      note: 'first part',
      idempotency_key: key(),
    });
    await call(source, ana!, 'confirm_payment', { payment_id: paid.payment.payment_id, idempotency_key: key() });
    await call(source, ben!, 'record_payment', {
      group_id: gid,
      to_handle: ana!.handle,
      amount_minor: 700,
      allow_overpayment: true,
      idempotency_key: key(),
    }); // stays pending
    const before = await balancesByHandle(source, ana!, gid);

    const exported = await call(source, ben!, 'export_group', { group_id: gid, format: 'json', include_deleted: true });

    // The target server: the same people (cai under another handle), a new group.
    const t = await Promise.all(
      [ana!.handle, ben!.handle].map(async (h) => {
        const r = await target.http('/v1/agents', { body: { handle: h, display_name: h } });
        return { apiKey: r.json.data.api_key as string, handle: h };
      }),
    );
    const moved = await target.agent('cai-moved');
    const tgid = await group(target, [t[0]!, t[1]!, moved]);
    const args = { group_id: tgid, format: 'kitty', document: exported, mapping: { [cai!.handle]: moved.handle } };

    const dry = await call(target, t[0]!, 'import_expenses', { ...args, dry_run: true, idempotency_key: key() });
    // A preview reports what the import would book, and books nothing (the real call below still imports all).
    expect(dry).toMatchObject({ imported_expenses: 6, imported_payments: 1, dry_run: true });
    const first = await call(target, t[0]!, 'import_expenses', { ...args, idempotency_key: key() });
    expect(first).toMatchObject({ imported_expenses: 6, imported_payments: 1, already_imported: 0 });
    expect(first.skipped.map((s: { message: string }) => s.message)).toEqual([
      expect.stringContaining('"Mistake") is deleted'),
      expect.stringContaining('is pending'),
    ]);
    const after = await balancesByHandle(target, t[0]!, tgid);
    expect(after).toEqual({ [ana!.handle]: before[ana!.handle], [ben!.handle]: before[ben!.handle], [moved.handle]: before[cai!.handle] });

    const ski = (await call(target, t[1]!, 'list_expenses', { group_id: tgid })).expenses.find(
      (e: { description: string }) => e.description === 'Ski passes',
    );
    expect(ski).toMatchObject({ date: '2026-02-03', notes: 'three days', amount_minor: 24_000 });
    expect(
      (await call(target, t[0]!, 'list_expenses', { group_id: tgid })).expenses.find(
        (e: { description: string }) => e.description === 'Cable car',
      ),
    ).toMatchObject({ original_currency: 'CHF', original_amount_minor: 4550, exchange_rate: '1.0523' });

    const second = await call(target, t[1]!, 'import_expenses', { ...args, idempotency_key: key() });
    expect(second).toMatchObject({ imported_expenses: 0, imported_payments: 0, already_imported: 7 });
    expect(await balancesByHandle(target, t[0]!, tgid)).toEqual(after);
  }, 120_000);

  it('refuses what is not an export, an unknown member, another currency, and csv with kitty; nothing booked', async () => {
    const a = await target.agent('solo');
    const gid = await group(target, [a]);
    const bad = async (args: Record<string, unknown>) => {
      const r = await target.http('/v1/tools/import_expenses', {
        apiKey: a.apiKey,
        body: { group_id: gid, format: 'kitty', idempotency_key: key(), ...args },
      });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.code).toBe('VALIDATION_ERROR');
      return r.json.error.details.issues.map((i: { path: string }) => i.path) as string[];
    };
    expect(await bad({})).toEqual(['document']);
    expect(await bad({ document: { hello: 'world' } })).toEqual(['document']);
    const doc = (currency: string, handle: string) => ({
      format: 'json',
      group: { group_id: randomUUID(), currency },
      json: {
        expenses: [
          {
            expense_id: randomUUID(),
            description: 'x',
            amount_minor: 100,
            date: '2026-01-01',
            shares: [{ handle, paid_minor: 100, owed_minor: 100 }],
          },
        ],
        payments: [],
      },
    });
    expect(await bad({ document: doc('USD', a.handle) })).toEqual(['document.group.currency']);
    expect(await bad({ document: doc('EUR', 'nobody-here') })).toEqual(['document.json.expenses.0.shares.0.handle']);
    expect(await bad({ document: doc('EUR', a.handle), csv: 'a,b' })).toEqual(['document']);
    expect((await call(target, a, 'list_expenses', { group_id: gid })).expenses).toEqual([]);
  });
});
