import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RecordType } from '../../shared/domain/record.js';

/** One labelled example of data/classifier/labelled.jsonl (its README describes the set and the split). */
export interface Example {
  id: string;
  split: 'train' | 'test';
  type: RecordType;
  title: string;
  body: string;
  domain: string;
  hard: boolean;
}

/** Every example of the labelled set, in file order. */
export function loadExamples(): Example[] {
  const file = fileURLToPath(new URL('../../data/classifier/labelled.jsonl', import.meta.url));
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Example);
}
