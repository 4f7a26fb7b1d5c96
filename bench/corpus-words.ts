/**
 * The corpus' words and sentence templates, compiled once from VOCABULARY (corpus-vocabulary.ts) on first
 * use: Zipf draws over each list, nouns with their plurals, verbs with their forms, templates as slots.
 */
import type { RecordType } from '../shared/domain/record.js';
import { VOCABULARY } from './corpus-vocabulary.js';
import { Zipf } from './corpus-random.js';
import type { Domain } from './corpus-tenants.js';

/** A verb in the forms the templates use. */
export interface Verb {
  base: string;
  past: string;
  ing: string;
  s: string;
}

/** The slots a template can hold, `{n}` to `{code}`; slotValue (corpus-generator.ts) fills each. */
export const SLOTS = ['n', 'ns', 'd', 'ds', 'cn', 'v', 'vd', 'vg', 'vs', 'a', 'p', 'c', 't', 'w', 'city', 'period', 'num', 'amt', 'pct', 'id', 'ver', 'code'] as const;
type Slot = (typeof SLOTS)[number];
/** A template: literal text and slot numbers (indexes into SLOTS), in order. */
export type Template = (string | number)[];

const plural = (noun: string) =>
  /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : /[^aeiou]y$/.test(noun) ? `${noun.slice(0, -1)}ies` : `${noun}s`;

/** "base" or "base:past" or "base:past:ing"; what is left out follows the regular rules. */
function verb(spec: string): Verb {
  const [base, past, ing] = spec.split(':') as [string, string?, string?];
  const regularPast = base.endsWith('e') ? `${base}d` : /[^aeiou]y$/.test(base) ? `${base.slice(0, -1)}ied` : `${base}ed`;
  const regularIng = base.endsWith('ie') ? `${base.slice(0, -2)}ying` : /[^e]e$/.test(base) ? `${base.slice(0, -1)}ing` : `${base}ing`;
  return { base, past: past ?? regularPast, ing: ing ?? regularIng, s: plural(base) };
}

/** "noun" or "noun:plural". */
function noun(spec: string): [string, string] {
  const [singular, irregular] = spec.split(':') as [string, string?];
  return [singular, irregular ?? plural(singular)];
}

/** The distinct words of a list written with spaces and new lines between them. */
export const words = (list: string) => [...new Set(list.trim().split(/\s+/))];
/** Noun and verb specs, each word once: the first spec of a word wins, as it holds any irregular form. */
export function specs(list: string): string[] {
  const seen = new Set<string>();
  return words(list).filter((spec) => {
    const word = spec.split(':')[0]!;
    if (seen.has(word)) return false;
    seen.add(word);
    return true;
  });
}
/** Lists whose entries hold spaces ("dark mode") are written one entry per line, or separated by commas. */
const entries = (list: string) => [...new Set(list.split(/[,\n]/).map((s) => s.trim()).filter((s) => s !== ''))];

/** A template's text as literal pieces and slot numbers, so that filling it looks nothing up by name. */
export function compile(template: string): Template {
  const parts: Template = [];
  for (const [i, piece] of template.split(/\{(\w+)\}/).entries()) {
    if (i % 2 === 0) {
      if (piece !== '') parts.push(piece);
      continue;
    }
    const slot = SLOTS.indexOf(piece as Slot);
    if (slot < 0) throw new Error(`unknown slot {${piece}} in "${template}"`);
    parts.push(slot);
  }
  return parts;
}

/** The words of one domain: its nouns, compound nouns and the roles its agents are named after. */
export interface DomainWords {
  nouns: Zipf<[string, string]>;
  compounds: Zipf<string>;
  roles: string[];
}

/** Every list of VOCABULARY, ready to draw from. */
export interface Compiled {
  nouns: Zipf<[string, string]>;
  compounds: Zipf<string>;
  verbs: Zipf<Verb>;
  adjectives: Zipf<string>;
  persons: Zipf<string>;
  tools: Zipf<string>;
  cities: Zipf<string>;
  when: Zipf<string>;
  syllables: string[];
  clientFirst: string[];
  clientSecond: string[];
  domains: Record<Domain, DomainWords>;
  titles: Record<RecordType, Template[]>;
  bodies: Record<RecordType, Template[]>;
  generic: Template[];
  tails: Template[];
  metadataSources: string[];
  types: Zipf<RecordType>;
}

let compiled: Compiled | undefined;

/** The compiled vocabulary, built on the first call and kept. */
export function vocabulary(): Compiled {
  if (compiled) return compiled;
  const v = VOCABULARY;
  const templates = (list: readonly string[]) => list.map(compile);
  const perType = (lists: Record<RecordType, readonly string[]>) =>
    Object.fromEntries(Object.entries(lists).map(([type, list]) => [type, templates(list)])) as Record<RecordType, Template[]>;
  compiled = {
    nouns: new Zipf(specs(v.nouns).map(noun)),
    compounds: new Zipf(entries(v.compounds)),
    verbs: new Zipf(specs(v.verbs).map(verb)),
    adjectives: new Zipf(words(v.adjectives)),
    persons: new Zipf(words(v.persons)),
    tools: new Zipf(words(v.tools)),
    cities: new Zipf(entries(v.cities)),
    when: new Zipf(entries(v.when)),
    syllables: words(v.syllables),
    clientFirst: words(v.clientFirst),
    clientSecond: words(v.clientSecond),
    domains: Object.fromEntries(
      Object.entries(v.domains).map(([domain, d]) => [
        domain,
        { nouns: new Zipf(specs(d.nouns).map(noun)), compounds: new Zipf(entries(d.compounds)), roles: words(d.roles) },
      ]),
    ) as Record<Domain, DomainWords>,
    titles: perType(v.titles),
    bodies: perType(v.bodies),
    generic: templates(v.generic),
    tails: templates(v.tails),
    metadataSources: words(v.metadataSources),
    // Notes of fact and conversation dominate what agents write; signals are the rarest.
    types: new Zipf<RecordType>(['fact', 'exchange', 'open_item', 'decision', 'deliverable', 'signal'], 0.7),
  };
  return compiled;
}

