import type { Db } from '../../shared/adapters/local/database.js';
import { runSearchIndexModel } from './search-index-model.js';

/**
 * The model-based test catches what it is there for: with a bug planted in the database it runs on, the
 * same model (search-index-model.ts) fails, at a fixed seed. The bugs are planted as temporary triggers on
 * the writer's connection, so the code under test is the shipped code.
 */

async function failure(plant: (db: Db) => void): Promise<string> {
  let planted = 0;
  try {
    await runSearchIndexModel({
      seed: 20261126,
      runs: 100,
      maxCommands: 40,
      plant: (db) => {
        plant(db);
        planted++;
      },
    });
  } catch (error) {
    // The bug was in place when the model failed: the failure is the model's, not the planting's.
    expect(planted).toBeGreaterThan(0);
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(`${expect.getState().currentTestName}:\n${message.split('\n').filter((line) => /Counterexample|Property failed|^\s+[+-] /.test(line)).slice(0, 8).join('\n')}\n\n`);
    return message;
  }
  return 'the model passed';
}

test('a new record that takes the seq of a deleted newest one (the seq as it was before the counter) is caught', async () => {
  // After each delete, the counter goes back to the largest seq stored or the merge mark: the old NEXT_SEQ_SQL.
  const message = await failure((db) =>
    db.exec(`CREATE TEMP TRIGGER planted_seq_reuse AFTER DELETE ON main.records BEGIN
      UPDATE search_state SET last_seq = max(merged_upto, coalesce((SELECT max(seq) FROM records), 0)); END;`),
  );
  expect(message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample/);
}, 600_000);

test('a delete or a new text that does not tell the tail caches and the merge batch under way is caught', async () => {
  const message = await failure((db) =>
    db.exec(`CREATE TEMP TRIGGER planted_stuck_tail_gen AFTER UPDATE OF tail_gen ON main.search_state BEGIN
      UPDATE search_state SET tail_gen = OLD.tail_gen; END;`),
  );
  expect(message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample/);
}, 600_000);

test('a merge that does not keep the newest-block bounds of `since` is caught', async () => {
  const message = await failure((db) =>
    db.exec(`CREATE TEMP TRIGGER planted_no_newest AFTER INSERT ON main.search_newest BEGIN
      DELETE FROM search_newest WHERE tenant_id = NEW.tenant_id AND block = NEW.block; END;`),
  );
  expect(message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample/);
}, 600_000);

test('an update that writes the new text over the old seq, where the index has no place for it, is caught', async () => {
  // Invariant 7 forgotten: the record moved to a new seq is put back at its old one (the counter still moved),
  // so a merged record's old text left the index and its new text never comes in.
  const message = await failure((db) =>
    db.exec(`CREATE TEMP TRIGGER planted_update_keeps_seq AFTER UPDATE OF seq ON main.records WHEN NEW.seq IS NOT OLD.seq BEGIN
      UPDATE search_state SET last_seq = OLD.seq - 1;
      UPDATE records SET seq = OLD.seq WHERE seq = NEW.seq;
      UPDATE search_state SET last_seq = NEW.seq; END;`),
  );
  // The counterexample updates a record's text, alone or together with other writes.
  expect(message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample[\s\S]*(update\(|update \[\[)/);
}, 600_000);

test('ids kept unique across tenants, as before migration 14, are caught', async () => {
  // An insert of an id another tenant holds is dropped without a word, as the old UNIQUE (id) with the
  // import's ON CONFLICT DO NOTHING did: a copy imported beside the original is lost.
  const message = await failure((db) =>
    db.exec(`CREATE TEMP TRIGGER planted_global_ids BEFORE INSERT ON main.records
      WHEN EXISTS (SELECT 1 FROM main.records WHERE id = NEW.id AND tenant_id != NEW.tenant_id) BEGIN SELECT RAISE(IGNORE); END;`),
  );
  expect(message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample[\s\S]*a copy of another tenant's/);
}, 600_000);
