/** Small building blocks shared by the pages: errors in words, confirmations, secrets shown once, times. */
import { useId, useRef, useState, type ReactNode } from 'react';
import { describeError, signInUrl } from './trpc.ts';

/** The envelope's message and suggested action, announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const d = describeError(error);
  return (
    <div className="note error" role="alert">
      <p>
        <strong>{d.message}</strong>
      </p>
      {d.action ? <p>{d.action}</p> : null}
      {d.code === 'UNAUTHENTICATED' ? (
        <p>
          <a href={signInUrl()}>Sign in again</a>
        </p>
      ) : null}
    </div>
  );
}

/**
 * A button that asks before doing something destructive (a modal <dialog>: focus moves into it,
 * Escape cancels).
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  return (
    <>
      <button type="button" className={props.className ?? 'danger'} disabled={props.disabled} onClick={() => ref.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={ref} aria-labelledby={titleId} className="confirm">
        <form method="dialog">
          <h3 id={titleId}>{props.title}</h3>
          <div>{props.children}</div>
          <div className="actions">
            <button value="cancel" autoFocus>
              Cancel
            </button>
            <button
              value="confirm"
              className="danger"
              onClick={() => {
                props.onConfirm();
              }}
            >
              {props.confirmLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** A new API key: shown once, with a copy button and the warning that it will not be shown again. */
export function SecretOnce({ secret, title, onDone }: { secret: string; title: string; onDone: () => void }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const id = useId();
  return (
    <div className="note secret" role="status" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      <p>
        <strong>Copy this key now: it is shown only once.</strong> Kitty stores only a fingerprint of it and cannot show it again. Anyone
        with the key can act as the agent.
      </p>
      <div className="secret-row">
        <code aria-label="API key" tabIndex={0}>
          {secret}
        </code>
        <button
          type="button"
          onClick={() => {
            navigator.clipboard.writeText(secret).then(
              () => setCopied('yes'),
              () => setCopied('failed'),
            );
          }}
        >
          Copy key
        </button>
      </div>
      <p aria-live="polite" className="hint">
        {copied === 'yes'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'Copying was refused by the browser: select the key and copy it by hand.'
            : '\u00a0'}
      </p>
      <button type="button" onClick={onDone}>
        I have stored the key
      </button>
    </div>
  );
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A timestamp for people, or a dash-free word when absent. */
export function When({ iso, empty = 'never' }: { iso: string | null; empty?: string }) {
  if (!iso) return <span className="muted">{empty}</span>;
  return <time dateTime={iso}>{dateTime.format(new Date(iso))}</time>;
}

/** Placeholder lines of the same height as the content they stand for (no layout jump). */
export function Loading({ lines = 3, label }: { lines?: number; label: string }) {
  return (
    <div className="loading" role="status" aria-busy="true" aria-label={label}>
      {Array.from({ length: lines }, (_, i) => (
        <div key={i} className="skeleton" />
      ))}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}
