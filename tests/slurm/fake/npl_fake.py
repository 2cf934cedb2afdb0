"""A stand-in for SGLang on the tests' Slurm cluster (tests/cli/test_slurm.sh): the server
(python3 -m sglang.launch_server), the router (python -m sglang_router.launch_router) and the
benchmark (python -m sglang.bench_serving), with sglang/ and sglang_router/ beside this file
on PYTHONPATH.

Each parses the flags the recipes give the real program, strictly (an unknown flag is an
error, as a misspelt one would be), and records what it received: its argv, its environment
and the tuning of its node's fake root (NPULAUNCH_ROOT) as a JSON file in NPL_FAKE_RECORDS.
- server: a multi-node instance meets as torch.distributed does: node rank 0 listens on
  --dist-init-addr and waits for every other rank, which connects to it; then rank 0 serves
  GET /health and POST /generate on --host:--port, the other ranks idle.
- router: serves /health (503 until every --prefill and --decode server answers its own
  /health) and POST /generate, which goes to a prefill and a decode server.
- bench: sends --num-prompts requests to --host:--port/generate and appends one result record
  as bench_serving does, to --output-file or, without it, to a file named after the run.
Every wait is bounded (NPL_FAKE_TIMEOUT seconds, default 60); SIGTERM ends it at once.
"""
import argparse
import datetime
import glob
import http.server
import json
import os
import signal
import socket
import socketserver
import statistics
import sys
import threading
import time
import urllib.request

TIMEOUT = float(os.environ.get("NPL_FAKE_TIMEOUT", "60"))
NODE = os.environ.get("SLURMD_NODENAME") or socket.gethostname()


def log(*a):
    print(f"[fake {NODE} pid={os.getpid()}]", *a, file=sys.stderr, flush=True)


def split_hostport(s):
    host, port = s.rsplit(":", 1)
    return host.strip("[]"), int(port)


def root_state():
    root = os.environ.get("NPULAUNCH_ROOT", "")
    state = {}
    for f in sorted(glob.glob(root + "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")):
        state[f[len(root):]] = open(f).read()
    for f in ("/proc/sys/vm/swappiness", "/proc/sys/kernel/numa_balancing",
              "/proc/sys/kernel/sched_migration_cost_ns"):
        if os.path.exists(root + f):
            state[f] = open(root + f).read()
    return state


def record(program, extra=None):
    out = os.environ.get("NPL_FAKE_RECORDS")
    if not out:
        return
    rec = {"program": program, "node": NODE, "pid": os.getpid(), "argv": sys.orig_argv,
           "env": dict(os.environ), "root": root_state(), **(extra or {})}
    path = os.path.join(out, f"{program}-{NODE}-{os.getpid()}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f, indent=1)
    os.rename(path + ".tmp", path)


class Handler(http.server.BaseHTTPRequestHandler):
    ready = lambda: False  # noqa: E731
    generate = None

    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.split("?")[0] == "/health":
            self.reply(200 if Handler.ready() else 503, {})
        else:
            self.reply(404, {})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0] == "/generate" and Handler.ready():
            self.reply(200, Handler.generate())
        else:
            self.reply(404 if Handler.ready() else 503, {})


def serve(host, port):
    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    srv = Server((host, port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    log(f"serving on {host}:{port}")


def get(url, data=None):
    try:
        req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status, json.loads(r.read() or b"{}")
    except Exception:
        return 0, None


def idle():
    while True:
        time.sleep(3600)


def server(argv):
    p = argparse.ArgumentParser(prog="sglang.launch_server")
    p.add_argument("--model-path", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--tp-size", type=int, default=1)
    p.add_argument("--dp-size", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)
    p.add_argument("--dist-init-addr")
    p.add_argument("--device", choices=["npu", "cuda", "cpu"])
    p.add_argument("--quantization")
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--disaggregation-mode", choices=["null", "prefill", "decode"], default="null")
    p.add_argument("--disaggregation-bootstrap-port", type=int)
    p.add_argument("--disaggregation-transfer-backend")
    p.add_argument("--speculative-algorithm")
    p.add_argument("--speculative-num-steps", type=int)
    p.add_argument("--speculative-eagle-topk", type=int)
    p.add_argument("--speculative-num-draft-tokens", type=int)
    p.add_argument("--speculative-draft-model-path")
    p.add_argument("--mem-fraction-static", type=float)
    p.add_argument("--max-running-requests", type=int)
    p.add_argument("--chunked-prefill-size", type=int)
    p.add_argument("--cuda-graph-bs", type=int, nargs="+")
    # those of the shipped Kimi-K2.6 recipes, as SGLang's server_args declares them
    p.add_argument("--cuda-graph-bs-decode", type=int, nargs="+")
    p.add_argument("--attention-backend")
    p.add_argument("--mm-attention-backend")
    p.add_argument("--sampling-backend")
    p.add_argument("--moe-a2a-backend")
    p.add_argument("--deepep-mode", choices=["normal", "low_latency", "auto"])
    p.add_argument("--dtype")
    p.add_argument("--context-length", type=int)
    p.add_argument("--max-prefill-tokens", type=int)
    p.add_argument("--prefill-max-requests", type=int)
    p.add_argument("--speculative-draft-model-quantization")
    p.add_argument("--reasoning-parser")
    p.add_argument("--tool-call-parser")
    p.add_argument("--disable-radix-cache", action="store_true")
    p.add_argument("--enable-dp-attention", action="store_true")
    p.add_argument("--enable-dp-lm-head", action="store_true")
    p.add_argument("--enable-multimodal", action="store_true")
    a = p.parse_args(argv)
    record("server")
    # every server failing at once, as a missing model or a bad flag makes them
    if os.environ.get("NPL_FAKE_SERVER_EXIT"):
        log(f"server: {a.model_path}: no such model (NPL_FAKE_SERVER_EXIT)")
        sys.exit(int(os.environ["NPL_FAKE_SERVER_EXIT"]))
    log("server", a.disaggregation_mode, f"rank {a.node_rank} of {a.nnodes}",
        "ASCEND_RT_VISIBLE_DEVICES=" + os.environ.get("ASCEND_RT_VISIBLE_DEVICES", ""))
    deadline = time.time() + TIMEOUT
    if a.nnodes > 1:
        if not a.dist_init_addr:
            p.error("--nnodes > 1 needs --dist-init-addr")
        host, port = split_hostport(a.dist_init_addr)
        if a.node_rank == 0:
            ls = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((host, port))
            ls.listen(64)
            peers = set()
            while len(peers) < a.nnodes - 1:
                ls.settimeout(max(0.1, deadline - time.time()))
                try:
                    c, addr = ls.accept()
                except socket.timeout:
                    log(f"rendezvous: {len(peers)} of {a.nnodes - 1} ranks came")
                    sys.exit(3)
                peers.add(int(c.recv(16).decode().strip() or -1))
                c.close()
                log(f"rendezvous: rank {sorted(peers)[-1]} from {addr[0]}")
        else:
            while True:
                try:
                    s = socket.create_connection((host, port), timeout=1)
                    s.sendall(f"{a.node_rank}\n".encode())
                    s.close()
                    break
                except OSError:
                    if time.time() > deadline:
                        log(f"rendezvous: {a.dist_init_addr} never answered")
                        sys.exit(3)
                    time.sleep(0.1)
            log(f"rank {a.node_rank} joined {a.dist_init_addr}")
            idle()
    time.sleep(float(os.environ.get("NPL_FAKE_DELAY", "0.3")))  # loading the model
    Handler.ready = lambda: True
    Handler.generate = lambda: {"text": "ok", "node": NODE, "mode": a.disaggregation_mode,
                                "meta_info": {"completion_tokens": 1}}
    serve(a.host, a.port)
    idle()


def router(argv):
    p = argparse.ArgumentParser(prog="sglang_router.launch_router")
    p.add_argument("--pd-disaggregation", action="store_true")
    p.add_argument("--prefill", nargs="+", action="append", default=[])
    p.add_argument("--decode", action="append", default=[])
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--policy", choices=["random", "round_robin", "cache_aware", "power_of_two"])
    a = p.parse_args(argv)
    record("router")
    prefill = [x[0] for x in a.prefill]
    workers = prefill + a.decode
    up = set()
    turn = [0]

    def generate():
        i = turn[0] = turn[0] + 1
        out = {}
        for u in (prefill[i % len(prefill)], a.decode[i % len(a.decode)]):
            out[u] = get(u + "/generate", b"{}")[1]
        return {"text": "ok", "router": NODE, "backends": out, "meta_info": {"completion_tokens": 1}}

    Handler.ready = lambda: len(up) == len(workers)
    Handler.generate = generate
    serve(a.host, a.port)
    deadline = time.time() + TIMEOUT
    while len(up) < len(workers):
        for u in workers:
            if u not in up and get(u + "/health")[0] == 200:
                up.add(u)
                log(f"worker up: {u}")
        if time.time() > deadline:
            log("workers never all answered:", sorted(set(workers) - up))
            sys.exit(4)
        time.sleep(0.1)
    log("router ready:", workers)
    idle()


def bench(argv):
    p = argparse.ArgumentParser(prog="sglang.bench_serving")
    p.add_argument("--backend", required=True)
    p.add_argument("--dataset-name", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--max-concurrency", type=int, required=True)
    p.add_argument("--num-prompts", type=int, required=True)
    p.add_argument("--random-input-len", type=int)
    p.add_argument("--random-output-len", type=int)
    p.add_argument("--random-range-ratio", type=float)
    p.add_argument("--output-file")
    p.add_argument("--request-rate")
    p.add_argument("--seed", type=int)
    a = p.parse_args(argv)
    record("bench")
    host = f"[{a.host}]" if ":" in a.host else a.host
    lat = []
    for _ in range(min(a.num_prompts, 256)):
        t = time.time()
        code, body = get(f"http://{host}:{a.port}/generate", b"{}")
        # through the router to a prefill and a decode server, or a PD-mixed server itself
        if code == 200 and (body.get("backends") or body.get("mode") == "null"):
            lat.append((time.time() - t) * 1000)
    out = a.random_output_len or 1
    rec = {"backend": a.backend, "dataset_name": a.dataset_name, "max_concurrency": a.max_concurrency,
           "random_input_len": a.random_input_len, "random_output_len": a.random_output_len,
           "random_range_ratio": a.random_range_ratio, "completed": len(lat),
           "total_output_tokens": len(lat) * out,
           "median_ttft_ms": statistics.median(lat) if lat else None,
           "median_tpot_ms": statistics.median(lat) / out if lat else None}
    name = a.output_file or "{}_{}_{}_{}_{}.jsonl".format(
        a.backend, datetime.datetime.now().strftime("%m%d"), a.num_prompts, a.random_input_len,
        a.random_output_len)
    with open(name, "a") as f:
        f.write(json.dumps(rec) + "\n")
    log(f"bench: {len(lat)} of {a.num_prompts} completed; results in {name}")


def main(program):
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    {"server": server, "router": router, "bench": bench}[program](sys.argv[1:])
