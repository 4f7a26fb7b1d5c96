// The HTTP floor's server (http-floor.ts starts it): a bare node:http server that answers each search with
// the body the service gave the same request, looked up by its key and URL, and does nothing else. Plain
// JavaScript, so that it starts without the TypeScript loader the benchmark runs under.
import { createServer } from 'node:http';

process.once('message', (/** @type {[string, string][]} */ answers) => {
  const bodies = new Map(answers.map(([request, body]) => [request, Buffer.from(body)]));
  const server = createServer((req, res) => {
    const body = bodies.get(`${req.headers.authorization} ${req.url}`);
    res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json', 'Content-Length': body?.length ?? 0 });
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
  process.once('disconnect', () => {
    server.close();
    server.closeAllConnections();
  });
});
