/*
 * cli.h: layer cli. What the commands share: exit codes, global options, opening the
 * recipe database, site-value and override options, picking the recipe.
 * Only main.c and the cmd_*.c files include it; modules below them report
 * through diagnostics and never choose an exit code.
 */
#ifndef NPL_CLI_H
#define NPL_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "npulaunch/engine.h"
#include "npulaunch/plan.h"
#include "npulaunch/recipe.h"
#include "npulaunch/resolve.h"
#include "npulaunch/select.h"
#include "npulaunch/site.h"
#include "npulaunch/strmap.h"
#include "npulaunch/text.h"

/* Exit codes, the same for every command (README and the man page list them). */
enum {
	NPL_EXIT_OK = 0,
	NPL_EXIT_FAIL = 1,        /* a check found differences, a server is down, a runtime error */
	NPL_EXIT_USAGE = 2,       /* bad options or arguments, invalid site values */
	NPL_EXIT_NO_RECIPE = 3,   /* no recipe has that id or meets that query */
	NPL_EXIT_AMBIGUOUS = 4,   /* several recipes meet the query equally well */
	NPL_EXIT_INVALID = 5,     /* the recipe database (or a recipe file) is invalid */
};

struct npl_cli {
	const char **recipe_dirs;   /* --recipes and NPULAUNCH_RECIPES, in order */
	int nrecipe_dirs;
	const char *templates_dir;  /* --templates */
	int color;                  /* stdout is a terminal and NO_COLOR is unset */
	struct npl_diag diag;
	struct npl_arena arena;
	struct npl_engine *engine;  /* the flag registry, loaded on first use */
	int argc;                   /* the whole command line, as main() got it (the result cache's key) */
	char **argv;
};

/* One sub-command: its name, its entry point, a line of help. */
struct npl_command {
	const char *name;
	int (*run)(int argc, char **argv, struct npl_cli *cli);
	const char *summary;
};

/* Open the database (embedded + folders); prints diagnostics. Returns 0 or an exit code. */
int npl_cli_open_db(struct npl_cli *cli, struct npl_db *db);
/* The same for a command about one recipe or query (want): a shipped recipe's id builds only it. */
int npl_cli_open_db_for(struct npl_cli *cli, struct npl_db *db, const char *want);
/* Print the collected diagnostics to stderr. */
void npl_cli_flush(struct npl_cli *cli);

/* Options shared by the commands that resolve a recipe: site values, queries, overrides. */
struct npl_cli_recipe_opts {
	struct npl_site site;        /* site values from flags */
	const char *site_files[8];   /* --site FILE, in order (merged; a key in two is refused) */
	int nsite_files;
	const char *tpot, *ttft, *e2e, *dataset, *prefix_cache, *cards, *mode, *hardware;
	int nearest;
	struct npl_override *ov;
	int nov, capov;
	struct npl_strmap setix;   /* each --set FLAG=VALUE's override by "ROLE:FLAG" (repeats add values) */
	struct npl_cli_ov_room {   /* per override: room in its values, its text's length and room */
		int capvalues;
		size_t textlen, textcap;
	} *ovroom;
	int force;
	int allow_unknown;           /* --allow-unknown-flag */
	int strict;                  /* --strict: a site value the recipe or target has no use for is an error */
	int check;                   /* check the plan against the registry and rules (render, apply) */
	const struct npl_plan_target *target;   /* render --target: what it asks of the plan */
};

/* getopt_long entries of the options above, ending with a zeroed entry. */
extern const struct option npl_cli_recipe_options[];
/* The short-option-free values used by npl_cli_recipe_options (>= 1000). */
enum {
	NPL_OPT_MODEL_PATH = 1000,
	NPL_OPT_DRAFT_MODEL_PATH,
	NPL_OPT_IFNAME,
	NPL_OPT_NODE_IP,
	NPL_OPT_PREFILL_IP,
	NPL_OPT_DECODE_IP,
	NPL_OPT_ENTRY_IP,
	NPL_OPT_SITE,
	NPL_OPT_TPOT,
	NPL_OPT_TTFT,
	NPL_OPT_E2E,
	NPL_OPT_DATASET,
	NPL_OPT_PREFIX_CACHE,
	NPL_OPT_CARDS,
	NPL_OPT_MODE,
	NPL_OPT_HARDWARE,
	NPL_OPT_NEAREST,
	NPL_OPT_SET,
	NPL_OPT_UNSET,
	NPL_OPT_ENV,
	NPL_OPT_UNSET_ENV,
	NPL_OPT_FORCE,
	NPL_OPT_ALLOW_UNKNOWN,
	NPL_OPT_STRICT,
	NPL_OPT_LAST_SHARED,
	NPL_OPT_SITE_KEY = 2000,   /* + enum npl_site_key: a cluster value's flag (--image, --gang) */
};
/* Handle one of the shared options; 1 handled, 0 not ours, -1 bad value (diagnosed). */
int npl_cli_recipe_opt(struct npl_cli *cli, struct npl_cli_recipe_opts *o, int opt, const char *arg);
/* Build a getopt_long table: the command's own entries followed by the shared ones (malloc'ed). */
struct option *npl_cli_options(const struct option *own);
/* 1 when any query option was given. */
int npl_cli_has_query(const struct npl_cli_recipe_opts *o);
/* Complete the site values with the --site file (flags win); 0 or an exit code. */
int npl_cli_site(struct npl_cli *cli, struct npl_cli_recipe_opts *o);

/* The recipe meant by an id, or by a model and the query options; NULL with *rc set (and the
 * reasons printed) when there is none or several. *selection (may be NULL) receives how it was
 * chosen, for the plan; the caller frees it (npl_cli_resolve takes it over). */
const struct npl_layer *npl_cli_pick(struct npl_cli *cli, const struct npl_db *db, const char *arg,
				     const struct npl_cli_recipe_opts *o, cJSON **selection, int *rc);
/* Build the query of a model and the query options; 0 or an exit code (messages printed). */
int npl_cli_query(struct npl_cli *cli, const struct npl_db *db, const struct npl_layer *model,
		  const struct npl_cli_recipe_opts *o, struct npl_query *q);
/* Resolve the picked recipe with the site values and overrides, recording selection in the
 * plan (it is freed in any case); NULL and *rc on error. */
cJSON *npl_cli_resolve(struct npl_cli *cli, const struct npl_db *db, const struct npl_layer *R,
		       struct npl_cli_recipe_opts *o, cJSON *selection, int *rc);
/* The plan of a rendered bundle (a folder with manifest.json, a .json file, or the current
 * folder when arg is NULL) or of an id/query resolved here, with the site values merged:
 * flags over the manifest's over the environment's (MODEL_PATH, PREFILL_IPS="a b", ...).
 * NULL and *rc on error (messages printed). */
cJSON *npl_cli_plan(struct npl_cli *cli, const char *arg, struct npl_cli_recipe_opts *o, int *rc);
/* An endpoint of a deployment: a server instance or the router, its URL resolved. */
struct npl_endpoint {
	const char *role;
	int instance;        /* -1 for the router */
	const char *url;     /* NULL when a site value it needs is not given, or it is refused */
	const char *missing; /* then: the site key */
	const char *refused; /* or why it is no endpoint of the plan's (the URL shown escaped) */
};
/* The endpoints of a plan (servers, then the router when with_router); their count. An
 * endpoint is requested only when it is what the plan derives for its role: http(s)://HOST:PORT
 * and nothing else, HOST an IP address that the role's nodes have (an address or a --host),
 * PORT one of their --port values; any other (a manifest edited by hand or by an attacker) is
 * refused. */
int npl_cli_endpoints(struct npl_cli *cli, const cJSON *plan, int with_router, struct npl_endpoint **out);
/* How long wait, router.sh and apply --role router wait for the servers (wait --timeout,
 * NPULAUNCH_WAIT_TIMEOUT; 0: do not wait): seconds, 0 to a week; the scripts' _wait.sh.tmpl
 * reads the variable by the same rule. */
extern const struct npl_number_spec npl_cli_wait_seconds;
/* Option name's value s as a number within spec (npl_parse_number): 0 and *out, or a usage
 * error for cmd that names the option and what it accepts (NPL_EXIT_USAGE). */
int npl_cli_number(const char *cmd, const char *name, const char *s, const struct npl_number_spec *spec,
		   double *out);
/* The same for environment variable var; unset or empty gives def. */
int npl_cli_env_number(const char *cmd, const char *var, const struct npl_number_spec *spec, double def,
		       double *out);
/* The engine-flag registry, loaded on the first call; NULL (messages recorded) when it cannot be. */
struct npl_engine *npl_cli_engine(struct npl_cli *cli, const struct npl_db *db);
/* Check a plan against the engine-flag registry and the rules (messages printed);
 * 0 when it passes (warnings allowed), else an exit code. */
int npl_cli_check(struct npl_cli *cli, const struct npl_db *db, const cJSON *plan,
		  const struct npl_layer *R, int allow_unknown);
/* Free what the options hold. */
void npl_cli_recipe_opts_release(struct npl_cli_recipe_opts *o);

/* An output folder a command may write into: not an empty name (the current folder) and not a
 * name for the root, "/", "//", "/tmp/..", "." in / (an unset variable in `-o "$OUT/"`). 0, or a
 * usage error said for cmd. */
int npl_cli_output_dir(const char *cmd, const char *dir);
/* The folder a node command treats as / (--root DIR or NPULAUNCH_ROOT), one rule for every
 * command and the scripts: *root is the flag's value (from_env 0) or the variable's (from_env 1);
 * the variable empty is / (*root NULL); relative is a usage error said for cmd, naming where it
 * came from. 0 or NPL_EXIT_USAGE. */
int npl_cli_root(const char *cmd, const char **root, int from_env);
/* A usage error (NPL_EXIT_USAGE) when value, given as what (a path), is not UTF-8: what --json
 * would carry; else 0. */
int npl_cli_json_text(const char *cmd, const char *what, const char *value);
/* Print a --json document (cJSON_Print()'s text) and a newline; when it is not UTF-8 (text no
 * check caught), print nothing, say so, and npl_cli_json_refused() turns the exit status to 1. */
void npl_cli_puts_json(const char *text);
int npl_cli_json_refused(void);
/* "try 'npulaunch CMD --help'" after a usage error; returns NPL_EXIT_USAGE. */
int npl_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line for the user that is neither a warning nor an error ("npulaunch: ..."): said unless
 * --quiet. */
void npl_cli_info(struct npl_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The command main is running: a usage error of shared code (cmd NULL) points to its help. */
void npl_cli_set_command(const char *cmd);
/* The model a name that is none most likely means: the only one it begins, else the nearest
 * by spelling; NULL when none is near. */
const char *npl_cli_suggest_model(const struct npl_db *db, const char *arg);
/* Every hardware profile's id, comma-separated, for messages (arena memory). */
const char *npl_cli_profiles_text(struct npl_cli *cli, const struct npl_db *db);

/* The sub-commands. */
int npl_cmd_list(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_show(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_render(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_diff(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_tune(int argc, char **argv, struct npl_cli *cli);
/* status --affinity (cmd_status_affinity.c): the servers of plan on this node read back against
 * their dies' sets (root: NULL or the root prefix); printed, as JSON too with json. An exit code. */
int npl_cli_status_affinity(struct npl_cli *cli, const cJSON *plan, const char *root, int json);
int npl_cmd_apply(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_preflight(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_wait(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_status(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_validate(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_bench(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_verify(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_import(int argc, char **argv, struct npl_cli *cli);
int npl_cmd_drift(int argc, char **argv, struct npl_cli *cli);

#endif
