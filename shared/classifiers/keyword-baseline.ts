import { RECORD_TYPES, type RecordType } from '../domain/record.js';
import type { Classifier, Suggestion } from '../ports.js';

/**
 * The keyword baseline: counts cue words for each type in the title (twice) and the body (once), and turns
 * the counts into scores with add-one smoothing, so that a record with no cue gets the uniform 1/6 each.
 * It is deterministic and fast, and it is the yardstick the trained classifier must beat.
 */
const CUES: Record<RecordType, string[]> = {
  fact: ['prefer', 'prefers', 'preferred', 'preference', 'likes', 'uses', 'works', 'lives', 'timezone', 'always', 'usually', 'name', 'birthday', 'role', 'team', 'based', 'allergic', 'favorite', 'favourite'],
  decision: ['decided', 'decide', 'decision', 'chose', 'choose', 'chosen', 'agreed', 'approved', 'selected', 'opted', 'going', 'adopt', 'adopted', 'will', 'instead', 'picked', 'settled', 'rejected'],
  exchange: ['said', 'asked', 'replied', 'answered', 'told', 'user', 'assistant', 'conversation', 'chat', 'discussed', 'mentioned', 'question', 'responded', 'call', 'meeting', 'talked'],
  deliverable: ['wrote', 'written', 'draft', 'drafted', 'report', 'document', 'created', 'generated', 'delivered', 'shipped', 'published', 'summary', 'script', 'released', 'built', 'produced', 'final', 'pr', 'merged'],
  open_item: ['todo', 'follow', 'followup', 'pending', 'remind', 'reminder', 'later', 'next', 'needs', 'need', 'unresolved', 'open', 'waiting', 'blocked', 'deadline', 'due', 'tomorrow', 'outstanding'],
  signal: ['frustrated', 'happy', 'annoyed', 'tends', 'often', 'pattern', 'seems', 'mood', 'tone', 'reacted', 'sentiment', 'engagement', 'hesitant', 'impatient', 'excited', 'repeatedly', 'habit', 'behavior', 'behaviour'],
};

const CUE_INDEX = new Map<string, RecordType[]>();
for (const type of RECORD_TYPES) {
  for (const word of CUES[type]) CUE_INDEX.set(word, [...(CUE_INDEX.get(word) ?? []), type]);
}

function count(text: string, weight: number, into: Record<RecordType, number>): void {
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    for (const type of CUE_INDEX.get(word) ?? []) into[type] += weight;
  }
}

export const KEYWORD_BASELINE_MODEL = 'keyword-baseline-v1';

/** Scores a title and body with the keyword baseline. */
export function classifyByKeywords(input: { title: string; body: string }): Suggestion {
  const counts = Object.fromEntries(RECORD_TYPES.map((t) => [t, 0])) as Record<RecordType, number>;
  count(input.title, 2, counts);
  count(input.body, 1, counts);
  const total = RECORD_TYPES.reduce((sum, t) => sum + counts[t] + 1, 0);
  const scores = Object.fromEntries(RECORD_TYPES.map((t) => [t, (counts[t] + 1) / total])) as Record<RecordType, number>;
  // Ties go to the type listed first, so the answer is deterministic.
  const type = RECORD_TYPES.reduce((best, t) => (scores[t] > scores[best] ? t : best), RECORD_TYPES[0]);
  return { type, confidence: scores[type], scores, model: KEYWORD_BASELINE_MODEL };
}

/** The keyword baseline as a Classifier port. */
export const keywordBaselineClassifier: Classifier = {
  classify: async (input) => classifyByKeywords(input),
};
