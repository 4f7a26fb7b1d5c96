import { LIMITS } from '../../shared/domain/record.js';
import { utf8Bytes } from '../../shared/domain/text.js';

/**
 * The hardest records the write limits allow, each at one edge: every field at its size limit, metadata as
 * deep, as wide and as many-valued as allowed, every JSON escape, text that is syntax somewhere else, keys
 * that mean something to JavaScript, and numbers at the edges of a double. Each title carries the word
 * `worstcase<n>` so a search can find it. Every one of them must be accepted and read back exactly.
 */

const ASTRAL = '𝔘'; // one code point, two UTF-16 units, four UTF-8 bytes

/** `text` padded with `fill` up to `bytes` bytes of UTF-8 exactly (the last few with ASCII). */
function toBytes(text: string, fill: string, bytes: number): string {
  let out = text;
  const step = utf8Bytes(fill);
  while (utf8Bytes(out) + step <= bytes) out += fill;
  while (utf8Bytes(out) < bytes) out += 'x';
  return out;
}

/** Metadata whose JSON is exactly `bytes` long: the given object plus a padding string. */
function metadataOf(bytes: number, base: Record<string, unknown>): Record<string, unknown> {
  const withPad = (pad: string) => ({ ...base, pad });
  const overhead = utf8Bytes(JSON.stringify(withPad('')));
  return withPad(toBytes('', 'é', bytes - overhead));
}

/** Objects and arrays alternately, `levels` deep in all (the outer object is level 1). */
function deepMix(levels: number): Record<string, unknown> {
  let value: unknown = 'bottom';
  for (let level = levels; level > 1; level--) value = level % 2 === 0 ? [value] : { level: value };
  return { level: value };
}

/** Metadata as wide as the size allows: one numbered key after another. */
function wide(bytes: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; utf8Bytes(JSON.stringify({ ...out, [`k${i}`]: i })) <= bytes; i++) out[`k${i}`] = i;
  return out;
}

/** As many values as fit: a flat array of zeros. */
function manyValues(bytes: number): Record<string, unknown> {
  const n = Math.floor((bytes - '{"zeros":[]}'.length + 1) / 2);
  return { zeros: new Array<number>(n).fill(0) };
}

const ESCAPES = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '"\\/\u007f\u2028\u2029\ufeff';
const SYNTAX = `" AND OR NOT NEAR( * : ^ -- ; DROP TABLE records; <script>alert(1)</script> {{x}} \${x} %s %n \\ 'quote' \`tick\``;
const UNICODE = 'NUL\u0000 tab\t CR\r LF\n RTL\u202egnirts\u202c e\u0301 👩🏽‍💻 ﬁle Ⅻ ＦＵＬＬ \u00a0nbsp \u200bzwsp';

/** The worst-case records, in the order they are written. */
export function worstCaseRecords(): Record<string, unknown>[] {
  const d = LIMITS.metadataDepth;
  return [
    {
      agent_id: 'a' + '😀'.repeat(LIMITS.agentIdChars - 1),
      type: 'deliverable',
      title: 'worstcase1 ' + ASTRAL.repeat(LIMITS.titleChars - 'worstcase1 '.length),
      body: toBytes('worstcase1 ', '😀', LIMITS.bodyBytes),
      client: 'c' + ASTRAL.repeat(LIMITS.clientChars - 1),
      metadata: metadataOf(LIMITS.metadataBytes, { deep: deepMix(d - 1) }),
    },
    { agent_id: 'deep', type: 'fact', title: 'worstcase2 metadata as deep as allowed', body: 'b', metadata: deepMix(d) },
    { agent_id: 'wide', type: 'fact', title: 'worstcase3 metadata as wide as allowed', body: 'b', metadata: wide(LIMITS.metadataBytes) },
    { agent_id: 'many', type: 'signal', title: 'worstcase4 metadata with as many values as allowed', body: 'b', metadata: manyValues(LIMITS.metadataBytes) },
    {
      agent_id: ESCAPES,
      type: 'exchange',
      title: `worstcase5 every escape ${ESCAPES}`,
      body: ESCAPES.repeat(50),
      client: ESCAPES,
      metadata: { [ESCAPES]: ESCAPES, list: [ESCAPES, { [ESCAPES]: [ESCAPES] }] },
    },
    { agent_id: SYNTAX, type: 'decision', title: `worstcase6 ${SYNTAX}`, body: `${SYNTAX}\n${UNICODE}`, client: UNICODE, metadata: { sql: SYNTAX, text: UNICODE } },
    {
      agent_id: 'keys',
      type: 'open_item',
      title: 'worstcase7 keys that mean something to JavaScript',
      body: 'b',
      metadata: {
        constructor: { prototype: { polluted: true } },
        toString: 'x',
        hasOwnProperty: null,
        valueOf: [],
        '': '',
        __proto_: 1,
        ___proto__: 2,
        $ref: '#/',
        'a.b': 1,
        'a/b~c': 1,
        ' ': 1,
        [ASTRAL]: ASTRAL,
        ['k'.repeat(4000)]: 'long key',
      },
    },
    {
      agent_id: 'numbers',
      type: 'fact',
      title: 'worstcase8 numbers at the edges of a double',
      body: 'b',
      metadata: { n: [Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53, -(2 ** 53), 0.1, 1e-7, 123456789.125, 0, true, false, null] },
    },
  ];
}
