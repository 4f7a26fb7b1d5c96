/**
 * A rough first look at write throughput and search latency over HTTP, against a real server process on
 * a fresh data directory. Not the benchmark (that is `npm run bench`, still to come); just figures to
 * quote: `npm run --silent bench:quick-look [-- --records N --concurrency C --searches S]`.
 */
import { parseArgs } from 'node:util';
import { startBenchServer } from './support/server.js';
import { percentile } from './support/stats.js';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '16' }, searches: { type: 'string', default: '2000' } },
});
const RECORDS = Number(values.records);
const CONCURRENCY = Number(values.concurrency);
const SEARCHES = Number(values.searches);
const WORDS = 'deploy database latency cache user prefers dark mode invoice report meeting budget review release incident backup token schema queue metric alert customer contract migration index search memory agent'.split(' ');

let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');

const server = await startBenchServer();

async function main(): Promise<void> {
  const { url, key } = server;
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

  process.stderr.write(`writing ${RECORDS} records at concurrency ${CONCURRENCY}...\n`);
  let next = 0;
  const writeStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < RECORDS) {
        next++;
        const res = await fetch(`${url}/api/v1/record`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ agent_id: `agent-${next % 20}`, type: 'fact', title: sentence(8), body: sentence(60) }),
        });
        if (res.status !== 201) throw new Error(`write answered ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  const writeSeconds = (performance.now() - writeStart) / 1000;

  process.stderr.write(`running ${SEARCHES} searches at concurrency 1...\n`);
  const latencies: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const t = performance.now();
    const res = await fetch(`${url}/api/v1/query?q=${encodeURIComponent(`${pick()} ${pick()}`)}&limit=20`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`search answered ${res.status}`);
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        records: RECORDS,
        write_concurrency: CONCURRENCY,
        writes_per_second: Math.round(RECORDS / writeSeconds),
        searches: SEARCHES,
        search_p50_ms: Number(percentile(latencies, 50).toFixed(2)),
        search_p95_ms: Number(percentile(latencies, 95).toFixed(2)),
        search_p99_ms: Number(percentile(latencies, 99).toFixed(2)),
      },
      null,
      2,
    ),
  );
}

main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => server.stop());
