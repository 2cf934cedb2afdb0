/* journal.c: the tuning journal: its format (each file's previous bytes in base64), parsing and
 * validating a whole one, and finding, reading and writing it beneath the root; see tune.h. */
#define _GNU_SOURCE /* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base64.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/fsio.h"
#include "npulaunch/plan.h"
#include "npulaunch/text.h"
#include "npulaunch/tune.h"
#include "tune_internal.h"

#define MAX_JOURNAL (64 << 20)
#define JOURNAL_V1 "npulaunch-tune-journal/1"

char *npl_tune_journal_path(const char *root, const char *journal)
{
	const char *r = root && strcmp(root, "/") ? root : "";

	if (journal)
		return npl_xstrdup(journal);
	return npl_tune_path_of(r, "%s", NPL_TUNE_JOURNAL);
}

/* Base64 through Nettle. */
static void b64_encode(struct npl_buf *b, const unsigned char *s, size_t n)
{
	size_t m = BASE64_ENCODE_RAW_LENGTH(n);
	char *q = npl_xmalloc(m ? m : 1);

	base64_encode_raw(q, n, s);
	npl_buf_add(b, q, m);
	free(q);
}

/* Strict base64 (padded, canonical) into a malloc'ed buffer; NULL when it is not. Nettle's
 * decoder is lenient (it skips blanks, takes unpadded input and stray low bits), so the result
 * must encode back to exactly s. */
static char *b64_decode(const char *s, size_t *len)
{
	size_t n = strlen(s), o = BASE64_DECODE_LENGTH(n);
	struct base64_decode_ctx ctx;
	struct npl_buf back = NPL_BUF_INIT;
	char *out = npl_xmalloc(o + 1);
	int ok;

	base64_decode_init(&ctx);
	ok = base64_decode_update(&ctx, &o, (uint8_t *)out, n, s) && base64_decode_final(&ctx);
	if (ok) {
		b64_encode(&back, (const unsigned char *)out, o);
		ok = back.len == n && !memcmp(back.data, s, n);
		npl_buf_release(&back);
	}
	if (!ok) {
		free(out);
		return NULL;
	}
	out[o] = '\0';
	*len = o;
	return out;
}

void npl_tune_journal_release(struct npl_tune_journal *j)
{
	int i;

	for (i = 0; i < j->n; i++) {
		free(j->v[i].name);
		free(j->v[i].path);
		free(j->v[i].data);
	}
	for (i = 0; i < j->ns; i++) {
		free(j->s[i].unit);
		free(j->s[i].state);
	}
	free(j->s);
	free(j->v);
	free(j->root);
	memset(j, 0, sizeof(*j));
}

static int by_path(const void *a, const void *b)
{
	const struct npl_tune_entry *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* 1 when a name is printable text of a reasonable length */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 128)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

#define MAX_JOURNAL_ERRORS 10

/* A service entry ({name, unit, state}: a unit tuning stopped, active before): NULL when it is
 * one, with the unit kept in j, else what is wrong with it. */
static const char *service_entry(struct npl_tune_journal *j, const cJSON *e)
{
	const char *unit = npl_json_str(e, "unit"), *state = npl_json_str(e, "state"), *name = npl_json_str(e, "name");
	const cJSON *k;

	cJSON_ArrayForEach(k, e)
		if (strcmp(k->string, "name") && strcmp(k->string, "unit") && strcmp(k->string, "state"))
			return "an unknown key";
	if (!npl_tune_service_known(unit))
		return "a unit that is not one tuning stops (only " NPL_TUNE_IRQBALANCE ")";
	if (!name || strcmp(name, unit))
		return "a name that is not its unit";
	if (!state || strcmp(state, "active"))
		return "a state that is not \"active\" (tuning stops only a service that runs)";
	for (int i = 0; i < j->ns; i++)
		if (!strcmp(j->s[i].unit, unit))
			return "a unit that is there twice";
	j->s[j->ns].unit = npl_xstrdup(unit);
	j->s[j->ns].state = npl_xstrdup(state);
	j->ns++;
	return NULL;
}

/* A file entry ({name, path, base64}, /1: {name, path, contents} with the root in the path):
 * NULL when it is one, kept in j, else what is wrong with it. */
static const char *file_entry(struct npl_tune_journal *j, const cJSON *e, int v1)
{
	const char *name = npl_json_str(e, "name"), *path = npl_json_str(e, "path");
	const char *contents = npl_json_str(e, v1 ? "contents" : "base64");
	const char *problem = NULL;
	const cJSON *k;
	char *data = NULL, *host = NULL;
	size_t dlen = 0;

	if (!cJSON_IsObject(e))
		return "not an object";
	cJSON_ArrayForEach(k, e)
		if (strcmp(k->string, "name") && strcmp(k->string, "path") &&
		    strcmp(k->string, v1 ? "contents" : "base64"))
			return "an unknown key";
	if (!name || !name_ok(name))
		return "no name (a string)";
	if (!path)
		return "no path (a string)";
	if (!contents)
		return v1 ? "no contents (a string)" : "no base64 contents (a string)";
	if (v1) {
		/* /1 journals name the file with the root included */
		size_t rl = strcmp(j->root, "/") ? strlen(j->root) : 0;

		if (strncmp(path, j->root, rl) || path[rl] != '/')
			return "a path outside the journal's root";
		path += rl;
	}
	if (!npl_tune_path_allowed(path))
		return "a path that is not a tuning file (only /proc/sys/..., /proc/irq/N/smp_affinity_list, "
		       "/sys/devices/system/cpu/... and /sys/kernel/debug/sched/...)";
	if (v1) {
		data = npl_xstrdup(contents);
		dlen = strlen(contents);
	} else if (!(data = b64_decode(contents, &dlen))) {
		return "contents that are not base64";
	}
	if (dlen > MAX_FILE)
		problem = "contents larger than 1 MiB";
	if (problem) {
		free(data);
		return problem;
	}
	host = npl_xstrdup(path);
	j->v[j->n].name = npl_xstrdup(name);
	j->v[j->n].path = host;
	j->v[j->n].data = data;
	j->v[j->n].len = dlen;
	j->n++;
	return NULL;
}

/* A file twice: which value is the original? The number of such entries, each reported. */
static int twice(const struct npl_tune_journal *j, const struct npl_loc *at, struct npl_diag *d)
{
	struct npl_tune_entry **s;
	int i, bad = 0;

	if (j->n < 2)
		return 0;
	s = npl_xmalloc((size_t)j->n * sizeof(*s));
	for (i = 0; i < j->n; i++)
		s[i] = &j->v[i];
	qsort(s, (size_t)j->n, sizeof(*s), by_path);
	for (i = 1; i < j->n; i++)
		if (!strcmp(s[i]->path, s[i - 1]->path) && bad++ < MAX_JOURNAL_ERRORS)
			npl_error(d, at, "entry %d (%s): the path %s is also entry %d", (int)(s[i] - j->v) + 1, s[i]->name,
				  s[i]->path, (int)(s[i - 1] - j->v) + 1);
	free(s);
	return bad;
}

int npl_tune_journal_parse(struct npl_tune_journal *j, const char *file, const char *text, size_t len,
			   const char *root, struct npl_diag *d)
{
	struct npl_loc at = {file, 0, 0};
	const cJSON *e, *k, *entries;
	const char *fmt, *jroot;
	cJSON *o;
	int v1, i = 0, bad = 0, cap;

	memset(j, 0, sizeof(*j));
	if (npl_json_nul_escape(text, len))
		return npl_error(d, &at, "the tuning journal holds \\u0000 (a NUL, which would cut a path short): "
				 "not written by npulaunch; nothing was changed");
	o = memchr(text, '\0', len) ? NULL : cJSON_ParseWithLength(text, len);
	fmt = o ? npl_json_str(o, "format") : NULL;
	if (!cJSON_IsObject(o) || !fmt || (strcmp(fmt, NPL_TUNE_JOURNAL_FORMAT) && strcmp(fmt, JOURNAL_V1))) {
		cJSON_Delete(o);
		return npl_error(d, &at, "not a tuning journal (format %s)", NPL_TUNE_JOURNAL_FORMAT);
	}
	v1 = !strcmp(fmt, JOURNAL_V1);
	cJSON_ArrayForEach(k, o)
		if (strcmp(k->string, "format") && strcmp(k->string, "root") && strcmp(k->string, "entries") &&
		    bad++ < MAX_JOURNAL_ERRORS)
			npl_error(d, &at, "the tuning journal has an unknown key '%s'", k->string);
	jroot = npl_json_str(o, "root");
	entries = cJSON_GetObjectItemCaseSensitive(o, "entries");
	if (!jroot || jroot[0] != '/' || (strlen(jroot) > 1 && jroot[strlen(jroot) - 1] == '/')) {
		bad++;
		npl_error(d, &at, "the tuning journal names no root (an absolute path)");
	} else if (root) {
		char *want = npl_tune_norm_root(root);

		if (strcmp(*want ? want : "/", jroot)) {
			bad++;
			npl_error(d, &at, "the tuning journal is for the root %s, not %s: give --root %s", jroot,
				  *want ? want : "/", jroot);
		}
		free(want);
	}
	if (!cJSON_IsArray(entries)) {
		bad++;
		npl_error(d, &at, "the tuning journal has no list of entries");
	}
	cap = cJSON_GetArraySize(entries);
	j->v = npl_xcalloc((size_t)cap + 1, sizeof(*j->v));
	j->s = npl_xcalloc((size_t)cap + 1, sizeof(*j->s));
	j->root = npl_xstrdup(jroot ? jroot : "/");
	if (!cJSON_IsArray(entries))
		entries = NULL;
	cJSON_ArrayForEach(e, entries) {
		const char *name = npl_json_str(e, "name"), *problem;

		i++;
		if (!v1 && cJSON_IsObject(e) && cJSON_GetObjectItemCaseSensitive(e, "unit")) {
			if ((problem = service_entry(j, e)) && bad++ < MAX_JOURNAL_ERRORS)
				npl_error(d, &at, "entry %d (a service): %s", i, problem);
			continue;
		}
		if ((problem = file_entry(j, e, v1)) && bad++ < MAX_JOURNAL_ERRORS)
			npl_error(d, &at, "entry %d%s%s%s: %s", i, name ? " (" : "", name ? name : "",
				  name ? ")" : "", problem);
	}
	if (!bad)
		bad = twice(j, &at, d);
	if (bad > MAX_JOURNAL_ERRORS)
		npl_error(d, &at, "%d more problems in the tuning journal", bad - MAX_JOURNAL_ERRORS);
	cJSON_Delete(o);
	if (bad) {
		npl_tune_journal_release(j);
		return -1;
	}
	return 0;
}

/* The journal's folder (created when create is set) and its file name there; -1 with errno. The
 * default journal is reached from the root's descriptor without following a link. */
int npl_tune_journal_dir(struct npl_tune *t, const char *journal, int create, const char **name,
			 int *nofollow, struct npl_diag *d)
{
	static const char *const comps[] = {"run", "npulaunch"};
	int dfd, i;

	if (journal) {
		const char *slash = strrchr(journal, '/');
		char *dir = slash ? npl_xstrndup(journal, slash == journal ? 1 : (size_t)(slash - journal))
				  : npl_xstrdup(".");
		*name = slash ? slash + 1 : journal;
		*nofollow = 0;
		if (create && strcmp(dir, ".") && npl_mkdirs(dir, 0755, d)) {
			free(dir);
			errno = 0;
			return -1;
		}
		dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		free(dir);
		return dfd;
	}
	*name = strrchr(NPL_TUNE_JOURNAL, '/') + 1;
	*nofollow = O_NOFOLLOW;
	dfd = t->rootfd;
	for (i = 0; i < 2; i++) {
		int fd, e;

		if (create && mkdirat(dfd, comps[i], 0755) != 0 && errno != EEXIST) {
			e = errno;
			if (dfd != t->rootfd)
				close(dfd);
			errno = e;
			return -1;
		}
		fd = openat(dfd, comps[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		if (dfd != t->rootfd)
			close(dfd);
		if (fd < 0) {
			errno = e;
			return -1;
		}
		dfd = fd;
	}
	return dfd;
}

/* Read and validate the journal: 1 when there is none, 0 with *j filled, -1 reported. */
int npl_tune_journal_load(struct npl_tune *t, int dfd, const char *name, int nofollow, const char *jpath,
			  struct npl_tune_journal *j, struct npl_diag *d)
{
	struct npl_loc at = {jpath, 0, 0};
	struct stat st;
	size_t len;
	char *text;
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | nofollow), rc, e;

	memset(j, 0, sizeof(*j));
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0)
		return npl_error(d, &at, "cannot read the tuning journal: %s",
				 errno == ELOOP ? "it is a symbolic link: refused" : strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return npl_error(d, &at, "cannot use the tuning journal: not a regular file");
	}
	text = npl_tune_read_all(fd, st.st_size, MAX_JOURNAL, &len);
	e = errno;
	close(fd);
	if (!text)
		return npl_error(d, &at, "cannot read the tuning journal: %s", strerror(e));
	rc = npl_tune_journal_parse(j, jpath, text, len, *t->root ? t->root : "/", d);
	free(text);
	return rc;
}

/* Write text as the journal, through a new file renamed into place. */
int npl_tune_journal_store(int dfd, const char *name, const char *text, size_t len, const char *jpath,
			   struct npl_diag *d)
{
	struct npl_loc at = {jpath, 0, 0};
	char tmp[300];
	int fd = -1, i, e;

	for (i = 0; i < 100 && fd < 0; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(tmp, sizeof(tmp), ".%.200s.%ld.%lx", name, (long)getpid(), (unsigned long)ts.tv_nsec + (unsigned long)i);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(errno));
	if (npl_tune_write_all(fd, text, len) || fsync(fd)) {
		e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(e));
	}
	if (close(fd) || renameat(dfd, tmp, dfd, name)) {
		e = errno;
		unlinkat(dfd, tmp, 0);
		return npl_error(d, &at, "cannot write the tuning journal: %s", strerror(e));
	}
	return 0;
}

void npl_tune_journal_service(struct npl_buf *j, int first, const char *unit, const char *state)
{
	npl_buf_puts(j, first ? "\n\t\t{\"name\": " : ",\n\t\t{\"name\": ");
	npl_buf_json_string(j, unit);
	npl_buf_puts(j, ", \"unit\": ");
	npl_buf_json_string(j, unit);
	npl_buf_puts(j, ", \"state\": ");
	npl_buf_json_string(j, state);
	npl_buf_puts(j, "}");
}

/* One entry of the journal's text: the file's bytes in base64. */
void npl_tune_journal_entry(struct npl_buf *j, int first, const char *name, const char *path,
			    const char *data, size_t len)
{
	/* one entry a line: the scripts read and write the same layout */
	npl_buf_puts(j, first ? "\n\t\t{\"name\": " : ",\n\t\t{\"name\": ");
	npl_buf_json_string(j, name);
	npl_buf_puts(j, ", \"path\": ");
	npl_buf_json_string(j, path);
	npl_buf_puts(j, ", \"base64\": \"");
	b64_encode(j, (const unsigned char *)data, len);
	npl_buf_puts(j, "\"}");
}
