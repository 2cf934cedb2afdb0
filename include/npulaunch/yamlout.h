/*
 * yamlout.h: layer out. cJSON trees written as YAML by libyaml's emitter, in
 * block style as kubectl writes manifests (a list under a key at the key's
 * indent): a string plain when YAML reads it back as that string, a literal
 * block when it is lines of printable text with no character a YAML 1.1 reader
 * takes for a line break (U+0085, U+2028, U+2029) and libyaml can hold in one,
 * double-quoted with libyaml's escapes otherwise (a control, DEL, a C1 control,
 * U+2028, ... are escaped, so that every YAML reader gets the string back); text
 * that is not UTF-8 is refused; comments through npl_yamlout_comment(); a raw cJSON item
 * that is a decimal number (-?DIGITS(.DIGITS)?) plain, as written ("0.60"
 * stays "0.60"). Used for the Kubernetes manifests and the recipes `import`
 * writes.
 */
#ifndef NPL_YAMLOUT_H
#define NPL_YAMLOUT_H

#include <cjson/cJSON.h>

#include "npulaunch/buf.h"

/* Append each item of the array docs as one YAML document ("---" between them) to out; 0, or
 * -1 when libyaml refuses (it should not). */
int npl_yamlout_docs(struct npl_buf *out, const cJSON *docs);

/* Append text as YAML comment lines: "# " and each of its lines ("#" for an empty one). What a
 * comment line cannot hold as itself is written as npl_escape_char() writes it for a terminal
 * (a control, DEL, a C1 control such as U+0085, a byte that is not UTF-8: \xNN, \u00NN), and
 * U+2028, U+2029 and U+FEFF as \u2028, ...: YAML 1.1 readers end a line at U+0085, U+2028 and
 * U+2029, and what followed would be read as YAML. */
void npl_yamlout_comment(struct npl_buf *out, const char *text);

#endif
