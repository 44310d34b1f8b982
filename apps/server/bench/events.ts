/**
 * The event log's cost on the hot write (section of `pnpm bench`):
 *
 *   an add_expense write as Kitty sends it (kitty_apply_batch_quiet, then its wake-ups after the commit) with its
 *   event vs the same document without it (the write as it was before events), raw pg, alternating   goal ≤ 1.1x time
 *   the same in a 50-member group (50 recipients): with its event vs without      informational
 *   fan-out: REST add_expense into a 50-member group vs a 4-member group, one loop  informational
 *   commit → SSE and commit → webhook delivery p50/p99 (event-delivery.ts)
 *
 * The batch documents are written here by hand with every key add_expense sends (guard, rows,
 * balances, pairs, counters, idempotency record, and the `events` element).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { CONNECTIONS, load, paired, compare } from './measure.ts';
import { checkpointer, rawLoop } from './writes.ts';
import { benchEventDelivery } from './event-delivery.ts';
import { expenseDoc, type Agent } from './expense-doc.ts';

type Post = (p: string, body: unknown, key?: string) => Promise<any>;
export async function benchEvents(kittyUrl: string, databaseUrl: string, post: Post): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS + 2 });
  const checkpoint = checkpointer(pool);
  const register = async (name: string): Promise<Agent> => {
    const r = await post('/v1/agents', { handle: `${name}-${randomUUID().slice(0, 8)}`, display_name: name });
    return { id: r.agent.agent_id, key: r.api_key, handle: r.agent.handle };
  };
  const group = async (size: number, tag: string) => {
    const members = [await register(`ev-${tag}-0`)];
    const id = (
      await post('/v1/tools/create_group', { name: `Events ${tag}`, currency: 'EUR', idempotency_key: randomUUID() }, members[0]!.key)
    ).group.group_id as string;
    const inv = await post('/v1/tools/create_invite', { group_id: id, max_uses: 50, idempotency_key: randomUUID() }, members[0]!.key);
    for (let i = 1; i < size; i++) {
      const a = await register(`ev-${tag}-${i}`);
      await post('/v1/tools/join_group', { code: inv.invite.code, idempotency_key: randomUUID() }, a.key);
      members.push(a);
    }
    return { id, members };
  };
  try {
    // One 4-member group per connection (no shared member rows), as in the write section.
    const fours: Array<{ id: string; members: Agent[] }> = [];
    for (let i = 0; i < CONNECTIONS; i++) fours.push(await group(4, `g${i}`));
    const run =
      (withEvent: boolean, gs = fours) =>
      () =>
        rawLoop(pool, async (c, i) => {
          const g = gs[i % gs.length]!;
          await c.query({
            name: 'bench_apply_batch',
            text: 'SELECT kitty_apply_batch_quiet($1::jsonb)',
            values: [expenseDoc(g.id, g.members, withEvent)],
          });
          // The wake-ups Kitty sends after the commit (packages/core kernel/wakes.ts): the members' inboxes, and the
          // event's recipients when there is an event.
          const ids = g.members.map((m) => m.id);
          await c.query({
            name: 'bench_wakes',
            text: `SELECT (SELECT count(pg_notify('kitty_events', $1)) WHERE $1 <> ''), (SELECT count(pg_notify('kitty_inbox', a)) FROM unnest($2::text[]) a)`,
            values: [withEvent ? ids.join(',') : '', ids],
          });
        });
    /**
     * WAL bytes one write generates (EXPLAIN ANALYZE, WAL; mean of 40): independent of the machine's load. The first
     * writes after a checkpoint log whole pages (full-page images) of every page they touch first, so 10 unmeasured
     * writes of each side go before its 40 (without them the whole bench of 2026-11-27 measured 12.9 vs 9.0 KiB a
     * write, 1.43x; with them the next run 9.5 vs 7.6 KiB, 1.26x).
     */
    const walPerWrite = async (g: { id: string; members: Agent[] }, withEvent: boolean) => {
      const c = await pool.connect();
      try {
        for (let i = 0; i < 10; i++) await c.query('SELECT kitty_apply_batch($1::jsonb)', [expenseDoc(g.id, g.members, withEvent)]);
        let bytes = 0;
        for (let i = 0; i < 40; i++) {
          const r = await c.query('EXPLAIN (ANALYZE, WAL, FORMAT JSON) SELECT kitty_apply_batch($1::jsonb)', [
            expenseDoc(g.id, g.members, withEvent),
          ]);
          bytes += (r.rows[0]['QUERY PLAN'] as Array<{ Plan: { 'WAL Bytes': number } }>)[0]!.Plan['WAL Bytes'];
        }
        return bytes / 40;
      } finally {
        c.release();
      }
    };
    const walNote = async (g: { id: string; members: Agent[] }) => {
      const [w, wo] = [await walPerWrite(g, true), await walPerWrite(g, false)];
      return `WAL per write ${(w / 1024).toFixed(1)} vs ${(wo / 1024).toFixed(1)} KiB (${(w / wo).toFixed(2)}x)`;
    };
    await run(true)();
    const [withEv, without, ratio] = await paired(run(true), run(false), checkpoint);
    compare(
      'add_expense write (kitty_apply_batch_quiet + wake-ups, 4 members): with its event vs without',
      withEv,
      'with expense.created (4 recipients)',
      without,
      'the same document without events',
      '≥ 0.91x (≤ 1.1x time)',
      ratio,
      `${ratio >= 0.91 ? 'goal met' : 'goal NOT met'}; ${await walNote(fours[0]!)}`,
    );

    // The same in one 50-member group (every connection writes into it: the fan-out of the event alone).
    const big = await group(50, 'fan');
    const [withBig, withoutBig, bigRatio] = await paired(run(true, [big]), run(false, [big]), checkpoint);
    compare(
      'add_expense write (kitty_apply_batch_quiet + wake-ups, one 50-member group): with its event vs without',
      withBig,
      'with expense.created (50 recipients)',
      withoutBig,
      'the same document without events',
      'informational',
      bigRatio,
      await walNote(big),
    );

    // Fan-out over REST, one loop each: time per write into 50 recipients vs 4.
    const small = fours[0]!;
    const rest = (g: { id: string; members: Agent[] }) => () =>
      load({
        url: `${kittyUrl}/v1/tools/add_expense`,
        method: 'POST',
        connections: 1,
        requests: [
          {
            setupRequest: (req: any) => ({
              ...req,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${g.members[0]!.key}` },
              body: JSON.stringify({ group_id: g.id, description: 'Coffee', amount_minor: 5000, idempotency_key: randomUUID() }),
            }),
          },
        ],
      });
    const [fifty, four, fanRatio] = await paired(rest(big), rest(small), checkpoint);
    compare(
      'Fan-out: add_expense into 50 members vs 4 (one loop; events, inbox items, shares)',
      fifty,
      'REST add_expense, 50-member group',
      four,
      'REST add_expense, 4-member group',
      'informational',
      fanRatio,
      `time per write ${(1000 / fifty.rps).toFixed(1)} vs ${(1000 / four.rps).toFixed(1)} ms`,
    );

    await benchEventDelivery(kittyUrl, databaseUrl, group, post);
  } finally {
    await pool.end();
  }
}
