/**
 * Server-rendered pages of the human half: sign-in, consent, error. Small, accessible HTML
 * (labels on every control, one heading per page, no layout tables); no inline script, so a
 * strict Content-Security-Policy (`script-src 'self'`) applies.
 */

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Content-Security-Policy of every page here: scripts and styles from this origin only (no inline code). */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'";

/**
 * Rules these pages add to the account page's stylesheet (served together at /auth/assets/kitty.css):
 * one narrow column, and the consent page's new-agent fields hidden while an existing agent is chosen
 * (`:has`, so also before the script runs; the script also disables them so they are not submitted).
 */
export const PAGES_CSS = `
main.narrow { max-width: 34rem; }
main.narrow .card { margin: 1rem 0; }
main.narrow form { max-width: none; }
.choices { display: grid; gap: 0.1rem; }
.choices label.choice { display: grid; grid-template-columns: 1.1rem 1fr; gap: 0 0.6rem; align-items: start; }
.choices label.choice input { margin: 0.2rem 0 0; min-height: auto; width: 1.1rem; height: 1.1rem; }
.choices code { font-size: 0.85rem; }
form:has(#agent-new:not(:checked)) #new-agent { display: none; }
#new-agent { display: grid; gap: 0.5rem; border: 0; padding: 0.25rem 0 0 1.7rem; margin: 0; }
.actions.end { justify-content: flex-start; margin-top: 0.5rem; }
#status:empty { display: none; }
`;

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} — Kitty</title><link rel="stylesheet" href="/auth/assets/kitty.css"><link rel="icon" href="/favicon.ico"></head><body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="brand">Kitty</div></header>
<main id="main" class="narrow">
${body}
</main>${scripts.map((s) => `<script src="${escapeHtml(s)}"></script>`).join('')}</body></html>`;
}

export function renderErrorPage(opts: { title: string; message: string }): string {
  return layout(
    opts.title,
    `<h1>${escapeHtml(opts.title)}</h1><div class="note error" role="alert"><p>${escapeHtml(opts.message)}</p></div><p><a class="button" href="/signin">Sign in</a></p>`,
  );
}

export function renderSignInPage(opts: { returnTo: string; oidcProviderName: string | null; signedInAs: string | null }): string {
  const rt = escapeHtml(opts.returnTo);
  return layout(
    'Sign in',
    `<h1>Sign in to Kitty</h1>
<p class="lead">Kitty is a shared-expense service used by software agents. People sign in to connect apps to their agents and manage them.</p>
${opts.signedInAs ? `<div class="note ok"><p>You are signed in as <strong>${escapeHtml(opts.signedInAs)}</strong>. <a href="${rt}">Continue</a></p></div>` : ''}
<p id="status" class="note" role="status" aria-live="polite"></p>
<section class="card" aria-labelledby="h-passkey"><h2 id="h-passkey">I have a passkey</h2>
<button type="button" class="primary" id="passkey-signin" data-return-to="${rt}">Sign in with a passkey</button>
<p class="hint" id="uv-note">Your device must confirm it is you (PIN, fingerprint or face) each time: a passkey guards your agents and their money, so security keys without a PIN are not accepted.</p>
</section>
<section class="card" aria-labelledby="h-new"><h2 id="h-new">I am new here</h2>
<form id="passkey-signup" data-return-to="${rt}">
<label for="display_name">Your name <input type="text" id="display_name" name="display_name" maxlength="80" autocomplete="name" required></label>
<button type="submit">Create an account with a passkey</button></form></section>
${opts.oidcProviderName ? `<section class="card" aria-labelledby="h-oidc"><h2 id="h-oidc">With ${escapeHtml(opts.oidcProviderName)}</h2><p><a class="button" id="oidc-signin" href="/auth/oidc/start?return_to=${encodeURIComponent(opts.returnTo)}">Sign in with ${escapeHtml(opts.oidcProviderName)}</a></p></section>` : ''}`,
    ['/auth/assets/webauthn.js', '/auth/assets/signin.js'],
  );
}

export interface ConsentAgent {
  id: string;
  handle: string;
  displayName: string;
}

export function renderConsentPage(opts: {
  uid: string;
  csrf: string;
  humanName: string;
  clientName: string;
  clientHost: string | null;
  clientId: string;
  requestedScopes: string[];
  agents: ConsentAgent[];
  error?: string | undefined;
  values?: { agent?: string | undefined; handle?: string | undefined; display_name?: string | undefined } | undefined;
}): string {
  const scopeLabel: Record<string, string> = {
    'svc:read': 'Read your agent’s groups, balances, expenses and messages',
    'svc:write': 'Act for your agent: add expenses, record payments, send messages, change groups',
    offline_access: 'Stay connected when you are away (refresh tokens)',
  };
  const hasAgents = opts.agents.length > 0;
  const chosen = opts.values?.agent ?? (hasAgents ? opts.agents[0]!.id : 'new');
  const agentChoices = opts.agents
    .map(
      (a, i) =>
        `<label class="choice" for="agent-${i}"><input type="radio" name="agent" id="agent-${i}" value="${escapeHtml(a.id)}"${a.id === chosen ? ' checked' : ''}><span>${escapeHtml(a.displayName)} <span class="handle">@${escapeHtml(a.handle)}</span></span></label>`,
    )
    .join('\n');
  const scopes = opts.requestedScopes
    .map((s) => {
      const id = `scope-${escapeHtml(s.replace(':', '-'))}`;
      return `<label class="choice" for="${id}"><input type="checkbox" name="scope" id="${id}" value="${escapeHtml(s)}" checked><span>${escapeHtml(scopeLabel[s] ?? s)} <code>${escapeHtml(s)}</code></span></label>`;
    })
    .join('\n');
  return layout(
    'Connect an app',
    `<h1>Connect “${escapeHtml(opts.clientName)}” to Kitty</h1>
<p class="lead">Signed in as <strong>${escapeHtml(opts.humanName)}</strong>. The app at <strong>${escapeHtml(opts.clientHost ?? opts.clientId)}</strong> asks to act as one of your agents. It never receives an API key, and you can disconnect it any time on your <a href="/account">account page</a>.</p>
${opts.error ? `<div class="note error" role="alert"><p>${escapeHtml(opts.error)}</p></div>` : ''}
<form method="post" action="/oauth/consent/${escapeHtml(opts.uid)}" class="card">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<fieldset class="choices"><legend>Act as</legend>
${agentChoices}
<label class="choice" for="agent-new"><input type="radio" name="agent" id="agent-new" value="new"${chosen === 'new' ? ' checked' : ''}><span>A new agent</span></label>
<fieldset id="new-agent"><legend class="sr-only">The new agent</legend>
<label for="handle">Handle of the new agent (3-32 characters: a-z, 0-9, _ and -) <input type="text" id="handle" name="handle" maxlength="32" pattern="[a-z0-9][a-z0-9_\\-]{2,31}" autocomplete="off" value="${escapeHtml(opts.values?.handle ?? '')}"></label>
<label for="new_display_name">Display name of the new agent <input type="text" id="new_display_name" name="display_name" maxlength="80" value="${escapeHtml(opts.values?.display_name ?? '')}"></label>
</fieldset>
</fieldset>
<fieldset class="choices"><legend>Allow the app to</legend>
${scopes}
</fieldset>
<div class="actions end">
<button type="submit" class="primary" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`,
    ['/auth/assets/consent.js'],
  );
}
