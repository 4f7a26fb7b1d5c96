/**
 * The contract between the engine benchmark (run.ts) and a search-engine design. A design is a way of
 * storing a corpus and answering text searches on it; the harness loads the same corpus into each design,
 * in its own directory, and times the same queries against all of them, in-process and single-threaded.
 *
 * Text search only: the record filters (agent, type, client, since) and the reading of the records' rows
 * are left out, since they cost the same whatever finds the matches. Phrases are in.
 *
 * To add a design: implement EngineDesign in a file of this folder and add one line to designs.ts.
 */
import type { ParsedQuery } from '../../shared/domain/query-parse.js';

/** One record as a design indexes it: its text exactly as it was written (a design applies its own analysis). */
export interface EngineDoc {
  tenant: string;
  /** The record's sequence number, unique over all tenants: 1..N in corpus order, so increasing with time. */
  seq: number;
  title: string;
  body: string;
}

/** One result of a search: a record's seq and the design's score for it (higher is better). */
export interface ScoredSeq {
  seq: number;
  score: number;
}

export interface EngineDesign {
  /** What `--designs` calls it. */
  readonly name: string;
  /** One line for the report: the layout and the ranking. */
  readonly description: string;
  /**
   * Opens (creating if needed) the design's files in `dir`, a directory that only this design uses. The
   * files may already hold a corpus that an earlier run loaded (`--keep-dir`, `--reuse`); then `search`
   * must work without `load`.
   */
  open(dir: string): void;
  /**
   * Bulk-loads the corpus, in seq order, into an empty design; whatever the design builds after the last
   * record (statistics, merges) is part of the load. Commit in transactions of about LOAD_BATCH records.
   * Call `onProgress(loaded)` after each transaction with the number of records loaded so far.
   */
  load(docs: Iterable<EngineDoc>, onProgress?: (loaded: number) => void): void;
  /**
   * The tenant's `k` best records for the query, best first; equal scores by seq descending (the newest
   * first), as the service orders them. A record matches when it holds any term or any phrase (a phrase's
   * words side by side, in the title or in the body). An empty query (no terms, no phrases) finds nothing.
   */
  search(tenant: string, query: ParsedQuery, k: number): ScoredSeq[];
  /** Closes the files (checkpointing any log into the main file, so the harness can measure its size). */
  close(): void;
}

/** How a design is made: run.ts makes a fresh one per run. */
export type DesignFactory = () => EngineDesign;

/** The bulk-load transaction size the designs use. */
export const LOAD_BATCH = 10_000;

/** The order the service returns results in: score descending, then seq descending. */
export function compareScored(a: ScoredSeq, b: ScoredSeq): number {
  return b.score - a.score || b.seq - a.seq;
}
