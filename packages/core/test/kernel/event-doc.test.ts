import { describe, expect, it } from 'vitest';
import { eventDoc } from '../../src/kernel/events.ts';

describe('eventDoc', () => {
  it('turns every bigint in the data into its decimal string, at any depth, so the document serialises as JSON', () => {
    const doc = eventDoc({
      type: 'payment.recorded',
      actorId: 'a',
      recipients: ['b', 'a', 'b'],
      data: { amount_minor: -12345678901234567890n, nested: { list: [1n, 'x', { v: 2n }] }, note: null },
    });
    expect(doc.data).toEqual({ amount_minor: '-12345678901234567890', nested: { list: ['1', 'x', { v: '2' }] }, note: null });
    expect(doc.recipients).toEqual(['a', 'b']);
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('answers data without bigints as it is (no copy) and serialises it as a JSON copy would', () => {
    const data = { expense_id: 'e', amount_minor: '100', when: new Date('2026-11-27T00:00:00Z'), skipped: undefined };
    const doc = eventDoc({ type: 'expense.created', actorId: 'a', recipients: ['a'], data });
    expect(doc.data).toBe(data);
    expect(JSON.stringify(doc.data)).toBe(JSON.stringify(JSON.parse(JSON.stringify(data))));
  });
});
