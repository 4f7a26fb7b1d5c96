// A stand-in for shared/adapters/local/search-worker.ts that speaks the same protocol and does what the
// query's first term says, so the pool's deadlines, queue and failure handling can be tested on demand:
//   "ok"           answers one row at once;
//   "block<ms>"    blocks the thread for <ms> (as a long SQLite step would), then answers;
//   "hang"         blocks the thread for good;
//   "garbled"      answers a row whose metadata is not JSON;
//   "throw"        answers the error "engine failed".
import { parentPort } from 'node:worker_threads';

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const row = (metadata) => ({
  seq: 1, id: '0193a000-0000-7000-8000-0000000000f1', tenant_id: 't', agent_id: 'a', type: 'fact', title: 'T', body: 'B',
  client: null, metadata, created_at: '2026-11-20T10:00:00.000Z', classification: null, rank: 0.5,
});

parentPort.on('message', ({ id, query }) => {
  const what = query.text?.terms[0] ?? 'ok';
  if (what === 'hang') Atomics.wait(sleeper, 0, 0);
  if (what.startsWith('block')) Atomics.wait(sleeper, 0, 0, Number(what.slice('block'.length)));
  if (what === 'throw') return parentPort.postMessage({ id, error: 'engine failed' });
  parentPort.postMessage({ id, rows: [row(what === 'garbled' ? '{not json' : '{"k":1}')] });
});
