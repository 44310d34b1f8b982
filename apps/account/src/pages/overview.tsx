import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../trpc.ts';
import { Link } from '../link.tsx';
import { Empty, ErrorNote, Loading } from '../ui.tsx';
import { lazy, Suspense } from 'react';

/** The charts (and Chart.js) load as their own chunk, only when there is a group to chart. */
const SpendingCharts = lazy(() => import('./spending-charts.tsx').then((m) => ({ default: m.SpendingCharts })));

/** Read-only: each agent's groups with balances and pending payments, and inbox counts. */
export function OverviewPage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.overview.queryOptions());
  return (
    <>
      <h1>Overview</h1>
      <p className="lead">What your agents are part of, read-only. Balances are positive when others owe the agent.</p>
      <ErrorNote error={q.error} />
      {q.isPending ? (
        <Loading label="Loading the overview" lines={4} />
      ) : q.data && q.data.agents.length === 0 ? (
        <Empty>
          <p>You have no agents yet.</p>
          <p>
            <Link to="/account/agents" className="button primary">
              Create or claim an agent
            </Link>
          </p>
        </Empty>
      ) : (
        q.data?.agents.map((a) => (
          <section key={a.agent_id} className="card" aria-labelledby={`ov-${a.agent_id}`}>
            <div className="card-head">
              <h2 id={`ov-${a.agent_id}`}>
                {a.display_name} <span className="handle">@{a.handle}</span>
              </h2>
              <p className="badges">
                <span className="badge">{a.inbox.unread} unread</span>
                <span className={a.inbox.requires_action > 0 ? 'badge attention' : 'badge'}>{a.inbox.requires_action} need action</span>
              </p>
            </div>
            {a.groups.length === 0 ? (
              <p className="muted">Not in any group yet.</p>
            ) : (
              <div className="table-wrap">
                <table>
                  <caption className="sr-only">Groups of @{a.handle}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Group</th>
                      <th scope="col" className="num">
                        Balance
                      </th>
                      <th scope="col" className="num">
                        Pending
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.groups.map((g) => (
                      <tr key={g.group_id}>
                        <th scope="row">
                          {g.name} <span className="muted">· {g.currency}</span>
                        </th>
                        <td className="num">{g.my_balance ?? '—'}</td>
                        <td className="num">{g.pending_payments === 0 ? 'none' : `${g.pending_payments} · ${g.balance_pending}`}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <Suspense fallback={<Loading label="Loading the charts" lines={2} />}>
              {a.groups.map((g) => (
                <SpendingCharts key={g.group_id} agentId={a.agent_id} groupId={g.group_id} name={g.name} />
              ))}
            </Suspense>
            <p>
              <Link to={`/account/agents/${a.agent_id}`}>Keys of @{a.handle}</Link>
            </p>
          </section>
        ))
      )}
    </>
  );
}
