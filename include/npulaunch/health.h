/*
 * health.h: layer node. Readiness and status of SGLang servers over HTTP (libcurl).
 * A server is ready when GET /health answers 200 (and, with the generate
 * probe, a one-token POST /generate answers 200 with JSON). Every request has
 * a bounded timeout; npl_wait() polls with backoff until every endpoint is
 * ready or the time is up, and never runs past its deadline by more than
 * the last request's bound. Included by the wait, status and apply commands
 * and their tests.
 */
#ifndef NPL_HEALTH_H
#define NPL_HEALTH_H

#include <stddef.h>
#include <stdio.h>

enum npl_probe {
	NPL_PROBE_HEALTH,
	NPL_PROBE_GENERATE,
};

struct npl_probe_result {
	int up;               /* ready */
	long code;            /* the last HTTP status, 0 when there was none */
	double latency_ms;    /* of the health request */
	char error[256];      /* why it is not up: "HTTP 503", "connection refused", "timed out" */
	char *model;          /* served model (status), malloc'ed, or NULL */
};

/* Load and set up libcurl (once; later calls return 0); call before the others.
 * On failure, err says why (libcurl missing or broken). */
int npl_health_init(char *err, size_t errn);
/* 0 when url is one libcurl's parser takes (a scheme, a host, a port from 1 to 65535, a closed
 * [IPv6], no white space); else -1 with why set (libcurl's words). 0 without a check on a libcurl
 * older than 7.62, which has no URL API. After npl_health_init(). */
int npl_health_url_check(const char *url, char *why, size_t whyn);
/* Probe the server at base ("http://host:port"); each request bounded by timeout_ms. */
void npl_probe_once(const char *base, enum npl_probe kind, long timeout_ms, struct npl_probe_result *r);
/* The model a server serves: /get_model_info (model_path), else /model_info, else /v1/models (data[0].id). */
char *npl_served_model(const char *base, long timeout_ms);
/* What npl_wait() found of one server: ready after so many seconds, or the last error. */
struct npl_wait_result {
	int ready;
	double after_s;
	char error[256];
};

/* Wait until every base URL is ready or timeout_s passes; reports each as it turns ready
 * (and, at the end, each that never did) on out (NULL: silent), and in res[i] (may be NULL).
 * Returns how many never turned ready. */
int npl_wait(const char *const *bases, int n, enum npl_probe kind, double timeout_s, FILE *out,
	     struct npl_wait_result *res);
/* Free a result's strings. */
void npl_probe_release(struct npl_probe_result *r);

#endif
