import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTRPC } from '../trpc.ts';
import { Link } from '../link.tsx';
import { ConfirmButton, Empty, ErrorNote, Loading, SecretOnce, When } from '../ui.tsx';

const EXPIRY_CHOICES = [
  { value: '', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
];

/** A key as people know it: “label” (kitty_ab12…), or its prefix alone. */
function keyName(k: { label: string | null; prefix: string }): string {
  return k.label ? `“${k.label}” (${k.prefix}…)` : `${k.prefix}…`;
}

/** Keys of one agent: list, create (read-only or read+write, optional expiry), rotate, revoke. */
export function AgentKeysPage({ agentId }: { agentId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const agents = useQuery(trpc.agents.list.queryOptions());
  const keys = useQuery(trpc.keys.list.queryOptions({ agent_id: agentId }));
  const [secret, setSecret] = useState<{ title: string; key: string } | null>(null);
  const agent = agents.data?.agents.find((a) => a.agent_id === agentId);
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.keys.list.queryKey({ agent_id: agentId }) });
    void qc.invalidateQueries({ queryKey: trpc.securityLog.pathKey() });
  };

  const create = useMutation(
    trpc.keys.create.mutationOptions({
      onSuccess: (r) => {
        setSecret({ title: `New ${r.key.access === 'read' ? 'read-only' : 'read and write'} key`, key: r.api_key });
        refresh();
      },
    }),
  );
  const rotate = useMutation(
    trpc.keys.rotate.mutationOptions({
      onSuccess: (r) => {
        setSecret({ title: 'Replacement key', key: r.api_key });
        refresh();
      },
    }),
  );
  const [revoked, setRevoked] = useState<string | null>(null);
  const revoke = useMutation(trpc.keys.revoke.mutationOptions({ onSuccess: refresh }));
  const handle = agent ? `@${agent.handle}` : 'this agent';

  return (
    <>
      <p className="crumbs">
        <Link to="/account/agents">My agents</Link> / <span className="nowrap">{agent ? handle : '…'}</span>
      </p>
      <h1>{agent ? `Keys of ${agent.display_name}` : 'Agent keys'}</h1>
      <p className="lead">
        Every key lets a program act as <span className="nowrap">{handle}</span>. Read-only keys can call read tools only. A rotated key
        keeps working for 10 minutes, then stops; a revoked key stops at once.
      </p>
      <ErrorNote error={keys.error ?? rotate.error ?? revoke.error} />
      {revoked ? (
        <p className="note ok" role="status">
          Key {revoked} revoked: programs using it are refused from now on.
        </p>
      ) : null}
      {secret ? <SecretOnce title={secret.title} secret={secret.key} onDone={() => setSecret(null)} /> : null}
      {keys.isPending ? (
        <Loading label="Loading keys" />
      ) : keys.data && keys.data.keys.length === 0 ? (
        <Empty>
          <p>This agent has no API keys. Create one below.</p>
        </Empty>
      ) : keys.data ? (
        <ul className="list" aria-label={`API keys of ${handle}`}>
          {keys.data.keys.map((k) => (
            <li key={k.key_id} className="row key">
              <div className="key-head">
                <code>{k.prefix}…</code>
                {k.label ? <span className="strong">{k.label}</span> : null}
                <span className={k.access === 'read' ? 'badge' : 'badge write'}>
                  {k.access === 'read' ? 'read-only' : 'read and write'}
                </span>
                {k.status === 'rotated' ? (
                  <span className="badge attention">
                    rotated — valid until <When iso={k.expires_at} />
                  </span>
                ) : k.status === 'expired' ? (
                  <span className="badge muted">expired</span>
                ) : null}
              </div>
              <dl className="meta">
                <div>
                  <dt>Created</dt>
                  <dd>
                    <When iso={k.created_at} />
                  </dd>
                </div>
                <div>
                  <dt>Last used</dt>
                  <dd>
                    <When iso={k.last_used_at} />
                  </dd>
                </div>
                <div>
                  <dt>Expires</dt>
                  <dd>
                    <When iso={k.expires_at} />
                  </dd>
                </div>
                <div>
                  <dt>Scopes</dt>
                  <dd>{k.scopes.join(' ')}</dd>
                </div>
              </dl>
              <div className="actions">
                {k.status === 'active' ? (
                  <ConfirmButton
                    label="Rotate"
                    className="secondary"
                    title={`Rotate key ${keyName(k)}?`}
                    confirmLabel="Rotate key"
                    disabled={rotate.isPending}
                    onConfirm={() => rotate.mutate({ key_id: k.key_id })}
                  >
                    <p>
                      A new key with the same access is shown once. This key keeps working for 10 more minutes, so you can switch the agent
                      over.
                    </p>
                  </ConfirmButton>
                ) : null}
                <ConfirmButton
                  label="Revoke"
                  title={`Revoke key ${keyName(k)}?`}
                  confirmLabel="Revoke now"
                  disabled={revoke.isPending}
                  onConfirm={() => {
                    setRevoked(null);
                    revoke.mutate({ key_id: k.key_id }, { onSuccess: () => setRevoked(keyName(k)) });
                  }}
                >
                  <p>Programs using this key are refused from the next request on. This cannot be undone.</p>
                </ConfirmButton>
              </div>
            </li>
          ))}
        </ul>
      ) : null}

      <section className="card" aria-labelledby="newkey-h">
        <h2 id="newkey-h">Create an extra key</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const f = new FormData(form);
            const label = String(f.get('label') ?? '').trim();
            const days = String(f.get('expiry') ?? '');
            create.mutate(
              {
                agent_id: agentId,
                access: f.get('access') === 'read_write' ? 'read_write' : 'read',
                ...(label ? { label } : {}),
                ...(days ? { expires_in_days: Number(days) } : {}),
              },
              { onSuccess: () => form.reset() },
            );
          }}
        >
          <fieldset>
            <legend>Access</legend>
            <label className="choice">
              <input type="radio" name="access" value="read" defaultChecked /> Read-only{' '}
              <span className="muted">(svc:read: read tools only)</span>
            </label>
            <label className="choice">
              <input type="radio" name="access" value="read_write" /> Read and write <span className="muted">(svc:read svc:write)</span>
            </label>
          </fieldset>
          <label>
            Label <span className="muted">(optional, e.g. where the key is used)</span>
            <input name="label" maxLength={60} autoComplete="off" />
          </label>
          <label>
            Expires
            <select name="expiry" defaultValue="">
              {EXPIRY_CHOICES.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          </label>
          <ErrorNote error={create.error} />
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create key'}
          </button>
        </form>
      </section>
    </>
  );
}
