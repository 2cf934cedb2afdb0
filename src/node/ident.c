/* ident.c: this host's addresses, as apply and preflight place it; see ident.h. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "npulaunch/ident.h"
#include "npulaunch/site.h"

int npl_ident_addr_text(const struct sockaddr *sa, char *out, size_t n)
{
	const void *bin;

	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET)
		bin = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		bin = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	else
		return -1;
	return inet_ntop(sa->sa_family, bin, out, (socklen_t)n) ? 0 : -1;
}

int npl_ident_addrs(const char ***out, int *n, struct npl_arena *a)
{
	const char *forced = getenv("NPULAUNCH_NODE_IP");
	struct ifaddrs *ifa, *p;
	const char **v;
	int cap = 0;

	*out = NULL;
	*n = 0;
	if (forced && *forced) {
		char canon[INET6_ADDRSTRLEN];

		if (npl_ip_canonical(forced, canon, sizeof(canon)))
			return -1;
		v = npl_arena_calloc(a, 1, sizeof(*v));
		v[0] = npl_arena_strdup(a, canon);
		*out = v;
		*n = 1;
		return 0;
	}
	if (getifaddrs(&ifa) != 0)
		return 0;
	for (p = ifa; p; p = p->ifa_next)
		cap++;
	v = npl_arena_calloc(a, (size_t)cap + 1, sizeof(*v));
	for (p = ifa; p; p = p->ifa_next) {
		char text[INET6_ADDRSTRLEN];

		if (npl_ident_addr_text(p->ifa_addr, text, sizeof(text)) == 0)
			v[(*n)++] = npl_arena_strdup(a, text);
	}
	freeifaddrs(ifa);
	*out = v;
	return 0;
}
