import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '../trpc.ts';
import { ConfirmButton, Empty, ErrorNote, Loading, When } from '../ui.tsx';

/** Connected apps (OAuth grants): who acts as which agent; disconnect stops every token of the grant. */
export function AppsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const apps = useQuery(trpc.apps.list.queryOptions());
  const disconnect = useMutation(
    trpc.apps.disconnect.mutationOptions({
      onSuccess: () => {
        void qc.invalidateQueries({ queryKey: trpc.apps.list.queryKey() });
        void qc.invalidateQueries({ queryKey: trpc.securityLog.pathKey() });
      },
    }),
  );
  return (
    <>
      <h1>Connected apps</h1>
      <p className="lead">Apps you allowed to act as one of your agents (for example an MCP client that signed in through Kitty).</p>
      <ErrorNote error={apps.error ?? disconnect.error} />
      {apps.isPending ? (
        <Loading label="Loading connected apps" />
      ) : apps.data && apps.data.apps.length === 0 ? (
        <Empty>
          <p>
            No apps are connected. When an MCP client asks to use Kitty for you, you approve it on Kitty's sign-in page and it appears here.
          </p>
        </Empty>
      ) : (
        <ul className="list" aria-label="Connected apps">
          {apps.data?.apps.map((c) => (
            <li key={c.connection_id} className="row">
              <div className="key-head">
                <span className="strong">{c.client_name ?? c.client_id}</span>
                {c.client_host ? <span className="muted">{c.client_host}</span> : null}
                {c.scopes.includes('svc:write') ? (
                  <span className="badge write">read and write</span>
                ) : (
                  <span className="badge">read-only</span>
                )}
              </div>
              <dl className="meta">
                <div>
                  <dt>Acts as</dt>
                  <dd>
                    {c.agent.display_name} <span className="handle">@{c.agent.handle}</span>
                  </dd>
                </div>
                <div>
                  <dt>Scopes</dt>
                  <dd>{c.scopes.join(' ')}</dd>
                </div>
                <div>
                  <dt>Connected</dt>
                  <dd>
                    <When iso={c.created_at} />
                  </dd>
                </div>
                <div>
                  <dt>Last used</dt>
                  <dd>
                    <When iso={c.last_used_at} />
                  </dd>
                </div>
              </dl>
              <div className="actions">
                <ConfirmButton
                  label="Disconnect"
                  title={`Disconnect ${c.client_name ?? c.client_id}?`}
                  confirmLabel="Disconnect"
                  disabled={disconnect.isPending}
                  onConfirm={() => disconnect.mutate({ connection_id: c.connection_id })}
                >
                  <p>Every token of this app stops working at once. To use it again it has to ask for your permission again.</p>
                </ConfirmButton>
              </div>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
