"""The fixes of a page's evident meaning that derive-expected.py and derive-upstream.py share.

Development aid (imported by those two scripts, not run by the test suite).
"""

WILDCARDS = {"0.0.0.0", "::", "127.0.0.1", "localhost", "::1"}


def bench_where_listening(bench_flags, server_flags):
    """A PD-mixed page's benchmark connects to the loopback while its server, spread over
    nodes, binds the first node's own address: nothing listens where the benchmark connects.
    npulaunch's benchmark connects where the entry point listens (the plan's rule bench-host).
    bench_flags, server_flags: [[flag, [values]]] of the benchmark and the first server node.
    -> the deviation noted ("bench-host: ..."), bench_flags corrected in place; or None."""
    def value(flags, name):
        for k, v in flags:
            if k == name:
                return v[0] if v else ""
        return None
    server, bench = value(server_flags, "--host"), value(bench_flags, "--host")
    if server is None or bench is None or server in WILDCARDS or bench == server:
        return None
    for f in bench_flags:
        if f[0] == "--host":
            f[1] = [server]
    return (f"bench-host: the page's benchmark gives --host {bench}, where nothing listens: its server "
            f"binds the first node's address; the benchmark connects there ({server})")
