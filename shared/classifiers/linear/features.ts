import { ENGLISH_STOP_WORDS } from '../../domain/stop-words.js';

/** The groups of features a model can be trained on; every group of the shipped model is described below. */
export const FEATURE_GROUPS = ['words', 'marks', 'shapes', 'lengths'] as const;
export type FeatureGroup = (typeof FEATURE_GROUPS)[number];

/**
 * The features of a record for the type classifier, by group. Each group is in the shipped model because
 * 5-fold cross-validation on the training split shows that leaving it out costs accuracy (docs/classifier.md
 * has the table, from `npm run eval:classifier`):
 * - `words`: word unigrams and bigrams, lower-cased, from the title (prefixed `t:`), from the body (`b:`), and from
 *   both together (no prefix), so the model can weigh where a word stands and still learn from it wherever
 *   it stands. Stop words are kept on purpose: "will", "asked", "need" and "we" carry the type more than
 *   the topic does;
 * - `marks`: punctuation marks and digits, per field and together (`t#?`, `b#:`, `#"`): questions, quotes and
 *   "Q:"/"A:" turns mark exchanges, arrows and colons mark decisions and outputs;
 * - `shapes`: the shape of values (`#money`, `#clock`, `#date`, `#file`, `#ticket`, words ending in "-ed");
 * - `lengths`: the length of the title and of the body in coarse buckets (`#tlen`, `#blen`, `#sent`): a
 *   signal tells a longer story than a fact.
 */
export function features(input: { title: string; body: string }, groups: readonly FeatureGroup[] = FEATURE_GROUPS): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (feature: string) => counts.set(feature, (counts.get(feature) ?? 0) + 1);
  const title = input.title.normalize('NFKC');
  const body = input.body.normalize('NFKC');
  const titleWords = words(title);
  const bodyWords = words(body);

  if (groups.includes('words')) {
    for (const [prefix, list] of [['t:', titleWords], ['b:', bodyWords], ['', [...titleWords, '', ...bodyWords]]] as const) {
      for (let i = 0; i < list.length; i++) {
        const w = list[i]!;
        if (w === '') continue; // the break between title and body: no bigram spans it
        add(`${prefix}${w}`);
        const next = list[i + 1];
        if (next) add(`${prefix}${w} ${next}`);
      }
    }
  }
  if (groups.includes('marks')) {
    for (const [prefix, text] of [['t#', title], ['b#', body]] as const) {
      for (const mark of text.match(MARKS) ?? []) {
        add(`${prefix}${mark}`);
        add(`#${mark}`);
      }
      if (/\d/.test(text)) add(`${prefix}digit`);
    }
  }
  if (groups.includes('shapes')) {
    const text = `${title}\n${body}`;
    for (const [shape, pattern] of SHAPES) if (pattern.test(text)) add(shape);
    for (const w of text.split(/\s+/)) if (/^[a-z]+ed$/i.test(w.replace(/[^a-z]/gi, ''))) add('#ed');
  }
  if (groups.includes('lengths')) {
    add(`#tlen${bucket(titleWords.length, [4, 8, 12])}`);
    add(`#blen${bucket(bodyWords.length, [15, 30, 60])}`);
    add(`#sent${Math.min(4, (body.match(/[.!?](\s|$)/g) ?? []).length)}`);
  }
  return counts;
}

/**
 * The distinct content words of a record, title and body together: its words with at least two letters
 * that are not English stop words (the search's list). A number, a lone letter or a function word ("7",
 * "b", "is") names no topic a type can be read from, so it does not count as evidence for the gate of
 * model.ts; the model still weighs them as features (docs/classifier.md measures the choice).
 */
export function contentWords(input: { title: string; body: string }): Set<string> {
  const all = [...words(input.title.normalize('NFKC')), ...words(input.body.normalize('NFKC'))];
  return new Set(all.filter((w) => (w.match(/\p{L}/gu) ?? []).length >= 2 && !ENGLISH_STOP_WORDS.has(w)));
}

/** Lower-cased words: runs of letters, digits and apostrophes, without apostrophes at either end. */
function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).map((w) => w.replace(/^'+|'+$/g, '')).filter((w) => w !== '');
}

const MARKS = /[?!:;"“”'’—–→\-$€£%#@`()]/gu;

const SHAPES: [string, RegExp][] = [
  ['#money', /[$€£]\s?\d/],
  ['#clock', /\b\d{1,2}:\d{2}\b/],
  ['#percent', /\d+(\.\d+)?\s?%/],
  ['#year', /\b(19|20)\d\d\b/],
  ['#weekday', /\b(mon|tues|wednes|thurs|fri|satur|sun)day\b/i],
  ['#date', /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d|\b\d{1,2} (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/i],
  ['#url', /https?:\/\/|\bwww\./],
  ['#file', /`[^`]+`|\b[\w-]+\.(md|ts|py|pdf|xlsx|csv|docx|json|yml|yaml|sql|png)\b/i],
  ['#ticket', /#\d+|\b[A-Z]{2,}-\d+\b/],
];

/** The index of the first cut a count does not exceed, or the number of cuts. */
function bucket(count: number, cuts: number[]): number {
  const i = cuts.findIndex((cut) => count <= cut);
  return i === -1 ? cuts.length : i;
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
