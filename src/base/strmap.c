/* strmap.c: strings with an int each, in open addressing; see strmap.h. */
#include <string.h>

#include "npulaunch/strmap.h"

static size_t hash(const char *s, size_t len)
{
	size_t i;
	unsigned h = 2166136261u;   /* FNV-1a */

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static struct npl_strmap_slot *find(const struct npl_strmap *m, const char *key, size_t len)
{
	size_t i = hash(key, len) & (m->cap - 1);

	while (m->slot[i].key && (m->slot[i].len != len || memcmp(m->slot[i].key, key, len)))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

int npl_strmap_get(const struct npl_strmap *m, const char *key, size_t len)
{
	const struct npl_strmap_slot *s;

	if (!m->cap)
		return -1;
	s = find(m, key, len);
	return s->key ? s->val : -1;
}

int npl_strmap_add(struct npl_strmap *m, struct npl_arena *a, const char *key, size_t len, int val)
{
	struct npl_strmap_slot *s;

	if ((m->n + 1) * 2 > m->cap) {
		struct npl_strmap old = *m;
		size_t i;

		m->cap = m->cap ? m->cap * 2 : 16;
		m->slot = npl_arena_calloc(a, m->cap, sizeof(*m->slot));
		for (i = 0; i < old.cap; i++)
			if (old.slot[i].key)
				*find(m, old.slot[i].key, old.slot[i].len) = old.slot[i];
	}
	s = find(m, key, len);
	if (s->key)
		return s->val;
	*s = (struct npl_strmap_slot){key, len, val};
	m->n++;
	return -1;
}

void npl_strmap_clear(struct npl_strmap *m)
{
	if (m->cap)
		memset(m->slot, 0, m->cap * sizeof(*m->slot));
	m->n = 0;
}
