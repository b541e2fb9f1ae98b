// What a strategic merge patch needs to know about a kind: for each list, whether it is merged
// (and by which key) or replaced; for each map, whether it retains only the patch's keys. Helm 3
// reads this from the Go structs' patchStrategy/patchMergeKey tags; the API server publishes the
// same tags in its OpenAPI v3 document (x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key),
// which is what kubectl reads too. Pure: a lazy walk over the document the client fetched.

type Json = unknown
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** One node of a kind's schema, as far as a strategic merge patch reads it. */
export interface PatchSchema {
  /** The patch strategies of this field: `merge`, `retainKeys`, `replace`; none: a list is replaced. */
  strategies: string[]
  /** The key that matches a merged list's items (`name`, `containerPort`, `mountPath`). */
  mergeKey?: string
  /** The schema of a map's field. */
  field(name: string): PatchSchema | undefined
  /** The schema of a list's items, or a map's values. */
  items(): PatchSchema | undefined
}

/** An OpenAPI v3 document of one group/version, as `/openapi/v3/apis/<group>/<version>` serves it. */
export interface OpenApiDocument {
  components?: { schemas?: Record<string, Json> }
}

function node(doc: OpenApiDocument, schema: Json, depth = 0): PatchSchema | undefined {
  if (!isObject(schema) || depth > 64) return undefined
  // A field's own tags sit beside its $ref (`allOf: [{$ref}]`); the type's fields behind it.
  const strategies = typeof schema['x-kubernetes-patch-strategy'] === 'string' ? schema['x-kubernetes-patch-strategy'].split(',') : []
  const mergeKey = typeof schema['x-kubernetes-patch-merge-key'] === 'string' ? schema['x-kubernetes-patch-merge-key'] : undefined
  const resolved = resolve(doc, schema)
  return {
    strategies,
    mergeKey,
    field: (name) => {
      const properties = resolved.properties
      return isObject(properties) ? node(doc, properties[name], depth + 1) : undefined
    },
    items: () => node(doc, resolved.items ?? resolved.additionalProperties, depth + 1)
  }
}

/** The schema behind `$ref` or `allOf: [{$ref}]`. */
function resolve(doc: OpenApiDocument, schema: Record<string, Json>): Record<string, Json> {
  const ref = typeof schema.$ref === 'string' ? schema.$ref : Array.isArray(schema.allOf) && isObject(schema.allOf[0]) ? schema.allOf[0].$ref : undefined
  if (typeof ref !== 'string') return schema
  const target = doc.components?.schemas?.[ref.replace('#/components/schemas/', '')]
  return isObject(target) ? target : schema
}

/** The schema of `kind` in `apiVersion` (`apps/v1`, `v1`), found by its x-kubernetes-group-version-kind; undefined when the document lacks it. */
export function patchSchemaOf(doc: OpenApiDocument, apiVersion: string, kind: string): PatchSchema | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion]
  for (const schema of Object.values(doc.components?.schemas ?? {})) {
    if (!isObject(schema) || !Array.isArray(schema['x-kubernetes-group-version-kind'])) continue
    const gvks = schema['x-kubernetes-group-version-kind'] as { group?: string; version?: string; kind?: string }[]
    if (gvks.some((g) => (g.group ?? '') === group && g.version === version && g.kind === kind)) return node(doc, schema)
  }
  return undefined
}
