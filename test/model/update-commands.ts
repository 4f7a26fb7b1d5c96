import { expect } from '@jest/globals';
import fc from 'fast-check';
import type { RecordType } from '../../shared/domain/record.js';
import type { RecordPatch } from '../../shared/domain/schemas.js';
import { AGENTS, BASE, TENANTS, TYPES, WRITE, goneIdOf, modelOf, pickArb, picked, stored, textArb, textOf, type Command, type Model, type Pick, type Real, type Text } from './model-parts.js';

/**
 * The commands of the search index's model that correct records (decisions.md, "Version 1.2"): an update
 * (RecordStore.update, a new text or other fields, with the right version or a stale one) and a write that
 * supersedes records (some of them another agent's or gone, which refuses the whole write).
 */

/** What an update changes: a new text, or another type only. */
export interface UpdateSpec {
  pick: Pick;
  text: Text | null;
  type: RecordType;
}

export const updateArb: fc.Arbitrary<UpdateSpec> = fc.record({ pick: pickArb, text: fc.option(textArb, { nil: null }), type: fc.constantFrom(...TYPES) });

/**
 * Applies updates to distinct live records together (in one group commit on SQLite), each with If-Match on
 * the version the model has, and follows them in the model. Shared by Update and Together.
 */
export async function applyUpdates(m: Model, r: Real, specs: readonly UpdateSpec[], exclude: readonly string[] = []): Promise<void> {
  const seen = new Set(exclude);
  const planned = [];
  for (const spec of specs) {
    if (m.live.length === 0) break;
    const target = picked(m, spec.pick);
    if (seen.has(target.id)) continue;
    seen.add(target.id);
    const text = spec.text && textOf(m, spec.text);
    const patch: RecordPatch = text ? { title: text.title, body: text.body, type: spec.type } : { type: spec.type };
    planned.push({ target, text, patch, at: new Date(BASE + 1000 * m.clock++) });
  }
  const results = await Promise.all(
    planned.map(({ target, patch, at }) => r.system.records.update(TENANTS[target.tenant]!, target.id, patch, { ifVersions: [target.version], at })),
  );
  for (const [i, { target, text, patch, at }] of planned.entries()) {
    expect(results[i]).toMatchObject({ id: target.id, version: target.version + 1, updated_at: at.toISOString(), type: patch.type });
    if (text) {
      m.goneTokens.push({ tenant: target.tenant, token: target.token });
      Object.assign(target, { title: text.title, body: text.body, token: text.token });
    }
    target.type = patch.type!;
    target.version++;
  }
}

/** An update of one live record; `stale`: with an If-Match the record no longer has, which changes nothing. */
export class Update implements Command {
  constructor(
    readonly spec: UpdateSpec,
    readonly stale: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    if (!this.stale) return applyUpdates(m, r, [this.spec]);
    const target = picked(m, this.spec.pick);
    const attempt = r.system.records.update(TENANTS[target.tenant]!, target.id, { title: 'never stored', type: this.spec.type }, {
      ifVersions: [target.version + 1],
      at: new Date(BASE + 1000 * m.clock++),
    });
    await expect(attempt).rejects.toMatchObject({ code: 'version_conflict' });
  }
  toString = () => `update(${this.spec.pick}, ${this.spec.text ? JSON.stringify(this.spec.text) : 'no text'}, ${this.spec.type}${this.stale ? ', stale If-Match' : ''})`;
}

/**
 * A write that supersedes live records of its tenant (those of the first one picked); `agentBound`: as an
 * agent's key writes, so that the others' records are refused; `withGone`: an id that is gone besides.
 * A refused write stores nothing and supersedes nothing.
 */
export class Supersede implements Command {
  constructor(
    readonly picks: Pick[],
    readonly text: Text,
    readonly agentBound: boolean,
    readonly withGone: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.live.length > 0;
  async run(m: Model, r: Real) {
    const first = picked(m, this.picks[0]!);
    const targets = [...new Set(this.picks.map((p) => picked(m, p)))].filter((x) => x.tenant === first.tenant);
    const agent = this.agentBound ? first.agent : null;
    const ids = targets.map((x) => x.id);
    const goneId = this.withGone ? goneIdOf(m, first.tenant) : undefined;
    if (goneId !== undefined) ids.push(goneId);
    const refused = ids.find((id) => !targets.some((x) => x.id === id && (agent === null || x.agent === agent)));
    const text = textOf(m, this.text);
    const record = stored(first.tenant, agent ?? AGENTS[0]!, 'fact', text, BASE + 1000 * m.clock++);
    const attempt = r.system.records.create(TENANTS[first.tenant]!, record, { ...WRITE, supersedes: { ids, agentId: agent } });
    if (refused !== undefined) {
      await expect(attempt).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining(refused) });
      m.goneIds.push({ tenant: first.tenant, id: record.id });
      m.goneTokens.push({ tenant: first.tenant, token: text.token });
      return;
    }
    await attempt;
    m.live.push(modelOf(record, first.tenant, text.token));
    for (const x of targets) x.superseded_by = record.id;
  }
  toString = () =>
    `supersede(${JSON.stringify(this.picks)}, ${JSON.stringify(this.text)}${this.agentBound ? ', agent-bound' : ''}${this.withGone ? ', and a gone id' : ''})`;
}

/** The arbitraries of these commands, for the model's list. */
export const updateCommands: fc.Arbitrary<Command>[] = [
  fc.tuple(updateArb, fc.double({ min: 0, max: 1, noNaN: true })).map(([spec, p]) => new Update(spec, p < 0.15)),
  fc.tuple(updateArb, fc.double({ min: 0, max: 1, noNaN: true })).map(([spec, p]) => new Update(spec, p < 0.15)),
  fc.tuple(fc.array(pickArb, { minLength: 1, maxLength: 3 }), textArb, fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true })).map(
    ([picks, text, agentBound, gone]) => new Supersede(picks, text, agentBound, gone < 0.2),
  ),
];
