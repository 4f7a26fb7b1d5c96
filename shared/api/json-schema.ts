import { z } from 'zod';

/**
 * zod schemas as the JSON Schemas of an OpenAPI 3.1 document: draft 2020-12 (OpenAPI 3.1's dialect), named
 * in `components.schemas` by their `meta({ id })`, with nothing a schema inside a document must not carry.
 */

export type JsonObject = { [key: string]: unknown };

const SCHEMA_REF = '#/components/schemas/';
const JSON_SCHEMA = { target: 'draft-2020-12', unrepresentable: 'throw' } as const;

/** The component name of a schema: the `id` of its zod meta. */
function idOf(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (typeof id !== 'string') throw new Error('a component schema needs a meta id');
  return id;
}

/** A reference to the component of a schema that has a meta id. */
export const schemaRef = (schema: z.ZodType) => ({ $ref: SCHEMA_REF + idOf(schema) });

/** A reference to a header of components.headers. */
export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** A JSON Schema without the keywords that only a standalone schema needs. */
function embedded(schema: JsonObject): JsonObject {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  return rest;
}

/**
 * The JSON Schemas of `roots` and of every schema with a meta id that they reach, by component name,
 * referring to each other in components.schemas: the roots first, in their order, then what they reach.
 */
export function componentSchemas(roots: Iterable<z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> {
  const schemas = [...new Set(roots)];
  for (;;) {
    const registry = z.registry<{ id: string }>();
    for (const schema of schemas) registry.add(schema, { id: idOf(schema) });
    const { schemas: out } = z.toJSONSchema(registry, { ...JSON_SCHEMA, io, uri: (id) => SCHEMA_REF + id });
    // __shared holds the id'd schemas reached from these but not among them: each becomes a component too.
    const reached = (out.__shared as { $defs?: Record<string, unknown> } | undefined)?.$defs;
    if (!reached) return Object.fromEntries(Object.entries(out).map(([id, schema]) => [id, embedded(schema as JsonObject)]));
    for (const id of Object.keys(reached)) {
      const schema = z.globalRegistry._idmap.get(id);
      if (!schema) throw new Error(`no schema has the meta id ${id}`);
      schemas.push(schema as z.ZodType);
    }
  }
}

/**
 * The JSON Schema of one value (a parameter or a header), as a caller sends it: without its optional and
 * null wrappers, and without its description, which belongs to the parameter.
 */
export function valueSchema(schema: z.ZodType): JsonObject {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  const { description: _onTheParameter, ...json } = embedded(z.toJSONSchema(inner, { ...JSON_SCHEMA, io: 'input' }) as JsonObject);
  return json;
}
