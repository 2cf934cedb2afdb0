/*
 * stub_server.c: stands in for python3/python in the tests. It records its
 * argv and environment as one JSON line appended to $NPL_STUB_LOG and exits
 * with $NPL_STUB_EXIT (default 0), after $NPL_STUB_HOLD_MS milliseconds (default 0:
 * a server that stays up, for launches that supervise several); also the CPUs it may run on. Installed under the names python3 and
 * python in a folder put first on PATH.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

extern char **environ;

int main(int argc, char **argv)
{
	const char *log = getenv("NPL_STUB_LOG"), *code = getenv("NPL_STUB_EXIT");
	cJSON *rec = cJSON_CreateObject(), *av = cJSON_CreateArray(), *env = cJSON_CreateObject();
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char **e;
	char *line;
	FILE *fp;
	int i;

	cJSON_AddItemToArray(av, cJSON_CreateString(base));
	for (i = 1; i < argc; i++)
		cJSON_AddItemToArray(av, cJSON_CreateString(argv[i]));
	for (e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[4096];

		if (!eq || (size_t)(eq - *e) >= sizeof(name))
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		cJSON_AddStringToObject(env, name, eq + 1);
	}
	{
		/* the CPUs it may run on, as a list "0,1,2" */
		cpu_set_t set;
		char cpus[4096] = "";
		int c;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (c = 0; c < CPU_SETSIZE && strlen(cpus) < sizeof(cpus) - 16; c++)
				if (CPU_ISSET(c, &set))
					sprintf(cpus + strlen(cpus), "%s%d", *cpus ? "," : "", c);
		cJSON_AddStringToObject(rec, "cpus", cpus);
	}
	cJSON_AddItemToObject(rec, "argv", av);
	cJSON_AddItemToObject(rec, "env", env);
	line = cJSON_PrintUnformatted(rec);
	fp = fopen(log ? log : "/dev/null", "a");
	if (!fp || fprintf(fp, "%s\n", line) < 0 || fclose(fp)) {
		perror("stub_server");
		return 99;
	}
	cJSON_free(line);
	cJSON_Delete(rec);
	if (getenv("NPL_STUB_HOLD_MS")) {
		long ms = atol(getenv("NPL_STUB_HOLD_MS"));
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	return code ? atoi(code) : 0;
}
