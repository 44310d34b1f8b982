import { useMutation, useQuery, useQueryClient, useInfiniteQuery } from '@tanstack/react-query';
import { useTRPC } from '../trpc.ts';
import { addPasskey } from '../passkey.ts';
import { ConfirmButton, Empty, ErrorNote, Loading, When } from '../ui.tsx';
import { RenameButton } from '../rename.tsx';

const EVENT_LABELS: Record<string, string> = {
  signed_up: 'Signed up',
  signed_in: 'Signed in',
  signed_out: 'Signed out',
  passkey_added: 'Passkey added',
  passkey_removed: 'Passkey removed',
  passkey_renamed: 'Passkey renamed',
  agent_created: 'Agent created',
  agent_claimed: 'Agent claimed',
  key_created: 'Key created',
  key_rotated: 'Key rotated',
  key_revoked: 'Key revoked',
  app_connected: 'App connected',
  app_disconnected: 'App disconnected',
  webhook_paused: 'Webhook paused',
  webhook_resumed: 'Webhook resumed',
  webhook_deleted: 'Webhook deleted',
};

function eventDetail(details: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof details.key_prefix === 'string')
    parts.push(
      `key ${typeof details.key_label === 'string' ? `“${details.key_label}” (${details.key_prefix}…)` : `${details.key_prefix}…`}`,
    );
  if (typeof details.new_key_prefix === 'string') parts.push(`new key ${details.new_key_prefix}…`);
  if (typeof details.client_name === 'string') parts.push(details.client_name);
  if (typeof details.webhook_url === 'string') parts.push(details.webhook_url);
  if (typeof details.previous_name === 'string') parts.push(`was ${details.previous_name}`);
  if (typeof details.passkey_name === 'string') parts.push(details.passkey_name);
  if (typeof details.method === 'string') parts.push(`with ${details.method}`);
  return parts.join(', ');
}

/** Sign-in methods (passkeys, linked identities) and the security log. */
export function SecurityPage() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const methods = useQuery(trpc.passkeys.list.queryOptions());
  const log = useInfiniteQuery(
    trpc.securityLog.infiniteQueryOptions({ limit: 25 }, { getNextPageParam: (p) => p.next_cursor ?? undefined }),
  );
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.passkeys.list.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.securityLog.pathKey() });
  };
  const remove = useMutation(trpc.passkeys.remove.mutationOptions({ onSuccess: refresh }));
  const rename = useMutation(trpc.passkeys.rename.mutationOptions({ onSuccess: refresh }));
  const add = useMutation({ mutationFn: addPasskey, onSuccess: refresh });
  const events = log.data?.pages.flatMap((p) => p.events) ?? [];
  const count = (methods.data?.passkeys.length ?? 0) + (methods.data?.identities.length ?? 0);

  return (
    <>
      <h1>Sign-in &amp; security</h1>
      <section className="card" aria-labelledby="pk-h">
        <h2 id="pk-h">Passkeys</h2>
        <p className="lead">A second passkey (another device or a security key) keeps you from being locked out.</p>
        <ErrorNote error={methods.error ?? remove.error} />
        {methods.isPending ? (
          <Loading label="Loading passkeys" lines={2} />
        ) : methods.data && methods.data.passkeys.length === 0 ? (
          <Empty>
            <p>No passkeys: you sign in with {methods.data.identities.length ? 'your identity provider' : 'another method'}.</p>
          </Empty>
        ) : (
          <ul className="list" aria-label="Your passkeys">
            {methods.data?.passkeys.map((p) => (
              <li key={p.passkey_id} className="row">
                <div className="key-head">
                  <span className="strong">{p.name}</span>
                  <span className="badge">{p.backed_up ? 'synced' : 'this device only'}</span>
                </div>
                <dl className="meta">
                  <div>
                    <dt>Added</dt>
                    <dd>
                      <When iso={p.created_at} />
                    </dd>
                  </div>
                  <div>
                    <dt>Last used</dt>
                    <dd>
                      <When iso={p.last_used_at} />
                    </dd>
                  </div>
                </dl>
                <div className="actions">
                  <RenameButton
                    title={`Rename passkey “${p.name}”`}
                    current={p.name}
                    disabled={rename.isPending}
                    onRename={(name) => rename.mutate({ passkey_id: p.passkey_id, name })}
                  />
                  {count > 1 ? (
                    <ConfirmButton
                      label="Remove"
                      title={`Remove passkey “${p.name}”?`}
                      confirmLabel="Remove passkey"
                      disabled={remove.isPending}
                      onConfirm={() => remove.mutate({ passkey_id: p.passkey_id })}
                    >
                      <p>You will no longer be able to sign in with it.</p>
                    </ConfirmButton>
                  ) : (
                    <span className="hint">Your only way to sign in: add another before removing it.</span>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
        {methods.data?.identities.length ? (
          <ul className="list" aria-label="Linked sign-in providers">
            {methods.data.identities.map((i) => (
              <li key={i.identity_id} className="row">
                <span className="strong">{i.email ?? 'Account'}</span> <span className="muted">at {new URL(i.issuer).host}</span>
              </li>
            ))}
          </ul>
        ) : null}
        <div className="stack">
          <ErrorNote error={add.error ?? rename.error} />
          {add.isSuccess ? (
            <p className="note ok" role="status">
              Passkey added.
            </p>
          ) : null}
          <button type="button" onClick={() => add.mutate()} disabled={add.isPending}>
            {add.isPending ? 'Waiting for your passkey…' : 'Add a passkey'}
          </button>
        </div>
      </section>

      <section className="card" aria-labelledby="log-h">
        <h2 id="log-h">Security log</h2>
        <ErrorNote error={log.error} />
        {log.isPending ? (
          <Loading label="Loading the security log" />
        ) : events.length === 0 ? (
          <Empty>
            <p>Nothing recorded yet.</p>
          </Empty>
        ) : (
          <ol className="log" aria-label="Security events, newest first">
            {events.map((e) => (
              <li key={e.event_id}>
                <p className="what">
                  <span className="strong">{EVENT_LABELS[e.type] ?? e.type}</span>
                  {eventDetail(e.details) ? <span className="muted"> · {eventDetail(e.details)}</span> : null}
                </p>
                <p className="meta-line">
                  <When iso={e.created_at} />
                  {e.agent_handle ? (
                    <span>
                      {' · '}
                      <span className="nowrap">@{e.agent_handle}</span>
                    </span>
                  ) : null}
                  <span> · IP {e.ip ?? 'unknown'}</span>
                </p>
              </li>
            ))}
          </ol>
        )}
        {log.hasNextPage ? (
          <button type="button" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
            {log.isFetchingNextPage ? 'Loading…' : 'Show older events'}
          </button>
        ) : null}
      </section>
    </>
  );
}
