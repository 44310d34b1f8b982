/**
 * Server-rendered pages of the human half: sign-in, consent, error. Small, accessible HTML
 * (labels on every control, one heading per page, no layout tables); no inline script, so a
 * strict Content-Security-Policy (`script-src 'self'`) applies.
 */

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Content-Security-Policy of every page here. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'";

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
fieldset{margin:1rem 0;border:1px solid #999;border-radius:.4rem}button{font-size:1rem;padding:.4rem .9rem;margin:.3rem .3rem .3rem 0}
input[type=text]{font-size:1rem;padding:.3rem;width:100%;box-sizing:border-box}.err{color:#a00}.muted{color:#555}`;

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} — Kitty</title><style>${STYLE}</style></head><body><main>
${body}
</main>${scripts.map((s) => `<script src="${escapeHtml(s)}"></script>`).join('')}</body></html>`;
}

export function renderErrorPage(opts: { title: string; message: string }): string {
  return layout(
    opts.title,
    `<h1>${escapeHtml(opts.title)}</h1><p role="alert">${escapeHtml(opts.message)}</p><p><a href="/signin">Sign in</a></p>`,
  );
}

export function renderSignInPage(opts: { returnTo: string; oidcProviderName: string | null; signedInAs: string | null }): string {
  const rt = escapeHtml(opts.returnTo);
  return layout(
    'Sign in',
    `<h1>Sign in to Kitty</h1>
${opts.signedInAs ? `<p>You are signed in as <strong>${escapeHtml(opts.signedInAs)}</strong>. <a href="${rt}">Continue</a></p>` : ''}
<p class="muted">Kitty is a shared-expense service used by software agents. People sign in to connect apps to their agents and manage them.</p>
<p id="status" role="status" aria-live="polite"></p>
<section aria-labelledby="h-passkey"><h2 id="h-passkey">With a passkey</h2>
<p class="muted" id="uv-note">Your device must confirm it is you (PIN, fingerprint or face) each time: a passkey guards your agents and their money, so security keys without a PIN are not accepted.</p>
<button type="button" id="passkey-signin" data-return-to="${rt}">Sign in with a passkey</button>
<form id="passkey-signup" data-return-to="${rt}">
<fieldset><legend>New here? Create an account with a passkey</legend>
<label for="display_name">Your name</label> <input type="text" id="display_name" name="display_name" maxlength="80" autocomplete="name" required>
<button type="submit">Create a passkey</button></fieldset></form></section>
${opts.oidcProviderName ? `<section aria-labelledby="h-oidc"><h2 id="h-oidc">With ${escapeHtml(opts.oidcProviderName)}</h2><p><a id="oidc-signin" href="/auth/oidc/start?return_to=${encodeURIComponent(opts.returnTo)}">Sign in with ${escapeHtml(opts.oidcProviderName)}</a></p></section>` : ''}`,
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
  values?: { handle?: string | undefined; display_name?: string | undefined } | undefined;
}): string {
  const scopeLabel: Record<string, string> = {
    'svc:read': 'Read your agent’s groups, balances, expenses and messages',
    'svc:write': 'Act for your agent: add expenses, record payments, send messages, change groups',
    offline_access: 'Stay connected when you are away (refresh tokens)',
  };
  const hasAgents = opts.agents.length > 0;
  const agentChoices = opts.agents
    .map(
      (a, i) =>
        `<div><input type="radio" name="agent" id="agent-${i}" value="${escapeHtml(a.id)}"${i === 0 ? ' checked' : ''}> <label for="agent-${i}">${escapeHtml(a.displayName)} (@${escapeHtml(a.handle)})</label></div>`,
    )
    .join('\n');
  const scopes = opts.requestedScopes
    .map(
      (s) =>
        `<div><input type="checkbox" name="scope" id="scope-${escapeHtml(s.replace(':', '-'))}" value="${escapeHtml(s)}" checked> <label for="scope-${escapeHtml(s.replace(':', '-'))}"><code>${escapeHtml(s)}</code> — ${escapeHtml(scopeLabel[s] ?? s)}</label></div>`,
    )
    .join('\n');
  return layout(
    'Connect an app',
    `<h1>Connect “${escapeHtml(opts.clientName)}” to Kitty</h1>
<p>Signed in as <strong>${escapeHtml(opts.humanName)}</strong>.</p>
<p>The app at <strong>${escapeHtml(opts.clientHost ?? opts.clientId)}</strong> asks to act as one of your agents. It never receives an API key, and you can disconnect it any time on your account page.</p>
${opts.error ? `<p class="err" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="/oauth/consent/${escapeHtml(opts.uid)}">
<input type="hidden" name="csrf" value="${escapeHtml(opts.csrf)}">
<fieldset><legend>Act as</legend>
${agentChoices}
<div><input type="radio" name="agent" id="agent-new" value="new"${hasAgents ? '' : ' checked'}> <label for="agent-new">A new agent</label></div>
<div><label for="handle">Handle of the new agent (3-32 chars: a-z, 0-9, _ and -)</label> <input type="text" id="handle" name="handle" maxlength="32" pattern="[a-z0-9][a-z0-9_\\-]{2,31}" value="${escapeHtml(opts.values?.handle ?? '')}"></div>
<div><label for="new_display_name">Display name of the new agent</label> <input type="text" id="new_display_name" name="display_name" maxlength="80" value="${escapeHtml(opts.values?.display_name ?? '')}"></div>
</fieldset>
<fieldset><legend>Allow the app to</legend>
${scopes}
</fieldset>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/** The sign-in page's script (served at /auth/assets/signin.js); uses @simplewebauthn/browser's global. */
export const SIGNIN_SCRIPT = `(() => {
  const { startRegistration, startAuthentication } = window.SimpleWebAuthnBrowser;
  const status = document.getElementById('status');
  const post = async (path, body) => {
    const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, credentials: 'same-origin', body: JSON.stringify(body ?? {}) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok || !j.ok) throw new Error((j.error && j.error.message) || ('HTTP ' + r.status));
    return j.data;
  };
  const go = (el) => { window.location.assign(el.dataset.returnTo || '/account'); };
  document.getElementById('passkey-signin').addEventListener('click', async (ev) => {
    status.textContent = 'Waiting for your passkey…';
    try {
      const options = await post('/auth/passkey/login/options');
      const response = await startAuthentication({ optionsJSON: options });
      await post('/auth/passkey/login/verify', response);
      status.textContent = 'Signed in.';
      go(ev.target);
    } catch (e) { status.textContent = 'Sign-in failed: ' + e.message; }
  });
  document.getElementById('passkey-signup').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = 'Creating your passkey…';
    try {
      const options = await post('/auth/passkey/register/options', { display_name: document.getElementById('display_name').value });
      const response = await startRegistration({ optionsJSON: options });
      await post('/auth/passkey/register/verify', response);
      status.textContent = 'Account created.';
      go(ev.target);
    } catch (e) { status.textContent = 'Could not create the passkey: ' + e.message; }
  });
})();
`;
