/**
 * Identifier lookups (the recall issue's goal): for every query of the agent sets that names an identifier
 * ("INV-2024-0042", "ERR_CONN_RESET", "v1.2.3") some record holds, whether the first hit holds that exact
 * identifier. Ranked in process as the service ranks (parseQuery, RANKING, the filters), as cut-off.ts does.
 */
import { parseQuery } from '../../shared/domain/query-parse.js';
import { RANKING } from '../../shared/domain/rank.js';
import { searchIndex } from '../../shared/search/searcher.js';
import { MemoryPostingStorage } from '../../shared/search/storage.js';
import { TOKEN } from '../../shared/text/tokens.js';
import { filterOf, indexDocs } from './in-process.js';
import { agentMemory, agentQuestions, type QualitySet } from './sets.js';

/** How many identifier queries there are, and how many rank a record holding the identifier first; the others' text. */
export interface IdentifierLookups {
  queries: number;
  first: number;
  missed: string[];
}

/** An identifier: a token with one of the joiners `_`, `.`, `/`, or a digit beside a `-` (shared/text/tokens.ts). */
const identifiersOf = (q: string) => (q.match(TOKEN) ?? []).filter((token) => /[-_./]/.test(token));

export function identifierLookups(sets: QualitySet[] = [agentMemory(), agentQuestions()]): IdentifierLookups {
  const result: IdentifierLookups = { queries: 0, first: 0, missed: [] };
  const storage = new MemoryPostingStorage();
  for (const set of sets) {
    indexDocs(storage, set.name, set.docs);
    const holds = (doc: number, id: string) => `${set.docs[doc - 1]!.title}\n${set.docs[doc - 1]!.body}`.toLowerCase().includes(id.toLowerCase());
    for (const query of set.queries) {
      // Only identifiers some record holds: a question about an unknown one has no record to put first.
      const ids = identifiersOf(query.q).filter((id) => set.docs.some((_, i) => holds(i + 1, id)));
      if (ids.length === 0) continue;
      const text = parseQuery(query.q);
      const [top] = text ? searchIndex(storage, set.name, text, { k: 1, filter: filterOf(set.docs, query.filters), ranking: RANKING }) : [];
      result.queries++;
      if (top && ids.every((id) => holds(top.doc, id))) result.first++;
      else result.missed.push(`${set.name}: ${query.q}`);
    }
  }
  return result;
}
