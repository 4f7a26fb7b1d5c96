/**
 * The features of a record for the type classifier: lower-cased word unigrams and bigrams from the title
 * (prefixed `t:`), from the body (`b:`), and from both together (no prefix), so the model can weigh where a
 * word stands and still learn from it wherever it stands (cross-validation on the training split: 0.860
 * accuracy with all three, 0.842 with the first two). Stop words are kept on purpose: "will", "asked",
 * "need" and "we" carry the type more than the topic does.
 */
export function features(input: { title: string; body: string }): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (prefix: string, text: string) => {
    const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
    for (let i = 0; i < words.length; i++) {
      const w = words[i]!.replace(/^'+|'+$/g, '');
      if (w === '') continue;
      counts.set(`${prefix}${w}`, (counts.get(`${prefix}${w}`) ?? 0) + 1);
      const next = words[i + 1]?.replace(/^'+|'+$/g, '');
      if (next) counts.set(`${prefix}${w} ${next}`, (counts.get(`${prefix}${w} ${next}`) ?? 0) + 1);
    }
  };
  add('t:', input.title);
  add('b:', input.body);
  add('', `${input.title}\n${input.body}`);
  return counts;
}

/**
 * Sparse feature vector over a vocabulary: log(1 + count) per known feature, L2-normalized, so a long body
 * does not outweigh a short title by its length alone. Unknown features are dropped.
 */
export function vectorize(counts: Map<string, number>, vocabulary: Map<string, number>): { index: number[]; value: number[] } {
  const index: number[] = [];
  const value: number[] = [];
  for (const [feature, count] of counts) {
    const i = vocabulary.get(feature);
    if (i === undefined) continue;
    index.push(i);
    value.push(Math.log1p(count));
  }
  const norm = Math.sqrt(value.reduce((sum, v) => sum + v * v, 0)) || 1;
  return { index, value: value.map((v) => v / norm) };
}
