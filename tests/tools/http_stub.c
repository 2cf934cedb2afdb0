/*
 * http_stub.c: a real HTTP server on loopback for the readiness tests, one
 * behaviour per run:
 *   http_stub ok LOG          /health 200, /get_model_info and /v1/models JSON, /generate JSON
 *   http_stub warm N LOG      /health 503 for the first N requests, then as ok
 *   http_stub garbage LOG     200 everywhere, bodies that are not JSON
 *   http_stub hang LOG        accepts connections and never answers
 *   http_stub newer LOG       only the newer /model_info (no /get_model_info)
 *   http_stub hostile LOG     as ok, with terminal controls in the served model path
 * It binds 127.0.0.1 on a free port, prints the port on stdout, and appends
 * "METHOD PATH CODE" per request to LOG. It stops on SIGTERM.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXC 64

struct conn {
	int fd;
	char buf[8192];
	size_t len;
};

static const char *mode;
static int warm, seen_health;
static FILE *logfp;

static void reply(int fd, int code, const char *type, const char *body)
{
	char head[512];
	const char *reason = code == 200 ? "OK" : code == 404 ? "Not Found" : "Service Unavailable";
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			 code, reason, type, strlen(body));

	if (write(fd, head, (size_t)n) < 0 || write(fd, body, strlen(body)) < 0)
		return;
}

static void answer(struct conn *c)
{
	char method[16] = "", path[1024] = "";
	int code = 200;
	const char *body = "", *type = "application/json";

	sscanf(c->buf, "%15s %1023s", method, path);
	if (!strcmp(path, "/health") || !strcmp(path, "/health_generate")) {
		if (!strcmp(mode, "warm") && seen_health++ < warm)
			code = 503;
	} else if (!strcmp(mode, "garbage")) {
		type = "text/html";
		body = "<html>this is not JSON</html>";
	} else if (!strcmp(path, "/get_model_info") && !strcmp(mode, "hostile")) {
		body = "{\"model_path\": \"/models/\\u001b]0;owned\\u0007\\u001b[2J\\u009b31mX\", "
		       "\"is_generation\": true}";
	} else if (!strcmp(path, "/get_model_info") && strcmp(mode, "newer")) {
		body = "{\"model_path\": \"/models/Stub-Model\", \"is_generation\": true}";
	} else if (!strcmp(path, "/model_info")) {
		body = "{\"model_path\": \"/models/Newer-Model\", \"is_generation\": true}";
	} else if (!strcmp(path, "/v1/models")) {
		body = "{\"object\": \"list\", \"data\": [{\"id\": \"stub-served\", \"object\": \"model\"}]}";
	} else if (!strcmp(path, "/generate") && !strcmp(method, "POST")) {
		body = "{\"text\": \"!\", \"meta_info\": {\"completion_tokens\": 1}}";
	} else {
		code = 404;
		body = "{\"detail\": \"Not Found\"}";
	}
	fprintf(logfp, "%s %s %d\n", method, path, code);
	fflush(logfp);
	reply(c->fd, code, type, body);
}

/* A request is complete at the blank line, plus its Content-Length of body. */
static int complete(const struct conn *c)
{
	const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4), *cl;
	size_t want = 0;

	if (!end)
		return 0;
	cl = strcasestr(c->buf, "Content-Length:");
	if (cl && cl < end)
		want = (size_t)strtoul(cl + 15, NULL, 10);
	return c->len >= (size_t)(end - c->buf) + 4 + want;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct pollfd pfd[MAXC + 1];
	struct conn conns[MAXC];
	int lfd, n = 0, i, one = 1;

	if (argc < 3)
		return 2;
	mode = argv[1];
	if (!strcmp(mode, "warm")) {
		if (argc < 4)
			return 2;
		warm = atoi(argv[2]);
	}
	logfp = fopen(argv[argc - 1], "a");
	if (!logfp)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen))
		return 3;
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	while (!stop) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < n; i++) {
			pfd[i + 1].fd = conns[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)n + 1, 200) < 0 && errno != EINTR)
			break;
		if ((pfd[0].revents & POLLIN) && n < MAXC) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				conns[n].fd = fd;
				conns[n].len = 0;
				n++;
			}
		}
		for (i = n - 1; i >= 0; i--) {
			ssize_t r;

			if (!(pfd[i + 1].revents & (POLLIN | POLLHUP)) || i + 1 > n)
				continue;
			r = read(conns[i].fd, conns[i].buf + conns[i].len, sizeof(conns[i].buf) - 1 - conns[i].len);
			if (r > 0) {
				conns[i].len += (size_t)r;
				conns[i].buf[conns[i].len] = '\0';
				if (!complete(&conns[i]) || !strcmp(mode, "hang"))
					continue;
				answer(&conns[i]);
			}
			/* answered, or the client went away */
			close(conns[i].fd);
			conns[i] = conns[--n];
		}
	}
	return 0;
}
