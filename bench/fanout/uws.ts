// Loads uWebSockets.js for the bench servers and refuses the package's silent fallback to a slow
// JavaScript server (sse-fanout-notes pitfall 7): the figures would be meaningless.
import uWS from 'uWebSockets.js';

if (typeof (uWS as unknown as Record<string, unknown>).H3App !== 'function') {
  throw new Error('uWebSockets.js native binary did not load (JavaScript fallback active); refusing to run');
}

export default uWS;
export type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';

export function listenLoopback(app: uWS.TemplatedApp): Promise<number> {
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (socket) => {
      if (!socket) reject(new Error('listen failed'));
      else resolve(uWS.us_socket_local_port(socket));
    });
  });
}
