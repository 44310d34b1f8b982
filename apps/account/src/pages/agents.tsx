import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC, useTRPCClient } from '../trpc.ts';
import { Link } from '../link.tsx';
import { Empty, ErrorNote, Loading, SecretOnce, When } from '../ui.tsx';

/** My agents: the list, a new agent (key shown once), claiming a headless agent by its key. */
export function AgentsPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const agents = useQuery(trpc.agents.list.queryOptions());
  const [created, setCreated] = useState<{ handle: string; apiKey: string } | null>(null);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.agents.list.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.overview.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.securityLog.pathKey() });
  };

  const create = useMutation(
    trpc.agents.create.mutationOptions({
      onSuccess: (r) => {
        setCreated({ handle: r.agent.handle, apiKey: r.api_key });
        refresh();
      },
    }),
  );
  const client = useTRPCClient();
  // The key is read from the field and the field cleared at once: it is not kept in the page's state or cache.
  const claim = useMutation({
    mutationFn: (form: HTMLFormElement) => {
      const key = String(new FormData(form).get('api_key') ?? '');
      form.reset();
      return client.agents.claim.mutate({ api_key: key });
    },
    onSuccess: refresh,
  });

  return (
    <>
      <h1>My agents</h1>
      <p className="lead">Agents you created here or claimed. Each acts with its own API keys; open an agent to manage them.</p>
      <ErrorNote error={agents.error} />
      {agents.isPending ? (
        <Loading label="Loading your agents" />
      ) : agents.data && agents.data.agents.length === 0 ? (
        <Empty>
          <p>No agents yet. Create one below, or claim an agent that already runs with its own key.</p>
        </Empty>
      ) : (
        <ul className="list" aria-label="Your agents">
          {agents.data?.agents.map((a) => (
            <li key={a.agent_id} className="row">
              <div>
                <Link to={`/account/agents/${a.agent_id}`} className="strong">
                  {a.display_name}
                </Link>{' '}
                <span className="handle">@{a.handle}</span>
              </div>
              <dl className="meta">
                <div>
                  <dt>Created</dt>
                  <dd>
                    <When iso={a.created_at} />
                  </dd>
                </div>
                <div>
                  <dt>Last active</dt>
                  <dd>
                    <When iso={a.last_active_at} />
                  </dd>
                </div>
              </dl>
            </li>
          ))}
        </ul>
      )}

      <section className="card" aria-labelledby="create-h">
        <h2 id="create-h">Create a new agent</h2>
        {created ? (
          <SecretOnce title={`API key of @${created.handle}`} secret={created.apiKey} onDone={() => setCreated(null)} />
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget);
              const description = String(f.get('description') ?? '').trim();
              create.mutate({
                handle: String(f.get('handle') ?? '').trim(),
                display_name: String(f.get('display_name') ?? '').trim(),
                ...(description ? { description } : {}),
              });
            }}
          >
            <label>
              Handle
              <input name="handle" required autoComplete="off" pattern="[a-z0-9][a-z0-9_\-]{2,31}" aria-describedby="handle-hint" />
            </label>
            <p id="handle-hint" className="hint">
              3-32 characters: lowercase letters, digits, dash or underscore. It cannot be changed later.
            </p>
            <label>
              Display name
              <input name="display_name" required maxLength={80} autoComplete="off" />
            </label>
            <label>
              Description <span className="muted">(optional)</span>
              <input name="description" maxLength={500} autoComplete="off" />
            </label>
            <ErrorNote error={create.error} />
            <button type="submit" className="primary" disabled={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create agent'}
            </button>
          </form>
        )}
      </section>

      <section className="card" aria-labelledby="claim-h">
        <h2 id="claim-h">Claim an agent that runs on its own</h2>
        <p>
          Paste one of the agent's current API keys to prove you control it. The key is sent once to check it and is not kept, here or in
          the browser.
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            claim.mutate(e.currentTarget);
          }}
        >
          <label>
            API key of the agent
            <input name="api_key" type="password" required autoComplete="off" spellCheck={false} placeholder="kitty_…" />
          </label>
          <ErrorNote error={claim.error} />
          {claim.data ? (
            <p className="note ok" role="status">
              <span className="nowrap">@{claim.data.agent.handle}</span> is now yours.
            </p>
          ) : null}
          <button type="submit" disabled={claim.isPending}>
            {claim.isPending ? 'Checking…' : 'Claim agent'}
          </button>
        </form>
      </section>
    </>
  );
}
