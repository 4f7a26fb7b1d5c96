/**
 * Inputs that carry no evidence of any type: what an agent sends by mistake, a test, a placeholder or a
 * language the model was not trained on. They have no label, so they stay apart from
 * data/classifier/labelled.jsonl; the only right answer for them is a low confidence. Generated from a
 * seed rather than written by hand, so the set is not shaped around any one input.
 */
import { mulberry32 } from '../corpus.js';

/** The kinds of no-signal input, each a family a few examples cannot cover by hand. */
export const NO_SIGNAL_KINDS = ['punctuation', 'letter', 'mash', 'random', 'digits', 'emoji', 'repeated', 'script', 'mixed'] as const;
export type NoSignalKind = (typeof NO_SIGNAL_KINDS)[number];

/** One generated input: a title and a body (both non-blank, as `POST /v1/classify` requires) and its kind. */
export interface NoSignalInput {
  kind: NoSignalKind;
  title: string;
  body: string;
}

/** The seed of the set `npm run eval:classifier` reports on. Nothing is fitted on any no-signal set. */
export const NO_SIGNAL_SEED = 1;

/** `count` no-signal inputs, the kinds in turn; the same seed always gives the same inputs. */
export function noSignalInputs(seed: number, count = 360): NoSignalInput[] {
  const random = mulberry32(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const chars = (alphabet: string) => [...alphabet];

  const punctuation = chars('!?.,;:-_*#~/\\|\'"()[]{}<>@&%^+=`');
  const letters = chars('abcdefghijklmnopqrstuvwxyz');
  const rows = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm', '1234567890'];
  const emoji = chars('😀😂🙂😉😍🤔😭😡👍👎🎉🔥✨💡💙🚀🐱🌈🍕⚽');
  // Scripts the training set has no words in (English, with a few accented Latin names).
  const scripts = [
    chars('абвгдежзийклмнопрстуфхцчшщыэюя'),
    chars('αβγδεζηθικλμνξοπρστυφχψω'),
    chars('אבגדהוזחטיכלמנסעפצקרשת'),
    chars('ابتثجحخدذرزسشصضطظعغفقكلمنهوي'),
    chars('कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह'),
    chars('가나다라마바사아자차카타파하고노도로모보소오조초코토포호'),
    chars('的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长'),
    chars('กขคงจฉชซญดตถทธนบปผพฟภมยรลวศสหอฮ'),
  ];

  const run = (alphabet: readonly string[], min: number, max: number) => Array.from({ length: int(min, max) }, () => pick(alphabet)).join('');
  const words = (make: () => string, min: number, max: number) => Array.from({ length: int(min, max) }, make).join(' ');
  const mash = () => {
    // A stretch of one keyboard row, as a hand sliding over the keys types it.
    const row = pick(rows.slice(0, 3));
    const from = int(0, row.length - 3);
    return row.slice(from, from + int(3, row.length - from));
  };
  const field: Record<Exclude<NoSignalKind, 'mixed'>, () => string> = {
    punctuation: () => words(() => run(punctuation, 1, 6), 1, 3),
    letter: () => pick(letters),
    mash: () => words(mash, 1, 3),
    random: () => words(() => run(letters, 2, 7), 1, 4),
    digits: () => words(() => run(chars(rows[3]!), 1, 8), 1, 3),
    emoji: () => words(() => run(emoji, 1, 4), 1, 3),
    repeated: () => pick([...letters, ...punctuation, ...chars(rows[3]!)]).repeat(int(2, 16)),
    script: () => {
      const alphabet = pick(scripts);
      return words(() => run(alphabet, 2, 6), 1, 6);
    },
  };
  const pure = Object.keys(field) as Exclude<NoSignalKind, 'mixed'>[];

  return Array.from({ length: count }, (_, i): NoSignalInput => {
    const kind = NO_SIGNAL_KINDS[i % NO_SIGNAL_KINDS.length]!;
    if (kind === 'mixed') return { kind, title: field[pick(pure)](), body: field[pick(pure)]() };
    return { kind, title: field[kind](), body: field[kind]() };
  });
}

