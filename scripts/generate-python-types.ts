/**
 * Writes python/src/agent_memory/types.py, the Python SDK's TypedDicts, from docs/openapi.json: one per
 * component schema (requests as a caller writes them, answers as the service sends them), and the method and
 * path of each operation, so the Python SDK cannot drift from the API. Python 3.9 has no NotRequired, so a schema with both required and optional
 * fields becomes a base class of the required ones and a `total=False` subclass of the others.
 * `npm run generate` runs it (after scripts/openapi.ts); test/unit/python-types.test.ts fails while the
 * committed file differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RECORD_TYPES } from '../shared/domain/record.js';
import { OPENAPI_FILE } from './openapi.js';

export const PYTHON_TYPES_FILE = fileURLToPath(new URL('../python/src/agent_memory/types.py', import.meta.url));

interface Schema {
  /** One JSON type, or several: `["string", "null"]` is an optional string. */
  type?: string | string[];
  enum?: string[];
  anyOf?: Schema[];
  $ref?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
}

/** The parts of the OpenAPI document the Python module is generated from. */
interface OpenApi {
  paths: Record<string, Record<string, { operationId: string }>>;
  components: { schemas: Record<string, Schema> };
}

const camel = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
const RECORD_TYPE_KEY = JSON.stringify([...RECORD_TYPES]);

/** The Python source of the TypedDicts of the OpenAPI document's component schemas. */
export function pythonTypesSource(openApi: OpenApi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))): string {
  const schemas = openApi.components.schemas;
  const emitted = new Set<string>();
  const blocks: string[] = [];

  /** The Python annotation of a schema; emits the TypedDicts it needs first. */
  const annotation = (schema: Schema, nestedName: string): string => {
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '');
      emit(name, schemas[name]!);
      return name;
    }
    if (schema.anyOf) {
      const options = schema.anyOf.filter((s) => s.type !== 'null');
      const inner = options.length === 1 ? annotation(options[0]!, nestedName) : `Union[${options.map((s) => annotation(s, nestedName)).join(', ')}]`;
      return options.length < schema.anyOf.length ? `Optional[${inner}]` : inner;
    }
    if (Array.isArray(schema.type)) {
      const types = schema.type.filter((t) => t !== 'null');
      const inner = types.length === 1 ? annotation({ ...schema, type: types[0] }, nestedName) : 'Any';
      return types.length < schema.type.length && inner !== 'Any' ? `Optional[${inner}]` : inner;
    }
    if (schema.enum) return JSON.stringify(schema.enum) === RECORD_TYPE_KEY ? 'RecordType' : `Literal[${schema.enum.map((v) => JSON.stringify(v)).join(', ')}]`;
    switch (schema.type) {
      case 'string':
        return 'str';
      case 'integer':
        return 'int';
      case 'number':
        return 'float';
      case 'boolean':
        return 'bool';
      case 'array':
        return `List[${annotation(schema.items ?? {}, nestedName)}]`;
      case 'object':
        if (!schema.properties) return 'Dict[str, Any]';
        emit(nestedName, schema);
        return nestedName;
      default:
        return 'Any';
    }
  };

  const fieldLines = (name: string, schema: Schema, keys: string[]) =>
    keys.flatMap((key) => {
      const property = schema.properties![key]!;
      const doc = property.description ? [`    #: ${property.description.replace(/\s+/g, ' ')}`] : [];
      return [...doc, `    ${key}: ${annotation(property, `${name}${camel(key)}`)}`];
    });

  /** Emits one TypedDict (or, for an array schema, an alias), after what it refers to. */
  function emit(name: string, schema: Schema): void {
    if (emitted.has(name)) return;
    emitted.add(name);
    if (schema.type === 'array') {
      blocks.push(`${name} = ${annotation(schema, `${name}Item`)}\n`);
      return;
    }
    const keys = Object.keys(schema.properties ?? {});
    const required = keys.filter((k) => schema.required?.includes(k));
    const optional = keys.filter((k) => !schema.required?.includes(k));
    // Fields first, so nested TypedDicts are emitted before the class that uses them.
    const requiredLines = fieldLines(name, schema, required);
    const optionalLines = fieldLines(name, schema, optional);
    const doc = `    """${(schema.description ?? name).replace(/\s+/g, ' ')}"""`;
    if (required.length > 0 && optional.length > 0) {
      blocks.push(`class _${name}Required(TypedDict):\n${requiredLines.join('\n')}\n`);
      blocks.push(`class ${name}(_${name}Required, total=False):\n${doc}\n\n${optionalLines.join('\n')}\n`);
    } else if (optional.length > 0) {
      blocks.push(`class ${name}(TypedDict, total=False):\n${doc}\n\n${optionalLines.join('\n')}\n`);
    } else {
      blocks.push(`class ${name}(TypedDict):\n${doc}\n\n${requiredLines.join('\n')}\n`);
    }
  }

  for (const [name, schema] of Object.entries(schemas)) emit(name, schema);
  const operations = Object.entries(openApi.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, { operationId }]) => `    ${JSON.stringify(operationId)}: (${JSON.stringify(method.toUpperCase())}, ${JSON.stringify(path)}),`),
  );
  return [
    '# Generated by `npm run generate` (scripts/generate-python-types.ts) from docs/openapi.json.',
    '# Do not edit: change the schemas in shared/domain/schemas.ts and regenerate.',
    '"""The API\'s requests and answers as TypedDicts: what the client sends and what its methods return."""',
    '',
    'from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union',
    '',
    `RecordType = Literal[${RECORD_TYPES.map((t) => JSON.stringify(t)).join(', ')}]`,
    '"""The six record types."""',
    '',
    '',
    blocks.join('\n\n'),
    '',
    'OPERATIONS: Dict[str, Tuple[str, str]] = {',
    ...operations,
    '}',
    '"""The method and path of each operation, by operationId; ``{name}`` stands for a path parameter."""',
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(PYTHON_TYPES_FILE, pythonTypesSource());
  process.stderr.write(`wrote ${PYTHON_TYPES_FILE}\n`);
}
