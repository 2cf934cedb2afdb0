/*
 * health.c: HTTP readiness probes with libcurl; see health.h.
 *
 * libcurl is loaded with dlopen() the first time a command needs HTTP (wait,
 * status, apply --wait), not linked: its TLS, LDAP, SSH and Kerberos
 * dependencies cost more to relocate at start-up than everything else
 * npulaunch does for render, list or tune (see docs/performance.md). The
 * calls keep the prototypes of <curl/curl.h>; only the binding is late.
 */
#include <curl/curl.h>
#include <errno.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/buf.h"
#include "npulaunch/health.h"
#include "npulaunch/text.h"

#define REQUEST_MS 2000   /* no one request may take longer (_wait.sh.tmpl: the same) */

/* The libcurl ABI has kept this soname since 2006; Debian ships it as
 * libcurl4 (OpenSSL) and libcurl3-gnutls (GnuTLS). */
static const char *const curl_sonames[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};

static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	void (*easy_cleanup)(CURL *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
	CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
	void (*url_cleanup)(CURLU *);
	const char *(*url_strerror)(CURLUcode);
	void (*free)(void *);
} cu;

/* Bind one symbol; the memcpy is POSIX's way from dlsym()'s void * to a function pointer. */
static int bind_sym(void *lib, const char *name, void *fn, size_t size, char *err, size_t errn)
{
	void *p = dlsym(lib, name);

	if (!p) {
		snprintf(err, errn, "libcurl has no %s", name);
		return -1;
	}
	memcpy(fn, &p, size);
	return 0;
}

#define BIND(field, sym) bind_sym(lib, sym, &cu.field, sizeof(cu.field), err, errn)

int npl_health_init(char *err, size_t errn)
{
	static int done;
	void *lib = NULL;
	size_t i;

	if (done)
		return 0;
	for (i = 0; i < sizeof(curl_sonames) / sizeof(curl_sonames[0]) && !lib; i++)
		lib = dlopen(curl_sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err, errn, "cannot load libcurl (%s): install the libcurl4 package", curl_sonames[0]);
		return -1;
	}
	if (BIND(global_init, "curl_global_init") || BIND(easy_init, "curl_easy_init") ||
	    BIND(easy_setopt, "curl_easy_setopt") || BIND(easy_perform, "curl_easy_perform") ||
	    BIND(easy_getinfo, "curl_easy_getinfo") || BIND(easy_strerror, "curl_easy_strerror") ||
	    BIND(easy_cleanup, "curl_easy_cleanup") || BIND(slist_append, "curl_slist_append") ||
	    BIND(slist_free_all, "curl_slist_free_all")) {
		dlclose(lib);
		return -1;
	}
	/* the URL API (7.62; its messages 7.80): only the URL check uses it, which is skipped
	   without it; the requests work with any libcurl 4 */
	if (BIND(url, "curl_url") || BIND(url_set, "curl_url_set") || BIND(url_get, "curl_url_get") ||
	    BIND(url_cleanup, "curl_url_cleanup") || BIND(free, "curl_free"))
		cu.url = NULL;
	if (BIND(url_strerror, "curl_url_strerror"))
		cu.url_strerror = NULL;
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errn, "cannot start libcurl");
		return -1;
	}
	done = 1;   /* the library stays loaded until exit */
	return 0;
}

int npl_health_url_check(const char *url, char *why, size_t whyn)
{
	CURLU *u;
	char *port = NULL;
	CURLUcode rc;
	int bad = 0;

	if (!cu.url)
		return 0;   /* a libcurl older than 7.62: the requests say what is wrong, later */
	if (!(u = cu.url()))
		npl_oom();
	/* libcurl's own parser, as the requests use it: a scheme, a host, a port of 0 to 65535, a
	   closed [IPv6], no white space */
	rc = cu.url_set(u, CURLUPART_URL, url, 0);
	if (rc == CURLUE_OK && cu.url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
	    !strcmp(port, "0")) {
		snprintf(why, whyn, "port 0 is no server's");
		bad = 1;
	} else if (rc != CURLUE_OK) {
		if (cu.url_strerror)
			snprintf(why, whyn, "%s", cu.url_strerror(rc));
		else
			snprintf(why, whyn, "libcurl's URL parser refuses it (error %d)", (int)rc);
		bad = 1;
	}
	cu.free(port);
	cu.url_cleanup(u);
	return bad ? -1 : 0;
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
	struct npl_buf *b = arg;

	/* bodies we read are small; a huge one is cut, not kept */
	if (b->len < 1 << 20)
		npl_buf_add(b, p, size * n);
	return size * n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One request: its status (0 when none) and body; err says why it failed. */
static long request(const char *url, const char *post, long timeout_ms, struct npl_buf *body,
		    char *err, size_t errn, double *ms)
{
	CURL *h = cu.easy_init();
	struct curl_slist *hdr = NULL;
	char ebuf[CURL_ERROR_SIZE] = "";
	long code = 0;
	double t0 = now_s();
	CURLcode rc;

	if (!h) {
		snprintf(err, errn, "cannot start a request");
		return 0;
	}
	/* a server's endpoint only: a URL read from a file (a manifest) may name any scheme libcurl
	   speaks, and gopher:// or telnet:// would send raw bytes to whatever listens there */
	if (strncasecmp(url, "http://", 7) && strncasecmp(url, "https://", 8)) {
		snprintf(err, errn, "not an http:// or https:// URL");
		cu.easy_cleanup(h);
		return 0;
	}
	cu.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	cu.easy_setopt(h, CURLOPT_URL, url);
	cu.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1);
	cu.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1);
	cu.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(h, CURLOPT_NOPROXY, "*");  /* the servers are ours: never through a proxy */
	cu.easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	cu.easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	cu.easy_setopt(h, CURLOPT_WRITEDATA, body);
	cu.easy_setopt(h, CURLOPT_USERAGENT, "npulaunch");
	if (post) {
		hdr = cu.slist_append(hdr, "Content-Type: application/json");
		cu.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		cu.easy_setopt(h, CURLOPT_POSTFIELDS, post);
	}
	rc = cu.easy_perform(h);
	if (ms)
		*ms = (now_s() - t0) * 1000;
	if (rc == CURLE_OK) {
		cu.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			snprintf(err, errn, "HTTP %ld", code);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(err, errn, "no answer within %.1fs", (double)timeout_ms / 1000);
	} else if (rc == CURLE_COULDNT_CONNECT) {
		/* what the system said: refused, no route, or no answer to the connection */
		long os = 0;

		cu.easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
		if (os == EHOSTUNREACH || os == ENETUNREACH)
			snprintf(err, errn, "no route to the host");
		else if (os == ETIMEDOUT)
			snprintf(err, errn, "no answer to the connection within %.1fs", (double)timeout_ms / 1000);
		else if (os == ECONNREFUSED || os == 0)
			snprintf(err, errn, "connection refused");
		else
			snprintf(err, errn, "cannot connect: %s", strerror((int)os));
	} else if (rc == CURLE_COULDNT_RESOLVE_HOST) {
		snprintf(err, errn, "cannot resolve the host name");
	} else {
		snprintf(err, errn, "%s", *ebuf ? ebuf : cu.easy_strerror(rc));
	}
	cu.slist_free_all(hdr);
	cu.easy_cleanup(h);
	return code;
}

void npl_probe_once(const char *base, enum npl_probe kind, long timeout_ms, struct npl_probe_result *r)
{
	struct npl_buf url = NPL_BUF_INIT, body = NPL_BUF_INIT;

	memset(r, 0, sizeof(*r));
	npl_buf_printf(&url, "%s/health", base);
	r->code = request(npl_buf_str(&url), NULL, timeout_ms, &body, r->error, sizeof(r->error),
			  &r->latency_ms);
	r->up = r->code == 200;
	if (r->up && kind == NPL_PROBE_GENERATE) {
		cJSON *j;

		npl_buf_reset(&url);
		npl_buf_reset(&body);
		npl_buf_printf(&url, "%s/generate", base);
		r->code = request(npl_buf_str(&url),
				  "{\"text\": \"ping\", \"sampling_params\": {\"max_new_tokens\": 1, \"temperature\": 0}}",
				  timeout_ms, &body, r->error, sizeof(r->error), NULL);
		j = r->code == 200 ? cJSON_Parse(npl_buf_str(&body)) : NULL;
		r->up = j != NULL;
		if (r->code == 200 && !j)
			snprintf(r->error, sizeof(r->error), "/generate answered, but not with JSON");
		cJSON_Delete(j);
	}
	npl_buf_release(&url);
	npl_buf_release(&body);
}

char *npl_served_model(const char *base, long timeout_ms)
{
	static const char *const paths[] = {"/get_model_info", "/model_info", "/v1/models"};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct npl_buf url = NPL_BUF_INIT, body = NPL_BUF_INIT;
		cJSON *j = NULL;
		const cJSON *v = NULL;
		char *model = NULL;

		npl_buf_printf(&url, "%s%s", base, paths[i]);
		if (request(npl_buf_str(&url), NULL, timeout_ms, &body, err, sizeof(err), NULL) == 200)
			j = cJSON_Parse(npl_buf_str(&body));
		if (j && i < 2)
			v = cJSON_GetObjectItemCaseSensitive(j, "model_path");
		else if (j)
			v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "data"), 0), "id");
		if (cJSON_IsString(v))
			model = npl_xstrdup(v->valuestring);
		cJSON_Delete(j);
		npl_buf_release(&url);
		npl_buf_release(&body);
		if (model)
			return model;
	}
	return NULL;
}

/* A line of npl_wait()'s report: the URLs and the errors are text from outside, escaped for
 * the terminal. */
static void report(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(FILE *out, const char *fmt, ...)
{
	struct npl_buf b = NPL_BUF_INIT;
	va_list ap;

	if (!out)
		return;
	va_start(ap, fmt);
	npl_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	npl_print_text(out, npl_buf_str(&b));
	npl_buf_release(&b);
	fflush(out);
}

int npl_wait(const char *const *bases, int n, enum npl_probe kind, double timeout_s, FILE *out,
	     struct npl_wait_result *res)
{
	struct npl_probe_result *last = npl_xcalloc((size_t)n + 1, sizeof(*last));
	int *ready = npl_xcalloc((size_t)n + 1, sizeof(*ready));
	double start = now_s(), deadline = start + timeout_s, delay = 0.1;
	int pending = n, i;
	char shown[1024];

	for (;;) {
		for (i = 0; i < n; i++) {
			double left = deadline - now_s();
			long ms = left * 1000 < REQUEST_MS ? (long)(left * 1000) : REQUEST_MS;

			if (ready[i])
				continue;
			npl_probe_release(&last[i]);
			npl_probe_once(bases[i], kind, ms > 50 ? ms : 50, &last[i]);
			if (last[i].up) {
				ready[i] = 1;
				pending--;
				if (res) {
					res[i].ready = 1;
					res[i].after_s = now_s() - start;
				}
				report(out, "ready      %s  (after %.1fs)\n", npl_url_redacted(bases[i], shown, sizeof(shown)),
				       now_s() - start);
			}
		}
		if (!pending || now_s() >= deadline)
			break;
		/* back off, but never past the deadline */
		{
			double left = deadline - now_s(), d = delay < left ? delay : left;
			struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};

			nanosleep(&ts, NULL);
			delay = delay * 2 < 2 ? delay * 2 : 2;   /* up to 2s apart, as _wait.sh.tmpl */
		}
		if (now_s() >= deadline) {
			/* one last look at those still pending */
			deadline = now_s();
		}
	}
	for (i = 0; i < n; i++)
		if (!ready[i]) {
			if (res)
				snprintf(res[i].error, sizeof(res[i].error), "%s", last[i].error[0] ? last[i].error : "no answer");
			report(out, "not ready  %s  (%s)\n", npl_url_redacted(bases[i], shown, sizeof(shown)),
			       last[i].error[0] ? last[i].error : "no answer");
		}
	for (i = 0; i < n; i++)
		npl_probe_release(&last[i]);
	free(last);
	free(ready);
	return pending;
}

void npl_probe_release(struct npl_probe_result *r)
{
	free(r->model);
	r->model = NULL;
}
