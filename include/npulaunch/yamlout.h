/*
 * yamlout.h: layer out. cJSON trees written as YAML by libyaml's emitter, in
 * block style as kubectl writes manifests (a list under a key at the key's
 * indent): a string plain when YAML reads it back as that string, a literal
 * block when it is lines of text libyaml can hold in one, double-quoted with
 * libyaml's escapes otherwise (a control, DEL, a C1 control, U+2028, ... are
 * escaped, so that every YAML reader gets the string back); a raw cJSON item
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

#endif
