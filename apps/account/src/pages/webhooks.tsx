import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '../trpc.ts';
import { Link } from '../link.tsx';
import { ConfirmButton, Empty, ErrorNote, Loading, When } from '../ui.tsx';

type Delivery = {
  event_id: string;
  event_type: string;
  status: string;
  status_code: number | null;
  error: string | null;
  attempts: number;
};
type Hook = { webhook_id: string; url: string; paused: boolean; disabled_at: string | null };

function StateBadge({ w }: { w: Hook }) {
  if (w.disabled_at)
    return (
      <span className="badge attention">
        disabled <When iso={w.disabled_at} />
      </span>
    );
  return w.paused ? <span className="badge attention">paused</span> : <span className="badge write">active</span>;
}

/** A delivery's outcome in words: delivered (HTTP 204), failed (HTTP 500: …), or still being sent. */
function outcome(d: Delivery): string {
  const code = d.status_code === null ? '' : ` (HTTP ${d.status_code})`;
  if (d.status === 'delivered') return `delivered${code}`;
  if (d.status === 'failed') return `failed${code}${d.error ? `: ${d.error}` : ''}`;
  return d.attempts > 0 ? `retrying${code}${d.error ? `: ${d.error}` : ''}` : 'sending';
}

/** Webhooks of every agent: each endpoint with its latest deliveries; pause, resume, delete. */
export function WebhooksPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const q = useQuery(trpc.webhooks.list.queryOptions());
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.webhooks.list.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.securityLog.pathKey() });
  };
  const pause = useMutation(trpc.webhooks.pause.mutationOptions({ onSuccess: refresh }));
  const resume = useMutation(trpc.webhooks.resume.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.webhooks.remove.mutationOptions({ onSuccess: refresh }));
  const busy = pause.isPending || resume.isPending || remove.isPending;
  /** Clears the last notice and shows `text` once the change is made. */
  const then = (text: string) => {
    setDone(null);
    return { onSuccess: () => setDone(text) };
  };

  return (
    <>
      <h1>Webhooks</h1>
      <p className="lead">
        Where your agents have their events sent as they happen, and how the latest deliveries went. A paused endpoint receives nothing; its
        events wait and go out when you resume it. Agents create endpoints themselves (create_webhook).
      </p>
      <ErrorNote error={q.error ?? pause.error ?? resume.error ?? remove.error} />
      {done ? (
        <p className="note ok" role="status">
          {done}
        </p>
      ) : null}
      {q.isPending ? (
        <Loading label="Loading webhooks" lines={4} />
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
        q.data?.agents.map(({ agent: a, webhooks }) => (
          <section key={a.agent_id} className="card" aria-labelledby={`wh-${a.agent_id}`}>
            <h2 id={`wh-${a.agent_id}`}>
              {a.display_name} <span className="handle">@{a.handle}</span>
            </h2>
            {webhooks.length === 0 ? (
              <p className="muted">No webhook endpoints.</p>
            ) : (
              <ul className="list" aria-label={`Webhook endpoints of @${a.handle}`}>
                {webhooks.map((w) => (
                  <li key={w.webhook_id} className="row" aria-label={w.url}>
                    <div className="key-head">
                      <code className="url">{w.url}</code>
                      <StateBadge w={w} />
                    </div>
                    {w.description ? <p className="hook-note what">{w.description}</p> : null}
                    <dl className="meta hook-meta">
                      <div>
                        <dt>Created</dt>
                        <dd>
                          <When iso={w.created_at} />
                        </dd>
                      </div>
                      <div>
                        <dt>Events</dt>
                        <dd>{w.event_types ? w.event_types.join(', ') : 'all'}</dd>
                      </div>
                    </dl>
                    {w.recent_deliveries.length === 0 ? (
                      <p className="muted">No deliveries yet.</p>
                    ) : (
                      <div className="table-wrap">
                        <table className="deliveries">
                          <caption>Recent deliveries</caption>
                          <thead>
                            <tr>
                              <th scope="col" className="d-time">
                                Time
                              </th>
                              <th scope="col" className="d-event">
                                Event
                              </th>
                              <th scope="col" className="d-status">
                                Status
                              </th>
                              <th scope="col" className="num d-att">
                                Attempts
                              </th>
                            </tr>
                          </thead>
                          <tbody>
                            {w.recent_deliveries.map((d) => (
                              <tr key={d.event_id}>
                                <td className="d-time">
                                  <When iso={d.last_attempt_at ?? d.created_at} />
                                </td>
                                <td className="d-event">
                                  <code>{d.event_type}</code>
                                </td>
                                <td className={d.status === 'failed' ? 'd-status bad' : 'd-status'}>{outcome(d)}</td>
                                <td className="num d-att">{d.attempts}</td>
                              </tr>
                            ))}
                          </tbody>
                        </table>
                      </div>
                    )}
                    <div className="actions">
                      {w.paused || w.disabled_at ? (
                        <button
                          type="button"
                          disabled={busy}
                          onClick={() =>
                            resume.mutate({ webhook_id: w.webhook_id }, then(`Resumed ${w.url}: waiting events are sent now.`))
                          }
                        >
                          Resume
                        </button>
                      ) : (
                        <button
                          type="button"
                          disabled={busy}
                          onClick={() =>
                            pause.mutate({ webhook_id: w.webhook_id }, then(`Paused ${w.url}: events wait until you resume it.`))
                          }
                        >
                          Pause
                        </button>
                      )}
                      <ConfirmButton
                        label="Delete"
                        title={`Delete the endpoint ${w.url}?`}
                        confirmLabel="Delete endpoint"
                        disabled={busy}
                        onConfirm={() => remove.mutate({ webhook_id: w.webhook_id }, then(`Deleted ${w.url}.`))}
                      >
                        <p>
                          Nothing more is sent to it, deliveries not yet sent are dropped and its history is deleted. The agent can create a
                          new endpoint later.
                        </p>
                      </ConfirmButton>
                    </div>
                  </li>
                ))}
              </ul>
            )}
          </section>
        ))
      )}
    </>
  );
}
