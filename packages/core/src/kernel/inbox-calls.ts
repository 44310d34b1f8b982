/**
 * The one call that acts on an inbox item: for an open item the call that answers it (confirm_payment,
 * join_group), otherwise the read that shows its subject (get_payment, get_expense, list_messages, get_group …),
 * falling back to marking it read. Write calls carry an idempotency_key derived from the item, so sending the
 * suggested call twice does the thing once.
 */
import type { InboxSummary, InboxTopItem } from './context.ts';

export interface ItemCallInput {
  item_id: string;
  requires_action: boolean;
  entity: { type: string; id: string } | null;
  group_id: string | null;
  /** The invite's code, for an open invite item (join_group needs it). */
  code?: string | null | undefined;
}

export type ItemCall = { tool: string; arguments: Record<string, unknown> };

/** The idempotency_key of the write an item suggests: stable per item. */
function itemIdempotencyKey(itemId: string): string {
  return `inbox-${itemId}`;
}

export function itemCall(i: ItemCallInput): ItemCall {
  const idempotency_key = itemIdempotencyKey(i.item_id);
  const e = i.entity;
  if (i.requires_action && e?.type === 'payment') return { tool: 'confirm_payment', arguments: { payment_id: e.id, idempotency_key } };
  if (i.requires_action && e?.type === 'invite' && i.code) return { tool: 'join_group', arguments: { code: i.code, idempotency_key } };
  switch (e?.type) {
    case 'payment':
      return { tool: 'get_payment', arguments: { payment_id: e.id } };
    case 'expense':
      return { tool: 'get_expense', arguments: { expense_id: e.id } };
    case 'conversation':
      return { tool: 'list_messages', arguments: { conversation_id: e.id } };
    case 'invite':
      return { tool: 'get_invite', arguments: { invite_id: e.id } };
    case 'group':
      return { tool: 'get_group', arguments: { group_id: e.id } };
  }
  if (i.group_id) return { tool: 'get_group', arguments: { group_id: i.group_id } };
  return { tool: 'mark_inbox_read', arguments: { item_ids: [i.item_id], idempotency_key } };
}

/** A top item as kitty_inbox_summary returns it (flat columns; code only for an open invite). */
interface RawTopItem {
  item_id: string;
  kind: string;
  requires_action: boolean;
  entity_type: string | null;
  entity_id: string | null;
  group_id: string | null;
  code: string | null;
}

/** The summary as the SQL function answers it → the wire shape (top_items with their call). */
export function finishSummary(raw: (Omit<InboxSummary, 'top_items'> & { top_items?: unknown }) | null): InboxSummary | null {
  if (!raw) return null;
  const items = (raw.top_items ?? []) as RawTopItem[];
  const top_items: InboxTopItem[] = items.map((r) => {
    const entity = r.entity_type && r.entity_id ? { type: r.entity_type, id: r.entity_id } : null;
    const base = { item_id: r.item_id, kind: r.kind, requires_action: r.requires_action, entity };
    return { ...base, call: itemCall({ ...base, group_id: r.group_id, code: r.code }) };
  });
  return { unread: raw.unread, requires_action: raw.requires_action, top: raw.top, top_items };
}

/**
 * The summary as a credential with `scopes` sees it: a top item whose call needs a scope the credential lacks (a
 * read-only key and confirm_payment) points at the read of its subject instead, like suggested_next.
 */
export function callableBy(summary: InboxSummary, scopeOf: (tool: string) => string | undefined, scopes: readonly string[]): InboxSummary {
  const allowed = (tool: string) => {
    const scope = scopeOf(tool);
    return !scope || scopes.includes(scope);
  };
  if (summary.top_items.every((i) => allowed(i.call.tool))) return summary;
  return {
    ...summary,
    top_items: summary.top_items.map((i) => {
      if (allowed(i.call.tool)) return i;
      const read = itemCall({ item_id: i.item_id, requires_action: false, entity: i.entity, group_id: null });
      return { ...i, call: allowed(read.tool) ? read : { tool: 'get_inbox', arguments: {} } };
    }),
  };
}
