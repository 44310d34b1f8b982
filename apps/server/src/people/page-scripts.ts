/**
 * Scripts of the server-rendered pages, served as files (the pages' CSP allows scripts from this
 * origin only, never inline): the sign-in page's passkey buttons, and the consent page's choice
 * of agent (the new-agent fields are shown, and submitted, only when "A new agent" is chosen).
 */

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

/** The consent page's script (served at /auth/assets/consent.js). */
export const CONSENT_SCRIPT = `(() => {
  const fields = document.getElementById('new-agent');
  if (!fields) return;
  const sync = () => {
    const isNew = document.getElementById('agent-new').checked;
    fields.hidden = !isNew;
    fields.disabled = !isNew;
  };
  for (const r of document.querySelectorAll('input[name="agent"]')) r.addEventListener('change', sync);
  sync();
})();
`;
