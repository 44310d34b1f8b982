/**
 * Netting out cycles in pairwise debts. pair_debts keeps, per pair, the net of what the history
 * made one member owe the other; each member's rows always sum to their balance. A settlement
 * transfer larger than the direct debt between two people (e.g. a suggested transfer that routes
 * money through a third member) can leave a loop a→b→c→a whose members all have balance zero.
 * Shown as is, those debts say people owe money when nobody does.
 *
 * `netOutCycles` removes every directed cycle by subtracting its smallest edge from all its
 * edges, until none is left. That changes no member's net (each member on a cycle loses the same
 * amount in and out), and an acyclic graph whose members all have net zero has no edges — so when
 * every balance is zero there are no debts. Deterministic: nodes and edges are visited in id order.
 */
import type { DebtEdge } from './split.ts';

/**
 * @param edges debts (debtorId owes creditorId amount > 0, minor units), at most one per ordered pair
 *              and none in both directions of one pair (one pair_debts row per pair)
 * @returns the same debts without directed cycles, sorted by debtor then creditor id
 */
export function netOutCycles(edges: readonly DebtEdge[]): DebtEdge[] {
  const out = new Map<string, Map<string, bigint>>();
  for (const e of edges) {
    if (e.amount <= 0n) continue;
    const m = out.get(e.debtorId) ?? new Map<string, bigint>();
    m.set(e.creditorId, (m.get(e.creditorId) ?? 0n) + e.amount);
    out.set(e.debtorId, m);
  }
  for (let cycle = findCycle(out); cycle; cycle = findCycle(out)) {
    let min = -1n;
    for (let i = 0; i < cycle.length; i++) {
      const v = out.get(cycle[i]!)!.get(cycle[(i + 1) % cycle.length]!)!;
      if (min < 0n || v < min) min = v;
    }
    for (let i = 0; i < cycle.length; i++) {
      const from = out.get(cycle[i]!)!;
      const to = cycle[(i + 1) % cycle.length]!;
      const left = from.get(to)! - min;
      if (left === 0n) from.delete(to);
      else from.set(to, left);
    }
  }
  const result: DebtEdge[] = [];
  for (const debtorId of [...out.keys()].sort()) {
    for (const creditorId of [...out.get(debtorId)!.keys()].sort())
      result.push({ debtorId, creditorId, amount: out.get(debtorId)!.get(creditorId)! });
  }
  return result;
}

/** The first directed cycle found by depth-first search in id order, as its node list; undefined if none. */
function findCycle(out: Map<string, Map<string, bigint>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of [...(out.get(node)?.keys() ?? [])].sort()) {
      const s = state.get(next);
      if (s === 'open') return stack.slice(stack.indexOf(next));
      if (s === undefined) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...out.keys()].sort()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

/** pair_debts rows (agent_a < agent_b; amount > 0 means b owes a) as debt edges. */
export function edgesFromPairRows(rows: ReadonlyArray<{ agentA: string; agentB: string; amountMinor: bigint }>): DebtEdge[] {
  return rows
    .filter((r) => r.amountMinor !== 0n)
    .map((r) =>
      r.amountMinor > 0n
        ? { debtorId: r.agentB, creditorId: r.agentA, amount: r.amountMinor }
        : { debtorId: r.agentA, creditorId: r.agentB, amount: -r.amountMinor },
    );
}
