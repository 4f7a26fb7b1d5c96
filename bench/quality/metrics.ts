/**
 * Ranking quality, as information retrieval measures it. A judgment maps a document id to a grade; a grade
 * above 0 is relevant. The ranking is the list of ids a system returned, best first.
 */
export type Judgments = ReadonlyMap<string, number>;

/**
 * nDCG@k: the discounted cumulative gain of the first k results (gain = the grade, discount = log2 of the
 * position + 1) over that of the ideal ranking of the judged documents. 0 when nothing is relevant.
 */
export function ndcgAt(k: number, ranking: readonly string[], judgments: Judgments): number {
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  const ideal = dcg([...judgments.values()].filter((g) => g > 0).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranking.map((id) => Math.max(0, judgments.get(id) ?? 0))) / ideal;
}

/**
 * Average precision: the mean, over every relevant document, of the precision at the position where it was
 * returned (0 for one never returned). MAP is its mean over the queries.
 */
export function averagePrecision(ranking: readonly string[], judgments: Judgments): number {
  const relevant = [...judgments.values()].filter((g) => g > 0).length;
  if (relevant === 0) return 0;
  let found = 0;
  let sum = 0;
  ranking.forEach((id, i) => {
    if ((judgments.get(id) ?? 0) > 0) sum += ++found / (i + 1);
  });
  return sum / relevant;
}

/** Recall@k: the share of the relevant documents among the first k results. 0 when nothing is relevant. */
export function recallAt(k: number, ranking: readonly string[], judgments: Judgments): number {
  const relevant = [...judgments.values()].filter((g) => g > 0).length;
  if (relevant === 0) return 0;
  return ranking.slice(0, k).filter((id) => (judgments.get(id) ?? 0) > 0).length / relevant;
}

export interface QualitySummary {
  queries: number;
  ndcg10: number;
  map: number;
  recall100: number;
}

/** The mean of each measure over the queries that have at least one relevant document. */
export function summarize(runs: { ranking: readonly string[]; judgments: Judgments }[]): QualitySummary {
  const judged = runs.filter((r) => [...r.judgments.values()].some((g) => g > 0));
  const mean = (f: (r: (typeof judged)[number]) => number) => (judged.length === 0 ? 0 : judged.reduce((s, r) => s + f(r), 0) / judged.length);
  return {
    queries: judged.length,
    ndcg10: mean((r) => ndcgAt(10, r.ranking, r.judgments)),
    map: mean((r) => averagePrecision(r.ranking, r.judgments)),
    recall100: mean((r) => recallAt(100, r.ranking, r.judgments)),
  };
}
