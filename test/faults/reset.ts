// How the fault proxy resets a connection, apart so that a test can run it on a socket of its own.
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'

/**
 * Resets `raw` (an RST), or destroys it if its write side is already shutting down: there
 * resetAndDestroy() fails in libuv (EINVAL) after Node has marked the handle closing, so the
 * handle is never closed, and at exit Node waits for it forever at 100% CPU
 * (Environment::CleanupHandles): jest's main thread spinning after its teardown, one destroyed
 * TCP socket left open. `tls`, the TLS socket over `raw`, shuts the TCP stream down itself, so its
 * end counts too. Such a connection is ending anyway.
 */
export function resetConnection(raw: Socket, tls?: TLSSocket): void {
  if (raw.writableEnded || tls?.writableEnded) raw.destroy()
  else raw.resetAndDestroy()
}
