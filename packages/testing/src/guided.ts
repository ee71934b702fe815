/**
 * Guided decoding on the fake (GENERATOR.md "Guided decoding"): the one deterministic instance of a
 * JSON schema that both test servers produce, so tests can state the object they expect.
 */

type JsonObject = { readonly [key: string]: unknown };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The target of a local `$ref` (a JSON pointer into `root`), or undefined. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node)) {
      if (!ARRAY_INDEX.test(key) || Number(key) >= node.length) return undefined;
      node = node[Number(key)];
    } else if (isObject(node) && Object.hasOwn(node, key)) {
      node = node[key];
    } else {
      return undefined;
    }
  }
  return node;
}

/** `allOf` branches merged into their schema: later keywords win, `properties` concatenate. */
function mergeAllOf(schema: JsonObject, branches: readonly unknown[]): JsonObject {
  const { allOf: _, ...merged } = schema;
  let out: JsonObject = merged;
  for (const branch of branches) {
    if (!isObject(branch)) continue;
    const properties =
      isObject(out.properties) || isObject(branch.properties)
        ? {
            properties: {
              ...(isObject(out.properties) ? out.properties : {}),
              ...(isObject(branch.properties) ? branch.properties : {}),
            },
          }
        : {};
    out = { ...out, ...branch, ...properties };
  }
  return out;
}

const KNOWN_TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

function typeOf(schema: JsonObject): string | undefined {
  const t = Array.isArray(schema.type) ? (schema.type.find((x) => x !== 'null') ?? 'null') : schema.type;
  return typeof t === 'string' && KNOWN_TYPES.has(t) ? t : undefined;
}

class Instantiator {
  private readonly root: unknown;

  constructor(root: unknown) {
    this.root = root;
  }

  of(schema: unknown, expanding: ReadonlySet<string>): unknown {
    if (!isObject(schema)) return null;
    if (typeof schema.$ref === 'string') {
      const ref = schema.$ref;
      // A recursive schema would otherwise expand forever (arrays always get an item).
      if (expanding.has(ref)) return null;
      const target = resolveRef(this.root, ref);
      return target === undefined ? null : this.of(target, new Set([...expanding, ref]));
    }
    if (Array.isArray(schema.allOf)) return this.of(mergeAllOf(schema, schema.allOf), expanding);
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    for (const branches of [schema.anyOf, schema.oneOf]) {
      if (Array.isArray(branches) && branches.length > 0) return this.of(branches[0], expanding);
    }
    const type = typeOf(schema);
    const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
    switch (type) {
      case 'object':
        return this.object(schema, expanding);
      case 'array':
        return this.array(schema, expanding);
      case 'string':
        return 'text';
      case 'number':
        return minimum ?? 0;
      case 'integer':
        // Math.ceil(-0.5) is -0; adding 0 makes it the 0 that Python's math.ceil gives.
        return minimum === undefined ? 0 : Math.ceil(minimum) + 0;
      case 'boolean':
        return true;
      case 'null':
        return null;
    }
    if (isObject(schema.properties)) return this.object(schema, expanding);
    if ('items' in schema || 'prefixItems' in schema) return this.array(schema, expanding);
    return null;
  }

  private object(schema: JsonObject, expanding: ReadonlySet<string>): unknown {
    const properties = isObject(schema.properties) ? schema.properties : {};
    // fromEntries defines own properties, so a property named __proto__ stays an ordinary key.
    return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, this.of(v, expanding)]));
  }

  private array(schema: JsonObject, expanding: ReadonlySet<string>): unknown[] {
    const minItems =
      typeof schema.minItems === 'number' && Number.isInteger(schema.minItems) ? schema.minItems : 0;
    // Draft 2020-12 says prefixItems; older drafts give tuples as a list under items.
    const prefix = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
        ? schema.items
        : [];
    const rest = Array.isArray(schema.items) || !('items' in schema) ? {} : schema.items;
    return Array.from({ length: Math.max(1, minItems) }, (_, i) =>
      this.of(i < prefix.length ? prefix[i] : rest, expanding),
    );
  }
}

/**
 * The JSON value the fake's guided decoding produces for a JSON schema (already parsed), by the rule
 * of GENERATOR.md "Guided decoding": every property in schema order, the `const` or first `enum`
 * value, strings `"text"`, numbers and integers their `minimum` or 0, booleans `true`, arrays
 * `minItems` (at least 1) items, the first branch of `anyOf` / `oneOf`, local `$ref`s followed. A
 * request guided by the schema generates `JSON.stringify` of this value.
 */
export function jsonSchemaInstance(schema: unknown): unknown {
  return new Instantiator(schema).of(schema, new Set());
}
