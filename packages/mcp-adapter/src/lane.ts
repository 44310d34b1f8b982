import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type AuthInfo,
  type JSONRPCMessage,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';

/**
 * A lane: a pooled Server kept connected to this in-process transport, serving one
 * request at a time. `exchange(message)` hands the message to the Server and resolves with its
 * answer (anything sent before it, e.g. progress, is dropped: JSON responses only). The Server
 * is never disconnected, so no per-request connect/close (whose teardown allocates an error
 * with a stack trace every time).
 */
export class Lane implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private pending: ((message: JSONRPCMessage) => void) | undefined;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const settle = this.pending;
    this.pending = undefined;
    settle?.(message);
  }

  exchange(message: JSONRPCMessage, authInfo: AuthInfo): Promise<JSONRPCMessage> {
    const answer = new Promise<JSONRPCMessage>((resolve) => (this.pending = resolve));
    this.onmessage?.(message, { authInfo });
    return answer;
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

export interface LaneSlot {
  server: Server;
  lane: Lane;
}
