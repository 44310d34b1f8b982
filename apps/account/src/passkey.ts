/**
 * Adding a passkey to the signed-in person: the sign-in service's WebAuthn registration endpoints
 * (`POST /auth/passkey/register/options`, then the browser's passkey prompt through
 * @simplewebauthn/browser, then `POST /auth/passkey/register/verify`). With a session they add a
 * passkey to the current person instead of creating a new one (named "Passkey N").
 */
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';

async function postJson(url: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    /* not JSON: reported below by status */
  }
  if (!r.ok) {
    const err = (json.error ?? {}) as { message?: string; suggested_action?: string };
    throw new Error([err.message ?? `The sign-in service answered HTTP ${r.status}.`, err.suggested_action].filter(Boolean).join(' '));
  }
  return (json.ok === true && json.data && typeof json.data === 'object' ? json.data : json) as Record<string, unknown>;
}

export async function addPasskey(): Promise<void> {
  const options = await postJson('/auth/passkey/register/options', {});
  const optionsJSON = (options.options ?? options) as unknown as PublicKeyCredentialCreationOptionsJSON;
  let response;
  try {
    response = await startRegistration({ optionsJSON });
  } catch (e) {
    const n = (e as { name?: string }).name;
    if (n === 'NotAllowedError' || n === 'AbortError')
      throw new Error('The passkey prompt was cancelled or timed out; nothing was added. Try again when ready.', { cause: e });
    throw new Error(`Your browser could not create a passkey: ${(e as Error).message}`, { cause: e });
  }
  await postJson('/auth/passkey/register/verify', response);
}
