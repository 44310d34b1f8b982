/**
 * A pool of low-level SDK `Server`s. A stateless Streamable HTTP request needs a fresh
 * transport (the SDK refuses to reuse one), but not a fresh Server: a Server whose transport
 * was closed is disconnected (`Protocol._onclose` clears it) and can `connect()` again with
 * its request handlers intact. Reusing them avoids rebuilding handler tables per request.
 * Nothing request-specific lives on a Server: the call context travels with each message
 * (authInfo.extra), and each in-flight handler answers on the transport it arrived on.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';

export class ServerPool {
  private readonly idle: Server[] = [];

  private readonly create: () => Server;
  private readonly reuse: boolean;
  private readonly maxIdle: number;

  /**
   * @param create  builds a Server with all its request handlers
   * @param reuse   false: every acquire() builds a new Server and release() drops it
   * @param maxIdle at most this many idle Servers are kept (the rest are dropped)
   */
  constructor(create: () => Server, reuse = true, maxIdle = 256) {
    this.create = create;
    this.reuse = reuse;
    this.maxIdle = maxIdle;
  }

  /** An unconnected Server (idle one if any, else a new one). */
  acquire(): Server {
    return (this.reuse && this.idle.pop()) || this.create();
  }

  /** Gives back a Server whose transport has been closed. */
  release(server: Server): void {
    if (this.reuse && server.transport === undefined && this.idle.length < this.maxIdle) this.idle.push(server);
  }

  /** Drops a Server in an unknown state. */
  discard(_server: Server): void {}

  /** Number of idle Servers (for tests). */
  get size(): number {
    return this.idle.length;
  }
}
