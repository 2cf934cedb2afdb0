/* output.c: output sets, bundles and their records, the check against the disk; see output.h
 * (the commit is in output_commit.c). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/fsio.h"
#include "npulaunch/output.h"
#include "npulaunch/sha256.h"
#include "output_internal.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"
/* a file of a bundle is at most this big: a bigger one is not one npulaunch wrote */
#define MAX_READ ((size_t)64 << 20)

char *npl_out_strdup(const char *s)
{
	char *p = npl_xstrdup(s);

	return p;
}

void *npl_out_grow(void *v, int *cap, int n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 16;
	v = npl_xrealloc(v, (size_t)*cap * size);
	return v;
}

char *npl_out_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = npl_xmalloc(n);

	snprintf(p, n, "%s%s%s", dir, *dir && dir[strlen(dir) - 1] != '/' ? "/" : "", name);
	return p;
}

char *npl_out_dir_of(const char *path)
{
	char *d = npl_out_strdup(path), *slash = strrchr(d, '/');

	if (!slash)
		strcpy(d, ".");
	else if (slash == d)
		d[1] = '\0';
	else
		*slash = '\0';
	return d;
}

const char *npl_out_base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A new file of the set with text as its text (in the set's arena). */
static void add_file(struct npl_outset *s, const char *path, char *text, size_t len, int mode)
{
	struct npl_outfile *f;

	s->v = npl_out_grow(s->v, &s->cap, s->n, sizeof(*s->v));
	f = &s->v[s->n++];
	f->path = npl_out_strdup(path);
	f->text = text;
	f->len = len;
	f->mode = mode;
	/* no manifest has recorded it yet */
	s->pending = npl_out_grow(s->pending, &s->cappending, s->npending, sizeof(*s->pending));
	s->pending[s->npending++] = s->n - 1;
}

void npl_out_add(struct npl_outset *s, const char *path, const char *text, size_t len, int mode)
{
	/* a render --all holds megabytes of text until it commits: its pages come from the
	   kernel in place, a few calls for all of them, not one page fault each */
	struct npl_arena *a = s->text_arena ? s->text_arena : &s->texts;

	a->mapped = 1;
	add_file(s, path, npl_arena_strndup(a, text, len), len, mode);
}

/* dir is a bundle whose manifest, named name, is in the set. */
static void add_bundle(struct npl_outset *s, const char *dir, const char *name)
{
	s->bundles = npl_out_grow(s->bundles, &s->capbundles, s->nbundles, sizeof(*s->bundles));
	s->bundles[s->nbundles].dir = npl_out_strdup(dir);
	s->bundles[s->nbundles++].manifest = npl_out_strdup(name);
}

void npl_out_own_dir(struct npl_outset *s, const char *dir)
{
	s->dirs = npl_out_grow(s->dirs, &s->capdirs, s->ndirs, sizeof(*s->dirs));
	s->dirs[s->ndirs++] = npl_out_strdup(dir);
}

void npl_out_run_output(struct npl_outset *s, const char *dir, const char *pattern)
{
	s->runs = npl_out_grow(s->runs, &s->capruns, s->nruns + 1, sizeof(*s->runs));
	s->runs[s->nruns++] = npl_out_strdup(dir);
	s->runs[s->nruns++] = npl_out_strdup(pattern);
}

/* "" and "." both name the current folder; a file's folder as a bundle's dir would name it. */
static int in_dir(const char *path, const char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	/* without a copy: render --all asks this for every file of every bundle */
	if (!slash)
		return !*dir || !strcmp(dir, ".");
	n = (size_t)(slash - path);
	if (!n)
		return !strcmp(dir, "/");
	return strlen(dir) == n && !memcmp(path, dir, n);
}

void npl_out_add_manifest(struct npl_outset *s, const char *dir, const char *name, const char *json)
{
	struct npl_buf b = NPL_BUF_INIT;
	const char *end = strrchr(json, '}');
	char hex[65], *path, *self;
	int i, k, kept = 0, any = 0;

	if (!end)
		end = json + strlen(json);
	/* the object's members, then ours: the text as cJSON formats it, not reformatted */
	while (end > json && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	npl_buf_add(&b, json, (size_t)(end - json));
	any = end > json && end[-1] != '{';
	npl_buf_puts(&b, any ? ",\n\t\"files\":\t{" : "\n\t\"files\":\t{");
	/* the files no manifest has recorded yet: a bundle's manifest takes its own out of the list,
	   so that render --all does not look at every file again for every bundle */
	for (k = 0; k < s->npending; k++) {
		i = s->pending[k];
		if (!in_dir(s->v[i].path, dir) || !strcmp(npl_out_base_of(s->v[i].path), name)) {
			s->pending[kept++] = i;
			continue;
		}
		npl_sha256_hex(s->v[i].text, s->v[i].len, hex);
		npl_buf_puts(&b, "\n\t\t");
		npl_buf_json_string(&b, npl_out_base_of(s->v[i].path));
		npl_buf_printf(&b, ":\t{\n\t\t\t\"sha256\":\t\"%s\"\n\t\t},", hex);
	}
	s->npending = kept;
	npl_buf_puts(&b, "\n\t\t");
	npl_buf_json_string(&b, name);
	npl_buf_puts(&b, ":\t{\n\t\t\t\"sha256\":\t\"" ZEROS "\"\n\t\t}\n\t}\n}\n");
	/* its own digest is taken with 64 zeros in its place, then put there */
	npl_sha256_hex(b.data, b.len, hex);
	self = b.data + b.len - strlen(ZEROS "\"\n\t\t}\n\t}\n}\n");
	memcpy(self, hex, 64);
	path = *dir ? npl_out_join(dir, name) : npl_out_strdup(name);
	npl_out_add(s, path, b.data, b.len, 0644);
	s->npending--;   /* the manifest records itself */
	free(path);
	npl_buf_release(&b);
	add_bundle(s, dir, name);
}

int npl_out_merge(struct npl_outset *to, struct npl_outset *from)
{
	int i, k, base = to->n;

	/* in turn, a manifest of from would have recorded to's unrecorded files in its folder too */
	for (i = 0; i < from->nbundles; i++)
		for (k = 0; k < to->npending; k++)
			if (in_dir(to->v[to->pending[k]].path, from->bundles[i].dir))
				return -1;
	for (i = 0; i < from->n; i++) {
		to->v = npl_out_grow(to->v, &to->cap, to->n, sizeof(*to->v));
		to->v[to->n++] = from->v[i];
	}
	for (k = 0; k < from->npending; k++) {
		to->pending = npl_out_grow(to->pending, &to->cappending, to->npending, sizeof(*to->pending));
		to->pending[to->npending++] = base + from->pending[k];
	}
	for (i = 0; i < from->nbundles; i++) {
		to->bundles = npl_out_grow(to->bundles, &to->capbundles, to->nbundles, sizeof(*to->bundles));
		to->bundles[to->nbundles++] = from->bundles[i];
	}
	for (i = 0; i < from->ndirs; i++) {
		to->dirs = npl_out_grow(to->dirs, &to->capdirs, to->ndirs, sizeof(*to->dirs));
		to->dirs[to->ndirs++] = from->dirs[i];
	}
	for (i = 0; i < from->nruns; i++) {
		to->runs = npl_out_grow(to->runs, &to->capruns, to->nruns, sizeof(*to->runs));
		to->runs[to->nruns++] = from->runs[i];
	}
	npl_arena_take(&to->texts, &from->texts);
	/* the strings are to's now: from keeps none */
	from->n = from->nbundles = from->ndirs = from->nruns = 0;
	npl_out_release(from);
	return 0;
}

int npl_out_namecmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the records: what a bundle holds ----------------------------------------------- */

int npl_out_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

char *npl_out_read_regular(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *p = NULL;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > MAX_READ)
		goto out;
	p = npl_xmalloc((size_t)st.st_size + 1);
	while (got <= (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != (size_t)st.st_size) {
		/* it changed under us, or failed: not something to trust */
		free(p);
		p = NULL;
		goto out;
	}
	p[got] = '\0';
	*len = got;
out:
	close(fd);
	return p;
}

/* 1 when the record holds name with the digest hex. */
static int recorded_hex(const cJSON *rec, const char *name, const char *hex)
{
	const char *want = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(rec, name), "sha256"));

	return want && !strcmp(want, hex);
}

#define FILES_KEY "\n\t\"files\":\t{"

int npl_out_read_record(const char *path, const char *name, cJSON **rec)
{
	size_t len, i, at = 0, n = strlen(FILES_KEY);
	char *text = npl_out_read_regular(path, &len), want[65], got[65];
	const char *files = NULL;
	cJSON *doc;
	int ok = NPL_REC_NONE;

	*rec = NULL;
	if (!text)
		return NPL_REC_NONE;
	/* What npulaunch wrote ends with the record, the record with the manifest's own digest (the
	 * last string). When the text is as written, only the record needs parsing. */
	for (i = len; i-- > 66 && !at;)
		if (text[i] == '"')
			at = i - 64;
	for (i = len > n ? len - n : 0; at && i > 0 && !files; i--)
		if (!memcmp(text + i, FILES_KEY, n))
			files = text + i + n - 1;
	if (files && text[at - 1] == '"') {
		memcpy(want, text + at, 64);
		want[64] = '\0';
		memcpy(text + at, ZEROS, 64);
		npl_sha256_hex(text, len, got);
		memcpy(text + at, want, 64);
		*rec = strcmp(got, want)
			   ? NULL
			   : cJSON_ParseWithLength(files, len - (size_t)(files - text));
		if (cJSON_IsObject(*rec) && recorded_hex(*rec, name, want))
			ok = NPL_REC_TRUSTED;
	}
	if (ok != NPL_REC_TRUSTED) {
		/* changed, or not a bundle's manifest: the names it records serve the messages */
		cJSON_Delete(*rec);
		*rec = NULL;
		const char *format;

		doc = cJSON_ParseWithLength(text, len);
		format = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "format"));
		if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(doc, "files"))) {
			*rec = cJSON_DetachItemFromObjectCaseSensitive(doc, "files");
			ok = NPL_REC_CHANGED;
		} else if (format && !strncmp(format, "npulaunch-", 10)) {
			ok = NPL_REC_OLD;
		}
		cJSON_Delete(doc);
	}
	free(text);
	return ok;
}

int npl_out_recorded(const cJSON *rec, const char *name, const char *text, size_t len)
{
	char got[65];

	if (!text)
		return 0;
	npl_sha256_hex(text, len, got);
	return recorded_hex(rec, name, got);
}

/* ---- the check ------------------------------------------------------------------------ */

static int owned(const struct npl_outset *s, const char *path)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].path, path))
			return 1;
	return 0;
}

static int owns_dir(const struct npl_outset *s, const char *path)
{
	int i;

	for (i = 0; i < s->ndirs; i++)
		if (!strcmp(s->dirs[i], path))
			return 1;
	return 0;
}

static int run_output(const struct npl_outset *s, const char *path)
{
	int i;

	/* the folder compared as a name, the pattern matched against the last part alone: a folder
	   named with [ or * stays itself */
	for (i = 0; i + 1 < s->nruns; i += 2)
		if (in_dir(path, s->runs[i]) && !fnmatch(s->runs[i + 1], npl_out_base_of(path), FNM_PERIOD))
			return 1;
	return 0;
}

static int is_below_owned(const struct npl_outset *s, const char *path)
{
	int i;
	size_t n = strlen(path);

	for (i = 0; i < s->n; i++)
		if (!strncmp(s->v[i].path, path, n) && s->v[i].path[n] == '/')
			return 1;
	return 0;
}

/* Report files below dir that the set does not write. */
static int check_extra(const struct npl_outset *s, const char *dir, FILE *fp)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	int n = 0, cap = 0, i, diffs = 0;

	if (!dp)
		return 0;
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = npl_out_grow(names, &cap, n, sizeof(*names));
		names[n++] = npl_out_join(dir, de->d_name);
	}
	closedir(dp);
	if (n)
		qsort(names, (size_t)n, sizeof(*names), npl_out_namecmp);
	for (i = 0; i < n; i++) {
		if (owned(s, names[i]) || run_output(s, names[i]))
			;
		else if (npl_is_dir(names[i]) &&
			 (owns_dir(s, names[i]) || is_below_owned(s, names[i])))
			diffs += check_extra(s, names[i], fp);
		else {
			fprintf(fp, "extra %s%s\n", names[i], npl_is_dir(names[i]) ? "/" : "");
			diffs++;
		}
		free(names[i]);
	}
	free(names);
	return diffs;
}

/* "stale" when the file on disk is what npulaunch wrote there (render updates it), "edited"
 * when it was changed since, or is not npulaunch's (render refuses it without --force). */
static const char *difference(const struct npl_outset *s, const struct npl_outfile *f,
			      const char *have, size_t len, cJSON **recs, int *states)
{
	const char *name = npl_out_base_of(f->path);
	int b;

	if (have && len == f->len && !memcmp(have, f->text, len))
		return "stale"; /* its mode */
	for (b = 0; b < s->nbundles; b++)
		if (in_dir(f->path, s->bundles[b].dir))
			break;
	if (b == s->nbundles)
		return "stale";
	if (!states[b]) {
		char *m = *s->bundles[b].dir
			      ? npl_out_join(s->bundles[b].dir, s->bundles[b].manifest)
			      : npl_out_strdup(s->bundles[b].manifest);

		states[b] = 1 + npl_out_read_record(m, s->bundles[b].manifest, &recs[b]);
		free(m);
	}
	if (states[b] != 1 + NPL_REC_TRUSTED)
		return "edited";
	return !strcmp(name, s->bundles[b].manifest) || npl_out_recorded(recs[b], name, have, len)
		   ? "stale"
		   : "edited";
}

int npl_out_check(const struct npl_outset *s, FILE *fp)
{
	cJSON **recs = npl_xcalloc((size_t)s->nbundles + 1, sizeof(*recs));
	int *states = npl_xcalloc((size_t)s->nbundles + 1, sizeof(*states));
	int i, diffs = 0;

	for (i = 0; i < s->n; i++) {
		const struct npl_outfile *f = &s->v[i];
		size_t len = 0;
		char *have;
		struct stat st;

		if (lstat(f->path, &st) != 0) {
			fprintf(fp, "missing %s\n", f->path);
			diffs++;
			continue;
		}
		have = npl_out_read_regular(f->path, &len);
		if (!have || len != f->len || memcmp(have, f->text, len) ||
		    (st.st_mode & 07777) != (unsigned)f->mode) {
			fprintf(fp, "%s %s\n", difference(s, f, have, len, recs, states), f->path);
			diffs++;
		}
		free(have);
	}
	for (i = 0; i < s->ndirs; i++)
		diffs += check_extra(s, s->dirs[i], fp);
	for (i = 0; i < s->nbundles; i++)
		cJSON_Delete(recs[i]);
	free(recs);
	free(states);
	return diffs;
}

void npl_out_release(struct npl_outset *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].path);
	for (i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	for (i = 0; i < s->nruns; i++)
		free(s->runs[i]);
	free(s->runs);
	for (i = 0; i < s->nbundles; i++) {
		free(s->bundles[i].dir);
		free(s->bundles[i].manifest);
	}
	free(s->v);
	free(s->dirs);
	free(s->bundles);
	free(s->pending);
	npl_arena_release(&s->texts);
	memset(s, 0, sizeof(*s));
}
