import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RECORD_TYPES } from '../../shared/domain/record.js';
import { classifyInputSchema } from '../../shared/domain/schemas.js';

/** data/classifier/labelled.jsonl: the labelled set the classifier is trained and measured on (see its README). */
interface Example {
  id: string;
  split: 'train' | 'test';
  type: string;
  title: string;
  body: string;
  domain: string;
  hard: boolean;
  note?: string;
}

const file = fileURLToPath(new URL('../../data/classifier/labelled.jsonl', import.meta.url));
const examples: Example[] = readFileSync(file, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as Example);

/** The fixed split rule: an example is in the test split when the first byte of the SHA-256 of its id is below 52 (about 20 %). */
const splitOf = (id: string) => (createHash('sha256').update(id).digest()[0]! < 52 ? 'test' : 'train');

describe('the labelled data set', () => {
  test('has at least 150 examples of each of the six types, and nothing else', () => {
    for (const type of RECORD_TYPES) expect(examples.filter((e) => e.type === type).length).toBeGreaterThanOrEqual(150);
    expect(new Set(examples.map((e) => e.type))).toEqual(new Set(RECORD_TYPES));
  });

  test('every example is a valid classify input, with a domain, and hard cases say why', () => {
    for (const e of examples) {
      expect(classifyInputSchema.safeParse({ title: e.title, body: e.body }).success).toBe(true);
      expect(e.domain.trim()).not.toBe('');
      if (e.hard) expect(e.note?.trim()).toBeTruthy();
    }
  });

  test('ids are unique and derived from the text; no text appears twice', () => {
    const ids = examples.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of examples) expect(e.id).toBe(`${e.type}-${createHash('sha256').update(`${e.title}\n${e.body}`).digest('hex').slice(0, 12)}`);
    const titles = examples.map((e) => e.title.trim().toLowerCase());
    expect(new Set(titles).size).toBe(titles.length);
  });

  test('the split is the fixed hash rule, about a fifth of each type in test, with hard cases on both sides', () => {
    for (const e of examples) expect(e.split).toBe(splitOf(e.id));
    for (const type of RECORD_TYPES) {
      const ofType = examples.filter((e) => e.type === type);
      const share = ofType.filter((e) => e.split === 'test').length / ofType.length;
      expect(share).toBeGreaterThan(0.12);
      expect(share).toBeLessThan(0.28);
    }
    expect(examples.some((e) => e.hard && e.split === 'test')).toBe(true);
    expect(examples.some((e) => e.hard && e.split === 'train')).toBe(true);
  });
});
