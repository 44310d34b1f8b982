/**
 * The typed Kitty client for TypeScript agents.
 *
 *   const kitty = createKittyClient({ baseUrl: 'http://127.0.0.1:3000', apiKey });
 *   const { group } = await kitty.create_group({ name: 'Trip', currency: 'EUR' });
 *
 * Every tool is a method with typed arguments and result (the types are generated from the server's
 * tool schemas into this package: nothing of the server is needed). Write tools get an
 * idempotency_key generated when you pass none, and the client retries RATE_LIMITED /
 * TRANSIENT_CONFLICT / REQUEST_IN_PROGRESS / network failures with the SAME key after `retry_after`
 * seconds, so a retry never duplicates an effect. Failures throw `KittyError` carrying the error
 * envelope (code, message, suggested_action, details, request_id). No runtime dependencies; needs
 * a global `fetch` (Node >= 20, browsers, Deno, Bun).
 */
import { KEYED_TOOLS, type ErrorBody, type ErrorCode, type ToolInputs, type ToolOutputs } from './generated/tools.js';

export type { ErrorBody, ErrorCode, ToolInputs, ToolOutputs } from './generated/tools.js';

export type ToolName = keyof ToolInputs & string;
/** The arguments a method takes: as on the wire (ToolInputs), with idempotency_key optional (generated when absent). */
export type ToolInput<K extends ToolName> = ClientInput<K>;
export type ToolOutput<K extends ToolName> = ToolOutputs[K];

/** The write tools that take an idempotency key (generated from the tool declarations: writeTool declares the key). */
export type KeyedToolName = { [K in ToolName]: ToolInputs[K] extends { idempotency_key: string } ? K : never }[ToolName];

/** Input as the client takes it: idempotency_key optional (generated when absent). */
type ClientInput<K extends ToolName> = ToolInputs[K] extends { idempotency_key: string }
  ? Omit<ToolInputs[K], 'idempotency_key'> & { idempotency_key?: string }
  : ToolInputs[K];
// `{}` on purpose: "does an empty argument object satisfy T?" is the question.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type HasRequired<T> = {} extends T ? false : true;
type Method<K extends ToolName> =
  HasRequired<ClientInput<K>> extends true
    ? (args: ClientInput<K>, opts?: CallOptions) => Promise<ToolOutputs[K]>
    : (args?: ClientInput<K>, opts?: CallOptions) => Promise<ToolOutputs[K]>;

export interface CallOptions {
  /** Sent as the Idempotency-Key header (instead of the argument). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface KittyClientOptions {
  /** Where Kitty runs, e.g. "http://127.0.0.1:3000". */
  baseUrl: string;
  /** The agent's API key (`kitty_…`); without it only tools that need no credential work. */
  apiKey?: string;
  /** Retries for RATE_LIMITED, TRANSIENT_CONFLICT, REQUEST_IN_PROGRESS and network errors (default 3). 0 disables. */
  maxRetries?: number;
  /** fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export class KittyError extends Error {
  readonly code: ErrorCode;
  readonly suggestedAction: string;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly requestId: string | undefined;
  readonly status: number;
  constructor(status: number, body: ErrorBody, requestId?: string) {
    super(`${body.code}: ${body.message}`);
    this.name = 'KittyError';
    this.status = status;
    this.code = body.code;
    this.suggestedAction = body.suggested_action;
    this.details = body.details;
    this.retryAfter = body.retry_after;
    this.requestId = requestId;
  }
}

export type KittyClient = { [K in ToolName]: Method<K> } & {
  /** Untyped escape hatch: call any tool by name. */
  call(name: string, args?: Record<string, unknown>, opts?: CallOptions): Promise<Record<string, unknown>>;
  /** Replace the API key (e.g. after rotate_api_key). */
  setApiKey(apiKey: string): void;
};

/** Errors after which nothing was changed: retried with the same idempotency key. */
const RETRYABLE = new Set(['RATE_LIMITED', 'TRANSIENT_CONFLICT', 'REQUEST_IN_PROGRESS', 'SERVICE_UNAVAILABLE']);

/** A write whose commit was not confirmed (details.outcome "unknown"): retried only under an idempotency key, which replays it if it was stored. */
const outcomeUnknown = (e: ErrorBody) => (e.details as { outcome?: unknown } | undefined)?.outcome === 'unknown';

/**
 * @returns a client whose methods are the tools. Which tools take an idempotency key is generated
 * into this package from the tool declarations (`KEYED_TOOLS`, `KeyedToolName`): nothing is fetched
 * at run time to find out.
 */
export function createKittyClient(opts: KittyClientOptions): KittyClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  const maxRetries = opts.maxRetries ?? 3;
  let apiKey = opts.apiKey;

  async function call(name: string, args: Record<string, unknown> = {}, callOpts: CallOptions = {}): Promise<Record<string, unknown>> {
    const body = { ...args };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    // One key per call, kept across retries, so a retry never duplicates an effect.
    if (callOpts.idempotencyKey) headers['idempotency-key'] = callOpts.idempotencyKey;
    else if (body.idempotency_key === undefined && (KEYED_TOOLS as ReadonlySet<string>).has(name))
      body.idempotency_key = `kc-${crypto.randomUUID()}`;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await doFetch(`${baseUrl}/v1/tools/${encodeURIComponent(name)}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          ...(callOpts.signal ? { signal: callOpts.signal } : {}),
        });
      } catch (e) {
        if (attempt < maxRetries && !callOpts.signal?.aborted) {
          await sleep(2 ** attempt * 200);
          continue;
        }
        throw e;
      }
      const json = (await res.json()) as { ok: true; data: Record<string, unknown> } | { ok: false; error: ErrorBody; request_id: string };
      if (json.ok) return json.data;
      const keyed = body.idempotency_key !== undefined || callOpts.idempotencyKey !== undefined;
      if (attempt < maxRetries && (RETRYABLE.has(json.error.code) || (keyed && outcomeUnknown(json.error)))) {
        await sleep(Math.min(30, json.error.retry_after ?? 2 ** attempt) * 1000);
        continue;
      }
      throw new KittyError(res.status, json.error, json.request_id);
    }
  }

  const target = {
    call,
    setApiKey(k: string) {
      apiKey = k;
    },
  };
  return new Proxy(target, {
    get(t, prop) {
      if (prop in t) return (t as Record<string | symbol, unknown>)[prop];
      if (typeof prop !== 'string' || prop === 'then') return undefined;
      return (args?: Record<string, unknown>, o?: CallOptions) => call(prop, args, o);
    },
  }) as unknown as KittyClient;
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}
