import { runSearchIndexModel } from './search-index-model.js';
import { seedOf } from '../support/seed.js';

/**
 * The model-based test of the local search index (search-index-model.ts says what it draws and checks).
 * `npm test` runs a bounded number of runs with a fixed seed; `npm run test:model` runs many with a random
 * seed, which it prints first (MODEL_SEED=<seed> npm run test:model replays it).
 */

const given = process.env.MODEL_SEED;
const SEED = seedOf(given, 20261126);
const RUNS = Number(process.env.MODEL_RUNS ?? 30);
const MAX_COMMANDS = Number(process.env.MODEL_COMMANDS ?? 40);

test(`no interleaving of writes, deletes, new texts, forgets, imports, merge steps, restarts and crashes loses a record from search (seed ${SEED}, ${RUNS} runs)`, async () => {
  if (given === 'random') process.stdout.write(`model seed: ${SEED} (replay: MODEL_SEED=${SEED} npm run test:model)\n`);
  await runSearchIndexModel({ seed: SEED, runs: RUNS, maxCommands: MAX_COMMANDS });
}, 3_600_000);
