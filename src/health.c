/* health.c: HTTP readiness probes with libcurl; see health.h. */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"
#include "npulaunch/health.h"

#define REQUEST_MS 2000   /* no one request may take longer */

int npl_health_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
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
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	char ebuf[CURL_ERROR_SIZE] = "";
	long code = 0;
	double t0 = now_s();
	CURLcode rc;

	if (!h) {
		snprintf(err, errn, "cannot start a request");
		return 0;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");  /* the servers are ours: never through a proxy */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "npulaunch");
	if (post) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
	}
	rc = curl_easy_perform(h);
	if (ms)
		*ms = (now_s() - t0) * 1000;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			snprintf(err, errn, "HTTP %ld", code);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(err, errn, "no answer within %.1fs", (double)timeout_ms / 1000);
	} else if (rc == CURLE_COULDNT_CONNECT) {
		snprintf(err, errn, "connection refused");
	} else {
		snprintf(err, errn, "%s", *ebuf ? ebuf : curl_easy_strerror(rc));
	}
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
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
			model = strdup(v->valuestring);
		cJSON_Delete(j);
		npl_buf_release(&url);
		npl_buf_release(&body);
		if (model)
			return model;
	}
	return NULL;
}

int npl_wait(const char *const *bases, int n, enum npl_probe kind, double timeout_s, FILE *out)
{
	struct npl_probe_result *last = calloc((size_t)n + 1, sizeof(*last));
	int *ready = calloc((size_t)n + 1, sizeof(*ready));
	double start = now_s(), deadline = start + timeout_s, delay = 0.1;
	int pending = n, i;

	if (!last || !ready)
		abort();
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
				fprintf(out, "ready      %s  (after %.1fs)\n", bases[i], now_s() - start);
				fflush(out);
			}
		}
		if (!pending || now_s() >= deadline)
			break;
		/* back off, but never past the deadline */
		{
			double left = deadline - now_s(), d = delay < left ? delay : left;
			struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};

			nanosleep(&ts, NULL);
			if (delay < 2)
				delay *= 2;
		}
		if (now_s() >= deadline) {
			/* one last look at those still pending */
			deadline = now_s();
		}
	}
	for (i = 0; i < n; i++)
		if (!ready[i])
			fprintf(out, "not ready  %s  (%s)\n", bases[i], last[i].error[0] ? last[i].error : "no answer");
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
