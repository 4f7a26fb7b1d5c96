import { loadConfig } from './config.js';
import { startLocalService } from './app.js';

/** `npm start`: serves the API on PORT with data in MEMORY_DATA_DIR until SIGTERM or SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const service = await startLocalService(config);
  const out = process.stdout;
  out.write(`memory service listening on ${service.url} (${service.backend.describe})\n`);
  out.write(`console: ${service.url}/console/\n`);
  if (service.metricsUrl) out.write(`metrics: ${service.metricsUrl}\n`);
  if (service.firstKey) {
    const { api_key, tenant_id } = service.firstKey;
    out.write(
      [
        '',
        `First start: created the tenant "default" (${tenant_id}). Its API key, shown only this once:`,
        '',
        `  ${api_key}`,
        '',
        'Try it:',
        `  curl -s -X POST ${service.url}/api/v1/record -H 'Authorization: Bearer ${api_key}' \\`,
        `    -H 'Content-Type: application/json' \\`,
        `    -d '{"agent_id":"demo","type":"fact","title":"The user prefers dark mode","body":"Set in the settings page."}'`,
        `  curl -s '${service.url}/api/v1/query?q=dark+mode' -H 'Authorization: Bearer ${api_key}'`,
        '',
        `Or open ${service.url}/console/ in a browser and paste the key.`,
        '',
        'More keys and tenants: npm run --silent admin -- --help',
        '',
      ].join('\n'),
    );
  } else if (!config.aws) {
    // The first key is shown once; whoever lost it finds here how to make another (docs/running.md).
    out.write(
      [
        '',
        'Lost the API key? The admin CLI makes a new one, on this data directory, with no key needed:',
        '  npm run --silent admin -- tenant list',
        '  npm run --silent admin -- key create --tenant <tenant_id>',
        '',
      ].join('\n'),
    );
  }

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    out.write(`${signal}: finishing requests in flight, then stopping\n`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('shutdown failed', error);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
