/* cmd_wait.c: `npulaunch wait URL...`: until every server answers, or the time is up. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "npulaunch/arena.h"
#include "npulaunch/cli.h"
#include "npulaunch/health.h"
#include "npulaunch/text.h"

static void help(void)
{
	puts("usage: npulaunch wait URL... [--timeout S] [--probe health|generate] [--json]\n"
	     "\n"
	     "Poll each SGLang server (http://HOST:PORT) until all are ready or the time is up:\n"
	     "ready means GET /health answers 200 and, with --probe generate, a one-token\n"
	     "POST /generate answers 200 with JSON. Each request is bounded (2s) and retries back\n"
	     "off up to 2s apart. One line per server as it turns ready; at the end a line for\n"
	     "each that never did, and exit 1.\n"
	     "\n"
	     "Options:\n"
	     "  --timeout S    give up after S seconds, 0 to 604800, decimal like 1.5\n"
	     "                 (default: $NPULAUNCH_WAIT_TIMEOUT, else 1800)\n"
	     "  --probe P      health (default) or generate\n"
	     "  --json         {ready, timeout_s, probe, servers: [{url, ready, after_s, error}]}\n"
	     "  -h, --help     this help\n"
	     "\n"
	     "Examples:\n"
	     "  npulaunch wait http://10.0.0.11:8000 http://10.0.0.12:8001 --timeout 1200\n"
	     "  npulaunch wait http://127.0.0.1:6688 --probe generate");
}

/* The servers' URLs (the n arguments at args), a trailing slash dropped: "http://h:p/" and
 * "http://h:p" are the same server. NULL after a usage error (*rc). */
static const char **read_urls(struct npl_cli *cli, char **args, int n, int *rc)
{
	const char **urls;
	int i;

	if (n < 1) {
		*rc = npl_cli_usage_error("wait", "which servers? give their URLs (http://HOST:PORT)");
		return NULL;
	}
	urls = npl_xcalloc((size_t)n, sizeof(*urls));
	for (i = 0; i < n; i++) {
		const char *u = args[i];
		size_t len = strlen(u);

		if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
			char shown[512];

			free(urls);
			*rc = npl_cli_usage_error("wait", "'%s' is not an http:// URL", npl_url_redacted(u, shown, sizeof(shown)));
			return NULL;
		}
		while (len > 8 && u[len - 1] == '/')
			len--;
		urls[i] = npl_arena_strndup(&cli->arena, u, len);
	}
	return urls;
}

/* wait --json: {ready, timeout_s, probe, servers: [{url, ready, after_s, error}]}, the URLs
 * redacted. */
static void print_json(const char **urls, int n, const struct npl_wait_result *res, int left, double timeout,
		       enum npl_probe kind)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_CreateArray();
	char ub[1024], *text;
	int i;

	cJSON_AddBoolToObject(o, "ready", left == 0);
	cJSON_AddNumberToObject(o, "timeout_s", timeout);
	cJSON_AddStringToObject(o, "probe", kind == NPL_PROBE_HEALTH ? "health" : "generate");
	for (i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "url", npl_url_redacted(urls[i], ub, sizeof(ub)));
		cJSON_AddBoolToObject(e, "ready", res[i].ready);
		if (res[i].ready) {
			cJSON_AddNumberToObject(e, "after_s", res[i].after_s);
			cJSON_AddNullToObject(e, "error");
		} else {
			cJSON_AddNullToObject(e, "after_s");
			cJSON_AddStringToObject(e, "error", res[i].error);
		}
		cJSON_AddItemToArray(a, e);
	}
	cJSON_AddItemToObject(o, "servers", a);
	text = cJSON_Print(o);
	npl_cli_puts_json(text);
	cJSON_free(text);
	cJSON_Delete(o);
}

int npl_cmd_wait(int argc, char **argv, struct npl_cli *cli)
{
	static const struct option opts[] = {
		{"timeout", required_argument, NULL, 't'},
		{"probe", required_argument, NULL, 'p'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	double timeout = 0;
	enum npl_probe kind = NPL_PROBE_HEALTH;
	const char **urls;
	char herr[256];
	int c, n, left, rc, has_timeout = 0, json = 0;
	struct npl_wait_result *res;

	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = npl_cli_number("wait", "--timeout", optarg, &npl_cli_wait_seconds, &timeout)))
				return rc;
			has_timeout = 1;
			break;
		case 'p':
			if (!strcmp(optarg, "health"))
				kind = NPL_PROBE_HEALTH;
			else if (!strcmp(optarg, "generate"))
				kind = NPL_PROBE_GENERATE;
			else
				return npl_cli_usage_error("wait", "--probe '%s': health or generate", optarg);
			break;
		case 'j': json = 1; break;
		case 'h': help(); return NPL_EXIT_OK;
		case ':': return npl_cli_usage_error("wait", "option '%s' needs a value", argv[optind - 1]);
		default: return npl_cli_usage_error("wait", "unknown option '%s'", argv[optind - 1]);
		}
	}
	/* the flag wins over the variable, which is then not read */
	if (!has_timeout &&
	    (rc = npl_cli_env_number("wait", "NPULAUNCH_WAIT_TIMEOUT", &npl_cli_wait_seconds, 1800, &timeout)))
		return rc;
	n = argc - optind;
	if (!(urls = read_urls(cli, argv + optind, n, &rc)))
		return rc;
	if (npl_health_init(herr, sizeof(herr))) {
		free(urls);
		fprintf(stderr, "npulaunch: wait: %s\n", herr);
		return NPL_EXIT_FAIL;
	}
	/* a URL no request can use is refused now, not polled until the time is up */
	for (int i = 0; i < n; i++)
		if (npl_health_url_check(urls[i], herr, sizeof(herr))) {
			char shown[512];

			rc = npl_cli_usage_error("wait", "'%s' is not a URL of a server: %s",
						 npl_url_redacted(urls[i], shown, sizeof(shown)), herr);
			free(urls);
			return rc;
		}
	res = npl_xcalloc((size_t)n, sizeof(*res));
	left = npl_wait(urls, n, kind, timeout, json ? NULL : stdout, res);
	if (json)
		print_json(urls, n, res, left, timeout, kind);
	free(res);
	free(urls);
	if (left) {
		fprintf(stderr, "npulaunch: wait: %d of %d server%s not ready after %gs\n", left, n,
			n == 1 ? "" : "s", timeout);
		return NPL_EXIT_FAIL;
	}
	return NPL_EXIT_OK;
}
