/** The add_expense batch document the events rows send to kitty_apply_batch (events.ts, event-delivery.ts). */
import { randomUUID } from 'node:crypto';

export interface Agent {
  id: string;
  key: string;
  handle: string;
}

/** An add_expense batch document (1234 split equally, the first member pays), with or without its event. */
export function expenseDoc(groupId: string, members: Agent[], withEvent: boolean, id: string = randomUUID()) {
  const ids = members.map((m) => m.id).sort();
  const payer = members[0]!.id;
  const n = BigInt(ids.length);
  const owed = ids.map((_, i) => 1234n / n + (BigInt(i) < 1234n % n ? 1n : 0n));
  const inbox = ids.filter((a) => a !== payer).map((a) => ({ id: randomUUID(), agent_id: a }));
  const doc: Record<string, unknown> = {
    idempotency: {
      agent_id: payer,
      tool: 'add_expense',
      key: randomUUID(),
      request_hash: 'h'.repeat(64),
      response: { stored: 'x'.repeat(900) },
    },
    group_id: groupId,
    guard: { lock: 'share', roster: ids },
    rows: {
      expenses: [
        {
          id,
          group_id: groupId,
          description: 'Coffee',
          amount_minor: '1234',
          date: '2026-11-25',
          split_method: 'equal',
          created_by: payer,
        },
      ].map((e) => ({ ...e, created_at: new Date().toISOString(), updated_at: new Date().toISOString() })),
      expense_shares: ids.map((a, i) => ({
        expense_id: id,
        agent_id: a,
        paid_minor: a === payer ? '1234' : '0',
        owed_minor: String(owed[i]),
      })),
      activities: [
        {
          group_id: groupId,
          actor_id: payer,
          action: 'expense.added',
          entity_type: 'expense',
          entity_id: id,
          after: { amount_minor: '1234' },
        },
      ],
      inbox_items: inbox.map((x) => ({
        ...x,
        kind: 'expense_added',
        text: '@bench added "Coffee" (€12.34)',
        requires_action: false,
        priority: 5,
        entity_type: 'expense',
        entity_id: id,
        group_id: groupId,
      })),
    },
    balances: ids.map((a, i) => ({ agent_id: a, delta: String((a === payer ? 1234n : 0n) - owed[i]!) })),
    pairs: ids
      .filter((a) => a !== payer)
      .map((d) => ({ a: d < payer ? d : payer, b: d < payer ? payer : d, delta: String((d < payer ? -1n : 1n) * owed[ids.indexOf(d)]!) })),
    counters: inbox.map((x) => ({ agent_id: x.agent_id, unread: 1, requires_action: 0 })),
  };
  if (withEvent)
    doc.events = [
      {
        type: 'expense.created',
        group_id: groupId,
        actor_id: payer,
        data: { expense_id: id, description: 'Coffee', amount_minor: '1234', currency: 'EUR', date: '2026-11-25' },
        recipients: ids,
        inbox_items: ids.map((a) => inbox.find((x) => x.agent_id === a)?.id ?? null),
      },
    ];
  return JSON.stringify(doc);
}
