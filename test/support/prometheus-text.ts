/**
 * A reader of Prometheus' text exposition format (version 0.0.4) for the metrics tests: prom-client does not
 * export its own. It reads the sample lines `name{label="value",…} value`, keeps the `# TYPE` lines, and
 * fails on any other line, so that a malformed exposition cannot pass for an empty one.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** The declared type of each metric family, by name. */
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function number(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // prom-client writes NaN as `Nan` (the event loop's lag before it has been measured); Prometheus reads
  // it as Go's ParseFloat does, in any case.
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let end = 0;
  for (let m = LABEL.exec(text); m; m = LABEL.exec(text)) {
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    end = LABEL.lastIndex;
  }
  if (end !== text.length) throw new Error(`malformed labels in: ${line}`);
  return labels;
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a line of the exposition format: ${line}`);
    samples.push({ name: m[1]!, labels: m[2] === undefined ? {} : labelsOf(m[2], line), value: number(m[3]!) });
  }
  return { samples, types };
}

/** The samples of one metric whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The value of the one sample of `name` with exactly these labels; undefined when there is none. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = seriesKey(name, labels);
  return exposition.samples.find((s) => seriesKey(s.name, s.labels) === key)?.value;
}

/** One string per series: the name and the labels in order. */
export function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;
}

/** How much each series of `name` grew from `before` to `after` (a series absent before counts from 0); unchanged series are left out. */
export function increases(before: Exposition, after: Exposition, name: string): Map<string, number> {
  const was = new Map(samplesOf(before, name).map((s) => [seriesKey(s.name, s.labels), s.value]));
  const grew = new Map<string, number>();
  for (const s of samplesOf(after, name)) {
    const key = seriesKey(s.name, s.labels);
    const delta = s.value - (was.get(key) ?? 0);
    if (delta !== 0) grew.set(key, delta);
  }
  return grew;
}
