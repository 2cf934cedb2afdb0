/* yamlout.c: cJSON trees written as YAML documents by libyaml's emitter; see yamlout.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "npulaunch/arena.h"
#include "npulaunch/text.h"
#include "npulaunch/yamlout.h"

/* Text YAML reads back as the same string when written plain: a word of letters, digits and
 * _./=@+-: that starts with a letter, '/' or '_', does not end with ':' and is none of the
 * words YAML 1.1 readers take for a boolean or null. */
static int plain_ok(const char *s)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"};
	const char *p;
	size_t i;

	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '/' || *s == '_'))
		return 0;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("_./=@+-:", *p)))
			return 0;
	if (p[-1] == ':')
		return 0;
	for (i = 0; i < NPL_ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return 0;
	return 1;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -1;
}

/* 1 when a literal block holds s as it is for every YAML reader: lines of printable text, no
 * tab, carriage return, DEL, C1 control, byte that is not UTF-8, byte-order mark, nor U+2028 or
 * U+2029 (YAML 1.1 readers, PyYAML and go-yaml among them, take those two and U+0085 for line
 * breaks: one ends the block's line early, and the text after it, no longer indented, ends the
 * block). libyaml's own check lets U+2028 and U+2029 through as printable. */
static int literal_ok(const char *s, size_t n)
{
	size_t i, len;
	unsigned cp;

	for (i = 0; i < n; i += len) {
		/* most of a script is printable ASCII: one compare a byte (the role scripts a
		   ConfigMap carries are megabytes) */
		if ((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f) {
			len = 1;
			continue;
		}
		if (!(len = npl_utf8_char(s + i, n - i, &cp)))
			return 0;
		if (cp != '\n' && (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 ||
				    cp == 0xfeff))
			return 0;
	}
	return 1;
}

/* A string: plain when it reads back as itself; else a literal block when it is lines of
 * text every reader takes as such (literal_ok) and libyaml can hold in one (no trailing
 * blanks: libyaml checks), double-quoted with libyaml's escapes otherwise (a control, DEL,
 * a C1 control, U+0085, U+2028, U+2029 are escaped there). */
static int string(yaml_emitter_t *e, const char *s)
{
	yaml_event_t ev;
	yaml_scalar_style_t style;
	size_t n = strlen(s);

	/* libyaml refuses text that is not UTF-8, and frees its event twice when it does: never
	   hand it one */
	if (npl_utf8_invalid(s, n) < n || n > INT_MAX)
		return -1;
	style = plain_ok(s) ? YAML_PLAIN_SCALAR_STYLE
		: memchr(s, '\n', n) && literal_ok(s, n) ? YAML_LITERAL_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n,
				     style == YAML_PLAIN_SCALAR_STYLE, style != YAML_PLAIN_SCALAR_STYLE, style);
	return emit(e, &ev);
}

static int string_plain(yaml_emitter_t *e, const char *s)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 0, YAML_PLAIN_SCALAR_STYLE);
	return emit(e, &ev);
}

static int node(yaml_emitter_t *e, const cJSON *j)
{
	yaml_event_t ev;
	const cJSON *it;
	char num[64];

	if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
		/* an empty one in flow style: {} or [] */
		int block = j->child != NULL;

		if (cJSON_IsObject(j))
			yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							    block ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		else
			yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							     block ? YAML_BLOCK_SEQUENCE_STYLE : YAML_FLOW_SEQUENCE_STYLE);
		if (emit(e, &ev))
			return -1;
		cJSON_ArrayForEach(it, j)
			if ((cJSON_IsObject(j) && string(e, it->string)) || node(e, it))
				return -1;
		if (cJSON_IsObject(j))
			yaml_mapping_end_event_initialize(&ev);
		else
			yaml_sequence_end_event_initialize(&ev);
		return emit(e, &ev);
	}
	if (cJSON_IsString(j))
		return string(e, j->valuestring);
	if (cJSON_IsRaw(j) && npl_decimal_text(j->valuestring))
		return string_plain(e, j->valuestring);
	if (cJSON_IsBool(j))
		snprintf(num, sizeof(num), "%s", cJSON_IsTrue(j) ? "true" : "false");
	else if (cJSON_IsNumber(j) && j->valuedouble == (double)(long long)j->valuedouble)
		snprintf(num, sizeof(num), "%lld", (long long)j->valuedouble);
	else if (cJSON_IsNumber(j))
		snprintf(num, sizeof(num), "%.17g", j->valuedouble);
	else
		snprintf(num, sizeof(num), "null");
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)num, (int)strlen(num), 1, 0,
				     YAML_PLAIN_SCALAR_STYLE);
	return emit(e, &ev);
}

void npl_yamlout_comment(struct npl_buf *out, const char *text)
{
	size_t n = strlen(text), i = 0, len;
	unsigned cp;

	npl_buf_puts(out, "#");
	if (*text && *text != '\n')
		npl_buf_putc(out, ' ');
	while (i < n) {
		if (text[i] == '\n') {
			npl_buf_puts(out, "\n#");
			if (++i < n && text[i] != '\n')
				npl_buf_putc(out, ' ');
			continue;
		}
		len = npl_utf8_char(text + i, n - i, &cp);
		if (len && (cp == 0x2028 || cp == 0x2029 || cp == 0xfeff)) {
			npl_buf_printf(out, "\\u%04x", cp);
			i += len;
		} else {
			i += npl_escape_char(out, text + i, n - i);
		}
	}
	npl_buf_putc(out, '\n');
}

static int to_buf(void *data, unsigned char *bytes, size_t size)
{
	npl_buf_add(data, (const char *)bytes, size);
	return 1;
}

int npl_yamlout_docs(struct npl_buf *out, const cJSON *docs)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	const cJSON *doc;
	int rc = -1;

	if (!yaml_emitter_initialize(&e))
		npl_oom();
	yaml_emitter_set_output(&e, to_buf, out);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_indent(&e, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (emit(&e, &ev))
		goto out;
	cJSON_ArrayForEach(doc, docs) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, doc == docs->child);
		if (emit(&e, &ev) || node(&e, doc))
			goto out;
		yaml_document_end_event_initialize(&ev, 1);
		if (emit(&e, &ev))
			goto out;
	}
	yaml_stream_end_event_initialize(&ev);
	rc = emit(&e, &ev) || !yaml_emitter_flush(&e) ? -1 : 0;
out:
	if (e.error == YAML_MEMORY_ERROR)
		npl_oom();
	yaml_emitter_delete(&e);
	return rc;
}
