import { RANKING } from '../../domain/rank.js';
import type { SearchDocument } from '../../search/document.js';
import { changeCoveredDocuments } from '../../search/writer.js';
import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';

/**
 * How stored records' texts leave the search index (sign -1) or come back into it (+1), in the caller's
 * transaction, with the records still stored (the texts are the ones the index was given): the index's
 * postings change where the merge has covered a record (`changeCoveredDocuments`, term by term, each term
 * once for all the documents given), and the tail generation moves when a record is above the merge mark,
 * so that the searches' tail caches read the tail again. The index follows the text exactly, so every
 * statistic stays exact (search-merge.ts).
 */
export function indexChanges(db: Db): (tenantId: string, documents: readonly SearchDocument[], sign: 1 | -1) => void {
  const postings = new SqlitePostingStorage(db);
  const bumpTail = db.prepare('UPDATE search_state SET tail_gen = tail_gen + 1 WHERE merged_upto < ?');
  return (tenantId, documents, sign) => {
    if (documents.length === 0) return;
    changeCoveredDocuments(postings, tenantId, documents, sign, RANKING);
    bumpTail.run(Math.max(...documents.map((d) => d.doc)));
  };
}
