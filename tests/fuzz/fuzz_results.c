/*
 * fuzz_results.c: libFuzzer target for the results reader (verify): the input
 * is bench_serving's results file, any bytes (NUL, broken lines, duplicate
 * keys, numbers beyond a double, Python's Infinity and NaN), judged against
 * a fixed plan with both latency targets, the prompts and the workload flags
 * the verdict compares; the verdict is then written as JSON. The input's
 * first byte picks the tolerated share of failed requests and whether the
 * plan names its prompts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npulaunch/bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *plan_json[2] = {
	"{\"recipe\": {\"id\": \"x\", \"tpot\": \"20ms\", \"tpot_ms\": 20, \"ttft_ms\": 3000},"
	" \"roles\": [{\"role\": \"bench\", \"program\": \"bench\", \"nodes\": [{\"flags\": ["
	"{\"flag\": \"--dataset-name\", \"values\": [\"random\"]},"
	"{\"flag\": \"--max-concurrency\", \"values\": [\"64\"]},"
	"{\"flag\": \"--num-prompts\", \"values\": [\"256\"]},"
	"{\"flag\": \"--random-input-len\", \"values\": [\"3500\"]},"
	"{\"flag\": \"--random-output-len\", \"values\": [\"1500\"]}]}]}]}",
	"{\"recipe\": {\"id\": \"y\", \"tpot\": null, \"ttft_ms\": 3000},"
	" \"roles\": [{\"role\": \"bench\", \"program\": \"bench\", \"nodes\": [{\"flags\": ["
	"{\"flag\": \"--dataset-name\", \"values\": [\"image\"]}]}]}]}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static cJSON *plans[2];
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_verdict v;
	char *text;
	int i, which = size ? data[0] & 1 : 0;
	double max_failed = size ? (double)(data[0] >> 1) * 100 / 127 : 0;

	if (!plans[0])
		for (i = 0; i < 2; i++)
			if (!(plans[i] = cJSON_Parse(plan_json[i])))
				abort();
	/* the reader is given the bytes and their length: no terminating NUL to rely on */
	text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	if (npl_verify("results.jsonl", text, size, plans[which], max_failed, &v, &d) == 0) {
		cJSON *j = npl_verdict_json(&v, plans[which], "results.jsonl");
		char *s = cJSON_PrintUnformatted(j);

		if (v.pass && !v.valid)
			abort();   /* an invalid run never passes */
		cJSON_free(s);
		cJSON_Delete(j);
	}
	for (i = 0; i < d.n; i++)
		free(npl_diag_format(&d, &d.v[i], 1));
	npl_diag_release(&d);
	free(text);
	return 0;
}
