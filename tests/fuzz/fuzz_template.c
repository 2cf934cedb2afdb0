/*
 * fuzz_template.c: libFuzzer target for the template engine: the input is a
 * template rendered over a fixed view shaped like the renderer's (nested
 * objects, arrays, strings with site references, numbers, booleans), with
 * the shell-word escape and a partial that names the input itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/render.h"
#include "npulaunch/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *view_json =
	"{\"script\": \"pd-mixed.sh\", \"recipe\": {\"id\": \"x\", \"cards\": 16, \"tpot_ms\": 22.2,"
	" \"ttft\": null}, \"role\": {\"nodes\": [{\"index\": 0, \"env\": [{\"name\": \"A\","
	" \"value\": \"${ifname}\"}], \"launch\": [\"python3\", \"-m\", \"m\"], \"flags\": [{\"flag\":"
	" \"--x\", \"values\": [\"${prefill-ip[0]|url}\", \"$$(rm)\", \"'\"]}]}], \"unset\": [],"
	" \"tuning\": {\"cpu_governor\": {\"value\": \"performance\"}}}, \"node_list\": null,"
	" \"site\": [{\"var\": \"MODEL_PATH\", \"given\": false, \"list\": false}], \"ok\": true}";

static const char *fuzz_text;

static void escape(void *ctx, struct npl_buf *out, const char *text)
{
	(void)ctx;
	npl_render_shell_word(out, text);
}

static const char *partial(void *ctx, const char *name, const char **file)
{
	(void)ctx;
	*file = name;
	return strcmp(name, "self") ? NULL : fuzz_text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cJSON *view;
	struct npl_tmpl_env env = {escape, partial, NULL, NULL};
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_buf out = NPL_BUF_INIT;
	char *text = malloc(size + 1);
	int i;

	if (!text)
		return 0;
	if (!view)
		view = cJSON_Parse(view_json);
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_text = text;
	npl_tmpl_render("fuzz.tmpl", text, view, &env, &out, &d);
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	npl_buf_release(&out);
	free(text);
	return 0;
}
