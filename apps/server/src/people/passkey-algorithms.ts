/**
 * The passkey signature algorithms Kitty accepts (COSE ids): EdDSA, ES256, RS256 — what authenticators use.
 * Named explicitly because @simplewebauthn's default probes the runtime for ML-DSA-44, which on Node 24 is an
 * experimental Web Crypto algorithm: the probe alone printed an ExperimentalWarning into the server's log.
 */
export const PASSKEY_ALGORITHMS = [-8, -7, -257];
