/** Cutting a connection on purpose (the drop fault), after what was already sent has left. */
import type { Socket } from 'node:net';

/** Lets the bytes already written reach the wire, then destroys the socket without a goodbye. */
export async function destroyAfterFlush(socket: Socket | undefined): Promise<void> {
  if (!socket || socket.destroyed) return;
  // Writes made this tick are corked until the next one; HTTP/2 frames pass through the session first.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  while (socket.writableLength > 0 && !socket.destroyed) {
    await new Promise((resolve) => {
      socket.once('drain', resolve);
      socket.once('close', resolve);
    });
  }
  socket.destroy();
}
