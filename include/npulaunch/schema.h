/*
 * schema.h: layer plan. Documents checked against a JSON Schema held as data: the subset of
 * draft 2020-12 npulaunch's own schemas use (type, const, enum, required, properties,
 * patternProperties, additionalProperties, dependentRequired, items, minItems, maxItems,
 * minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, oneOf,
 * $ref within a schema and to a sibling schema file, and the annotations $schema, $id, $defs,
 * title, description). A keyword outside it is an error, never ignored, so a schema file and this
 * validator cannot silently disagree. Patterns are POSIX extended expressions read as
 * ECMA-262's are for the patterns used: '.' matches no newline, ^ and $ the ends of the string.
 * Strings must be UTF-8. The first problem is reported, located by its JSON path
 * (`.roles[1].endpoints[0].url`). Used for the manifest a command reads from a bundle
 * (docs/json/manifest.schema.json, compiled in).
 */
#ifndef NPL_SCHEMA_H
#define NPL_SCHEMA_H

#include <cjson/cJSON.h>

#include "npulaunch/diag.h"

/* One schema document and the file name a $ref names it by ("show.schema.json"). */
struct npl_schema_doc {
	const char *name;
	const cJSON *schema;
};

/* Check doc against docs[0] (the others: what its $refs may name). 0 when it holds; else -1,
 * the first problem recorded as `PATH: MESSAGE` located at file (line 0). */
int npl_schema_validate(const struct npl_schema_doc *docs, int ndocs, const cJSON *doc, const char *file,
			struct npl_diag *d);

/* 0 when every keyword of every schema of docs is one the validator knows and every $ref and
 * pattern resolves; else -1 with each problem recorded. */
int npl_schema_check(const struct npl_schema_doc *docs, int ndocs, struct npl_diag *d);

/* A bundle's manifest (the plan with its files) against the compiled-in manifest schema. */
int npl_manifest_validate(const cJSON *manifest, const char *file, struct npl_diag *d);

#endif
