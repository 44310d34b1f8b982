/**
 * A pool of low-level SDK `Server`s. A stateless exchange needs a fresh transport (the SDK
 * refuses to reuse one), but not a fresh Server: when its transport closes, a Server is
 * disconnected (`transport` cleared, `onclose` called) and can `connect()` again with its request
 * handlers intact. Reusing them avoids rebuilding handler tables per request. Nothing
 * request-specific lives on a Server: the call context travels with each message
 * (authInfo.extra), and each in-flight handler answers on the transport it arrived on.
 *
 * A Server goes back to the pool by itself when its exchange's transport closes (its `onclose`),
 * so the same pool serves the SDK's modern entry (which closes the transport after the answer)
 * and the legacy leg (which closes it itself). One pool per protocol era: the modern entry marks
 * the Servers it serves with the era's protocol version.
 */
import type { Server } from '@modelcontextprotocol/server';

export class ServerPool {
  private readonly idle: Server[] = [];
  private readonly idleSet = new Set<Server>();

  private readonly create: () => Server;
  private readonly reuse: boolean;
  private readonly maxIdle: number;

  /**
   * @param create  builds a Server with all its request handlers
   * @param reuse   false: every acquire() builds a new Server, dropped after its exchange
   * @param maxIdle at most this many idle Servers are kept (the rest are dropped)
   */
  constructor(create: () => Server, reuse = true, maxIdle = 256) {
    this.create = create;
    this.reuse = reuse;
    this.maxIdle = maxIdle;
  }

  /** An unconnected Server (an idle one if any, else a new one that returns here when its exchange closes). */
  acquire(): Server {
    const server = this.reuse ? this.idle.pop() : undefined;
    if (server) {
      this.idleSet.delete(server);
      return server;
    }
    const created = this.create();
    if (this.reuse) created.onclose = () => this.release(created);
    return created;
  }

  private release(server: Server): void {
    if (server.transport !== undefined || this.idleSet.has(server) || this.idle.length >= this.maxIdle) return;
    this.idle.push(server);
    this.idleSet.add(server);
  }

  /** An idle Server that has served an exchange already, if any (never a new one). */
  takeIdle(): Server | undefined {
    const server = this.idle.pop();
    if (server) this.idleSet.delete(server);
    return server;
  }

  /** Number of idle Servers (for tests). */
  get size(): number {
    return this.idle.length;
  }
}
