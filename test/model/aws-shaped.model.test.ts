import { describeWithDynamoDb } from '../support/dynamodb.js';
import { awsShapedSystem } from './aws-shaped-system.js';
import { runSearchIndexModel } from './search-index-model.js';
import { seedOf } from '../support/seed.js';

/**
 * The model of search-index-model.ts on the AWS-shaped backend: DynamoDB Local, its stream feeding the
 * SQLite index through the real indexer, searches checked against the table. Each command waits for the
 * stream to settle before the checks, since this mode promises search within seconds, not at once.
 * Slower than the SQLite model (every command is a round trip to DynamoDB Local and a stream poll), so
 * `npm test` runs a few short runs at a fixed seed; `npm run test:model:aws` runs many at a random one.
 */

const given = process.env.MODEL_SEED;
const SEED = seedOf(given, 20261126);
const RUNS = Number(process.env.MODEL_RUNS ?? 4);
const MAX_COMMANDS = Number(process.env.MODEL_COMMANDS ?? 20);

describeWithDynamoDb('the search index model on the AWS-shaped backend', (endpoint) => {
  test(`no interleaving loses a record from search when DynamoDB's stream feeds the index (seed ${SEED}, ${RUNS} runs)`, async () => {
    if (given === 'random') process.stdout.write(`model seed: ${SEED} (replay: MODEL_SEED=${SEED} npm run test:model:aws)\n`);
    await runSearchIndexModel({ seed: SEED, runs: RUNS, maxCommands: MAX_COMMANDS, system: (dir) => awsShapedSystem(endpoint, dir) });
  }, 3_600_000);
});
