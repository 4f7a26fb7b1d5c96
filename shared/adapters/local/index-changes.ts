import type { SearchDocument } from '../../search/writer.js';
import { changeCoveredDocuments } from '../../search/writer.js';
import type { Db } from './database.js';
import { SqlitePostingStorage } from './posting-storage.js';

/**
 * How a stored record's text leaves the search index (sign -1) or comes back into it (+1), in the caller's
 * transaction, with the record still stored (the text is the one the index was given): the index's postings
 * change where the merge has covered the record (`changeCoveredDocuments`, term by term), and the tail
 * generation moves when the record is above the merge mark, so that the searches' tail caches read the tail
 * again. The index follows the text exactly, so every statistic stays exact (search-merge.ts).
 */
export function indexChanges(db: Db): (tenantId: string, document: SearchDocument, sign: 1 | -1) => void {
  const postings = new SqlitePostingStorage(db);
  const bumpTail = db.prepare('UPDATE search_state SET tail_gen = tail_gen + 1 WHERE merged_upto < ?');
  return (tenantId, document, sign) => {
    changeCoveredDocuments(postings, tenantId, [document], sign);
    bumpTail.run(document.doc);
  };
}
