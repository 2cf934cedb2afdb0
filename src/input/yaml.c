/* yaml.c: libyaml events -> located document tree; see yaml.h. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "npulaunch/arena.h"
#include "npulaunch/text.h"
#include "npulaunch/yaml.h"

#define MAX_DEPTH 64

struct frame {
	struct npl_ynode *node;
	int cap;                  /* room in node->kids */
	int nkids;                /* entries used in node->kids */
};

static struct npl_loc mark_loc(const char *file, yaml_mark_t m)
{
	struct npl_loc l = {file, (int)m.line + 1, (int)m.column + 1};

	return l;
}

static void add_kid(struct npl_arena *a, struct frame *f, struct npl_ynode *kid)
{
	if (f->nkids == f->cap) {
		int cap = f->cap ? f->cap * 2 : 8;

		f->node->kids = npl_arena_grow(a, f->node->kids, (size_t)f->nkids, (size_t)cap,
					       sizeof(*f->node->kids));
		f->cap = cap;
	}
	f->node->kids[f->nkids++] = kid;
}

static int keycmp(const void *x, const void *y)
{
	const struct npl_ynode *a = *(struct npl_ynode *const *)x, *b = *(struct npl_ynode *const *)y;
	int c = strcmp(a->str, b->str);

	if (c)
		return c;
	return a->loc.line != b->loc.line ? a->loc.line - b->loc.line : a->loc.col - b->loc.col;
}

/* Duplicate keys are an error: sort a copy of the keys and compare neighbours. */
static int check_keys(struct npl_ynode *map, struct npl_diag *d)
{
	struct npl_ynode **keys;
	int i, first, rc = 0;

	if (map->n < 2)
		return 0;
	keys = npl_xmalloc((size_t)map->n * sizeof(*keys));
	for (i = 0; i < map->n; i++)
		keys[i] = map->kids[2 * i];
	qsort(keys, (size_t)map->n, sizeof(*keys), keycmp);
	for (i = 1, first = 0; i < map->n; i++) {
		if (strcmp(keys[i]->str, keys[first]->str) != 0) {
			first = i;
			continue;
		}
		rc = npl_error(d, &keys[i]->loc, "duplicate key '%s' (first at line %d)", keys[i]->str,
			       keys[first]->loc.line);
	}
	free(keys);
	return rc;
}

static int parse_error(yaml_parser_t *p, const char *file, const char *text, size_t len,
		       struct npl_diag *d)
{
	struct npl_loc l = mark_loc(file, p->problem_mark);

	if (p->error == YAML_READER_ERROR) {
		/* reader errors (bad encoding) only know their byte offset */
		size_t i, off = p->problem_offset < len ? p->problem_offset : len;

		l.line = l.col = 1;
		for (i = 0; i < off; i++) {
			if (text[i] == '\n') {
				l.line++;
				l.col = 1;
			} else if (((unsigned char)text[i] & 0xC0) != 0x80) {
				l.col++;
			}
		}
	}

	if (p->error == YAML_MEMORY_ERROR)
		npl_oom();
	if (p->context)
		return npl_error(d, &l, "invalid YAML: %s %s", p->problem ? p->problem : "syntax error",
				 p->context);
	return npl_error(d, &l, "invalid YAML: %s", p->problem ? p->problem : "syntax error");
}

/* The node an event starts (a scalar, a list or a mapping) with the event's anchor and tag;
 * NULL for any other event. A NUL in a scalar is an error: NULL and *rc -1. */
static struct npl_ynode *event_node(struct npl_arena *a, const char *file, const yaml_event_t *ev,
				    const char **anchor, const char **tag, struct npl_diag *d, int *rc)
{
	struct npl_ynode *node;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		*anchor = (const char *)ev->data.scalar.anchor;
		/* any tag written in the text, even the bare '!', is refused */
		*tag = (const char *)ev->data.scalar.tag;
		node = npl_arena_alloc(a, sizeof(*node));
		node->kind = NPL_YSCALAR;
		node->loc = mark_loc(file, ev->start_mark);
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length)) {
			*rc = npl_error(d, &node->loc, "NUL character in a value");
			return NULL;
		}
		node->str = npl_arena_strndup(a, (const char *)ev->data.scalar.value, ev->data.scalar.length);
		node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		return node;
	case YAML_SEQUENCE_START_EVENT:
		*anchor = (const char *)ev->data.sequence_start.anchor;
		*tag = (const char *)ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		*anchor = (const char *)ev->data.mapping_start.anchor;
		*tag = (const char *)ev->data.mapping_start.tag;
		break;
	default:
		return NULL;
	}
	node = npl_arena_alloc(a, sizeof(*node));
	node->kind = ev->type == YAML_SEQUENCE_START_EVENT ? NPL_YSEQ : NPL_YMAP;
	node->loc = mark_loc(file, ev->start_mark);
	return node;
}

/* The documents read so far and the open lists and mappings. */
struct load {
	struct npl_arena *a;
	struct frame stack[MAX_DEPTH + 1];
	int depth, docap;
	struct npl_ynode ***docs;
	int *ndocs;
};

/* Put node where it belongs, a document's root or its parent's next item, and open it when it
 * holds others. */
static int place(struct load *l, struct npl_ynode *node, struct npl_diag *d)
{
	if (l->depth == 0) {
		if (*l->ndocs == l->docap) {
			l->docap = l->docap ? l->docap * 2 : 4;
			*l->docs = npl_arena_grow(l->a, *l->docs, (size_t)*l->ndocs, (size_t)l->docap,
						  sizeof(**l->docs));
		}
		(*l->docs)[(*l->ndocs)++] = node;
	} else {
		struct frame *f = &l->stack[l->depth - 1];

		if (f->node->kind == NPL_YMAP && f->nkids % 2 == 0 && node->kind != NPL_YSCALAR)
			return npl_error(d, &node->loc, "a mapping key must be a plain word, not %s",
					 npl_ykind_name(node));
		add_kid(l->a, f, node);
	}
	if (node->kind == NPL_YSCALAR)
		return 0;
	if (l->depth == MAX_DEPTH)
		return npl_error(d, &node->loc, "nesting deeper than %d levels", MAX_DEPTH);
	l->stack[l->depth++] = (struct frame){node, 0, 0};
	return 0;
}

int npl_yaml_load(struct npl_arena *a, const char *file, const char *text, size_t len,
		  struct npl_ynode ***docs, int *ndocs, struct npl_diag *d)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct load l = {.a = a, .docs = docs, .ndocs = ndocs};
	int rc = 0, done = 0;

	*docs = NULL;
	*ndocs = 0;
	if (!yaml_parser_initialize(&p))
		npl_oom();
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!done && rc == 0) {
		struct npl_ynode *node;
		const char *anchor = NULL, *tag = NULL;

		if (!yaml_parser_parse(&p, &ev)) {
			rc = parse_error(&p, file, text, len, d);
			break;
		}
		node = event_node(a, file, &ev, &anchor, &tag, d, &rc);
		if (ev.type == YAML_STREAM_END_EVENT) {
			done = 1;
		} else if (ev.type == YAML_ALIAS_EVENT) {
			rc = npl_error(d, &(struct npl_loc){file, (int)ev.start_mark.line + 1,
					    (int)ev.start_mark.column + 1},
				       "YAML aliases are not supported: write the value out");
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			struct frame *f = &l.stack[--l.depth];

			f->node->n = f->node->kind == NPL_YMAP ? f->nkids / 2 : f->nkids;
			if (f->node->kind == NPL_YMAP)
				rc = check_keys(f->node, d);
		} else if (ev.type == YAML_DOCUMENT_END_EVENT) {
			l.depth = 0;
		}
		if (rc == 0 && node && anchor)
			rc = npl_error(d, &node->loc, "YAML anchors are not supported");
		if (rc == 0 && node && tag)
			rc = npl_error(d, &node->loc, "YAML tags are not supported ('%s')", tag);
		if (rc == 0 && node)
			rc = place(&l, node, d);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (rc) {
		*docs = NULL;
		*ndocs = 0;
	}
	return rc;
}

const struct npl_ynode *npl_ymap_get(const struct npl_ynode *map, const char *key)
{
	int i;

	if (!map || map->kind != NPL_YMAP)
		return NULL;
	/* the first byte first: the loaders look keys up in every shipped document at each start */
	for (i = 0; i < map->n; i++)
		if (map->kids[2 * i]->str[0] == key[0] && !strcmp(map->kids[2 * i]->str, key))
			return map->kids[2 * i + 1];
	return NULL;
}

int npl_ynull(const struct npl_ynode *n)
{
	const char *s = n->str;

	if (n->kind != NPL_YSCALAR || !n->plain)
		return 0;
	/* the first byte first: this runs on every value of every shipped recipe at each start */
	switch (s[0]) {
	case '\0':
		return 1;
	case '~':
		return !s[1];
	case 'n':
		return !strcmp(s, "null");
	case 'N':
		return !strcmp(s, "Null") || !strcmp(s, "NULL");
	default:
		return 0;
	}
}

int npl_ybool(const struct npl_ynode *n, int *v)
{
	if (n->kind != NPL_YSCALAR || !n->plain)
		return 0;
	if (n->str[0] == 't' && !strcmp(n->str, "true")) {
		*v = 1;
		return 1;
	}
	if (n->str[0] == 'f' && !strcmp(n->str, "false")) {
		*v = 0;
		return 1;
	}
	return 0;
}

const char *npl_ykind_name(const struct npl_ynode *n)
{
	switch (n->kind) {
	case NPL_YSEQ:
		return "a list";
	case NPL_YMAP:
		return "a mapping";
	default:
		return "a single value";
	}
}
