/*
 * recipe.h: layer input. The recipe database. Four kinds of YAML document, layered in this
 * order when a recipe is resolved: the family defaults, a hardware profile,
 * a model's defaults and the recipe itself. Each kind shares the mergeable
 * settings (env, flags, tuning, ...) and adds keys of its own. The loader is
 * strict: an unknown key, a wrong type, a duplicate id or a dangling reference
 * is an error at its file:line:col. Every value keeps its location, so that
 * the plan can say where it came from.
 *
 * Memory: everything hangs off db->arena. Included by the resolver, the
 * selector, the commands and their tests.
 */
#ifndef NPL_RECIPE_H
#define NPL_RECIPE_H

#include "npulaunch/arena.h"
#include "npulaunch/diag.h"
#include "npulaunch/yaml.h"

enum npl_layer_kind {
	NPL_LAYER_DEFAULTS,
	NPL_LAYER_HARDWARE,
	NPL_LAYER_MODEL,
	NPL_LAYER_RECIPE,
	NPL_LAYER_COUNT,
};

/* Where settings apply: every server role, one role, both disaggregated roles, router, benchmark. */
enum npl_scope {
	NPL_SCOPE_SERVER,
	NPL_SCOPE_PD_MIXED,
	NPL_SCOPE_PREFILL,
	NPL_SCOPE_DECODE,
	NPL_SCOPE_DISAGG,
	NPL_SCOPE_ROUTER,
	NPL_SCOPE_BENCH,
	NPL_SCOPE_COUNT,
};

enum npl_mode {
	NPL_MODE_NONE,
	NPL_MODE_PD_MIXED,
	NPL_MODE_PD_DISAGG,
};

/* A string with its place in the recipe files. */
struct npl_str {
	const char *s;
	struct npl_loc loc;
};

/* An optional integer: set is 0 when the layer does not say. */
struct npl_int {
	int set;
	int v;
	struct npl_loc loc;
};

/* How an environment value combines with what the process inherits. */
enum npl_env_op {
	NPL_ENV_SET,      /* the value replaces what is inherited */
	NPL_ENV_PREPEND,  /* value SEP inherited (the value alone when nothing is inherited) */
	NPL_ENV_APPEND,   /* inherited SEP value */
};

/* An environment variable set (value) or removed (value NULL) by a layer. In
 * the lists that are plain name/value pairs (sysctl, waive, deviations) only
 * name, value and loc are used. */
struct npl_env_set {
	const char *name;
	const char *value;
	struct npl_loc loc;
	enum npl_env_op op;
	const char *sep;          /* PREPEND/APPEND: the separator (":" unless the layer says) */
	int site_key;             /* >= 0: the value is this site value (enum npl_site_key) */
	int before_source;        /* exported before the Ascend env files are sourced */
};

enum npl_flag_kind {
	NPL_FLAG_SWITCH,  /* a flag without value (true) */
	NPL_FLAG_VALUES,  /* a flag with one or more values */
	NPL_FLAG_REMOVE,  /* false or null: drop what an earlier layer set */
};

/* An engine flag set by a layer (name without the leading --). */
struct npl_flag_set {
	const char *name;
	enum npl_flag_kind kind;
	const char **values;
	int nvalues;
	struct npl_loc loc;
	int site_key;             /* >= 0: the one value is this site value ({site: model-path}) */
};

/* Speculative decoding: one block that the rules turn into the --speculative-* flags. */
struct npl_spec {
	int present;              /* the layer has a speculative key */
	int removed;              /* speculative: null */
	struct npl_loc loc;
	struct npl_str algorithm;
	struct npl_int steps, topk, draft_tokens;
	struct npl_int draft_model;       /* 1: the draft model path is a site value */
	struct npl_str draft_quantization;
	int draft_quantization_removed;
	unsigned emit;            /* emit: [...] as NPL_SPEC_* bits; 0 when not given (all) */
	struct npl_loc emit_loc;
};

/* The fields of a speculative block, as bits of npl_spec.emit. */
enum {
	NPL_SPEC_ALGORITHM = 1u << 0,
	NPL_SPEC_STEPS = 1u << 1,
	NPL_SPEC_TOPK = 1u << 2,
	NPL_SPEC_DRAFT_TOKENS = 1u << 3,
	NPL_SPEC_DRAFT_MODEL = 1u << 4,
	NPL_SPEC_DRAFT_QUANTIZATION = 1u << 5,
};

/* tuning.affinity: how a node's CPUs are shared among its dies (issue 26). Each key is optional
 * and a later layer replaces it key by key; affinity: null, tuning: null or tuning.replace drop
 * what earlier layers set. */
struct npl_affinity_spec {
	int removed;              /* affinity: null */
	struct npl_str policy;    /* numa-local, even-slice or none */
	struct npl_int min_cpus;  /* min_cpus_per_die: at least 1 */
	struct npl_int irqs;      /* bind each die's interrupts to its CPUs */
};

/* Settings that apply to one scope. */
struct npl_scope_set {
	struct npl_env_set *env;
	int nenv;
	struct npl_str *unset;
	int nunset;
	struct npl_str *source;
	int nsource;
	struct npl_flag_set *flags;
	int nflags;
	struct npl_str *explicit_flags;  /* rule-derived flags to write even when SGLang's default would do */
	int nexplicit;
	int unset_replace, source_replace;  /* {replace: [...]}: drop what earlier layers listed */
	struct npl_spec *spec;           /* roles.X.speculative (NULL when the role has none) */
};


/* The benchmark: dataset kind and sizes, from which the rules build bench_serving's flags. */
struct npl_bench_spec {
	struct npl_str dataset;   /* random, generated-shared-prefix, image */
	struct npl_int input, output, prefix, groups, images, concurrency, prompts;
	struct npl_int system_prompt_len, question_len;   /* generated-shared-prefix, as the page states */
	struct npl_str resolution;
};

/* One of several benchmarks run on one deployment (a recipe's `benchmarks:`, a TTFT run and a
 * TPOT run, say): its name, the sizes and dataset keys it sets over `bench`'s, and the flags it
 * adds to bench's or replaces (scope.flags only). */
struct npl_bench_item {
	const char *name;
	struct npl_loc loc;
	struct npl_bench_spec spec;
	struct npl_scope_set scope;
};

struct npl_ports {
	struct npl_int entry, prefill, decode, bootstrap, dist_init, mf_store;
};

/* Launch commands (argv prefixes) of the three programs. */
struct npl_launch {
	struct npl_str *argv[3];  /* server, router, bench */
	int n[3];
	struct npl_loc loc[3];
};

enum { NPL_PROG_SERVER, NPL_PROG_ROUTER, NPL_PROG_BENCH };

/* One role's instances: how many, the cards of each, and optionally the dies
 * each uses (fewer than its cards have), its first card on its node and how
 * many instances share a node. */
struct npl_topology {
	struct npl_int instances, cards, dies, first_card;
	struct npl_int per_node;   /* instances that share one node (default 1) */
};

enum { NPL_TOPO_PREFILL, NPL_TOPO_DECODE, NPL_TOPO_PD_MIXED, NPL_TOPO_COUNT };

/* How a container runs on a hardware profile (render --target k8s, rbg, docker): the image,
 * what the device plugin calls the NPUs, the nodes' labels, the devices and host files the
 * container needs. Cluster site values override what a site changes. */
struct npl_container {
	int present;
	struct npl_loc loc;
	struct npl_str image, npu_resource, npu_unit, shm_size;
	/* what the servers on one node request and are limited to (Kubernetes: a pod on part of the
	 * node's NPUs its share), and the router's: whole CPUs and a memory size */
	struct npl_str cpus, memory, router_cpus, router_memory;
	struct npl_int privileged;
	struct npl_env_set *node_selector;   /* name: label key, value: label value */
	int nnode_selector;
	struct npl_str *devices;             /* device files, passed through as they are */
	int ndevices;
	struct npl_env_set *mounts;          /* name: host path, value: Directory, File or DirectoryOrCreate */
	int nmounts;
};

/* One document of the database: defaults, hardware profile, model or recipe. */
struct npl_layer {
	enum npl_layer_kind kind;
	const char *file;
	struct npl_loc loc;
	const char *id;
	const char *name;              /* display name; a recipe's title */
	const char *notes;
	int source;                    /* 0 embedded, 1.. later --recipes folders */
	int invalid;                   /* the document had errors: it may be referred to, not used */

	/* mergeable settings */
	struct npl_scope_set scope[NPL_SCOPE_COUNT];
	struct npl_str governor;       /* tuning.cpu_governor; removed when governor_removed */
	int governor_removed;
	struct npl_env_set *sysctl;    /* tuning.sysctl (value NULL removes) */
	int nsysctl;
	int tuning_replace;            /* tuning: null, or tuning.replace: drop the inherited tuning */
	struct npl_affinity_spec affinity; /* tuning.affinity */
	struct npl_ports ports;
	struct npl_launch launch;
	struct npl_str entry_host;
	struct npl_str *ifname_env;
	int nifname_env, ifname_env_set;
	struct npl_int socket_ifname;
	struct npl_spec spec;
	struct npl_bench_spec bench;
	struct npl_bench_item *benchmarks;  /* a recipe's several benchmarks (none: bench is the one) */
	int nbenchmarks;

	/* defaults */
	const char *db_version;
	struct npl_str default_hardware;   /* the profile `tune` uses without a recipe */
	/* hardware */
	struct npl_int dies_per_card, cards_per_node;
	struct npl_container container;
	/* what preflight reads on a node: the files naming the driver's and the toolkit's versions
	 * (the first that exists), the folders holding the NPU tools when PATH does not */
	struct npl_str *pf_driver, *pf_toolkit, *pf_tools;
	int npf_driver, npf_toolkit, npf_tools;
	struct npl_loc pf_loc;
	/* model, recipe: where an imported document came from (provenance:) */
	const char *prov_page, *prov_section, *prov_commit;
	/* hardware (its default), model, recipe: the KV-cache transfer protocol of PD disaggregation
	 * (sdma, device_rdma, host_rdma, device_urma), ASCEND_MF_TRANSFER_PROTOCOL of the prefill and
	 * decode servers; transfer_protocol: null (removed) leaves the variable to memfabric's default */
	struct npl_str transfer_protocol;
	int transfer_protocol_removed;
	struct npl_loc transfer_protocol_loc;
	/* model, recipe: the SGLang version the deployment needs at least (sglang_version: ">= 0.5.16"):
	 * the text as written and its version ("0.5.16"); the recipe's replaces the model's */
	struct npl_str sglang_floor;
	const char *sglang_min;
	/* model, hardware: other names a query or a page may use; recipe: the ids it replaced */
	struct npl_str *aliases;
	int naliases;
	/* recipe */
	struct npl_str model_ref, hardware_ref;
	int cards;
	enum npl_mode mode;
	const char *quantization, *dataset, *tier;
	const char *tpot_text, *ttft_text, *e2e_text;
	long long tpot_us, ttft_us, e2e_us;   /* the latency targets; -1: none */
	const char *throughput_text;   /* the output throughput floor as written ("1200") */
	double throughput;             /* in output tokens per second; -1: none */
	struct npl_topology topo[NPL_TOPO_COUNT];   /* prefill, decode, pd-mixed */
	struct npl_env_set *waive;     /* rule -> why this recipe keeps what the rule warns about */
	int nwaive;
	struct npl_env_set *deviation; /* what -> why the recipe deploys what its page means, not says */
	int ndeviation;
	struct npl_loc cards_loc, mode_loc, topo_loc;
	const struct npl_layer *model, *hardware;
};

struct npl_db {
	struct npl_arena *arena;
	const struct npl_layer *defaults;
	struct npl_layer **layers;     /* every loaded layer, in load order */
	int nlayers, caplayers;
	struct npl_layer **recipes;    /* after npl_db_link: the recipes in force, sorted by id */
	int nrecipes;
	struct npl_layer **models, **hardware;
	int nmodels, nhardware;
	const struct npl_ynode *engine_flags;   /* the engine-flag registry document, if loaded */
	const char *engine_flags_file;
	int nsources;
};

/* Start an empty database whose memory lives in arena. */
void npl_db_init(struct npl_db *db, struct npl_arena *arena);
/* Load the recipes compiled into the binary. */
int npl_db_load_embedded(struct npl_db *db, struct npl_diag *d);
/* Load every *.yaml below dir (sorted); its documents add to or override those loaded before. */
int npl_db_load_dir(struct npl_db *db, const char *dir, struct npl_diag *d);
/* Load one file's text; source numbers the folder it belongs to (0 = embedded). */
int npl_db_load_text(struct npl_db *db, const char *name, const char *text, size_t len,
		     int source, struct npl_diag *d);
/* Resolve references (model, hardware), apply overrides, check ids; sorts db->recipes. */
int npl_db_link(struct npl_db *db, struct npl_diag *d);
/* Embedded recipes plus the folders in dirs (may be NULL), linked: the usual way to open the db. */
int npl_db_open(struct npl_db *db, struct npl_arena *arena, const char *const *dirs, int ndirs,
		struct npl_diag *d);
/* The same, for a command about the recipe want (may be NULL): when no folder is given and want
 * is the id of a shipped recipe, the other shipped recipes are left unbuilt (db->recipes holds
 * that one); otherwise as npl_db_open(). */
int npl_db_open_for(struct npl_db *db, struct npl_arena *arena, const char *const *dirs, int ndirs,
		    const char *want, struct npl_diag *d);
/* The recipe with this id, or NULL. */
const struct npl_layer *npl_db_recipe(const struct npl_db *db, const char *id);
/* The recipe that lists id among its aliases (an id upstream renamed or reshaped), or NULL. */
const struct npl_layer *npl_db_recipe_alias(const struct npl_db *db, const char *id);
/* The model whose id or name (case-insensitive) or alias is name, or NULL. */
const struct npl_layer *npl_db_model(const struct npl_db *db, const char *name);
/* The hardware profile `tune` uses when no recipe is given (the defaults' default_hardware). */
const struct npl_layer *npl_db_default_hardware(const struct npl_db *db);
/* The hardware profile whose id, name or alias (case-insensitive) is name, or NULL. */
const struct npl_layer *npl_db_hardware(const struct npl_db *db, const char *name);

/* Recipe id from a title: lowercase, runs of spaces to one hyphen. */
char *npl_recipe_id_from_title(struct npl_arena *a, const char *title);
/* Parse a duration ("20ms", "22.2ms", "5s") into microseconds; -1 on error. */
long long npl_parse_duration_us(const char *s);
/* Format microseconds as the shortest of "20ms", "22.2ms", "5s". */
void npl_format_duration(char *out, size_t n, long long us);
/* "pd-mixed" / "pd-disagg". */
const char *npl_mode_name(enum npl_mode m);
/* Scope names as written under roles: ("pd-mixed", ...). */
const char *npl_scope_name(enum npl_scope s);
/* Layer kind names ("defaults", "hardware", "model", "recipe"). */
const char *npl_layer_kind_name(enum npl_layer_kind k);

#endif
