/* test_page.c: page.c, the best-practice pages read into their recipe sections, on pages made
 * here for each construct and on the pages of tests/data/pages (all three forms), whose section
 * counts and titles their INDEX.md files list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npulaunch/fsio.h"
#include "npulaunch/page.h"

struct read {
	struct npl_arena a;
	struct npl_diag d;
	struct npl_page p;
	int rc;
	char *msg;           /* the first message, formatted */
};

static void rd(struct read *r, const char *file, const char *text)
{
	memset(r, 0, sizeof(*r));
	npl_arena_init(&r->a);
	r->d = (struct npl_diag)NPL_DIAG_INIT;
	r->rc = npl_page_read(&r->p, file, text, strlen(text), &r->a, &r->d);
	r->msg = r->d.n ? npl_diag_format(&r->d, &r->d.v[0], 0) : NULL;
}

static void done(struct read *r)
{
	free(r->msg);
	npl_diag_release(&r->d);
	npl_arena_release(&r->a);
}

/* The page fails with exactly one error, msg (file:line:col: error: ...). */
static void expect_error(const char *text, const char *msg)
{
	struct read r;

	rd(&r, "p.mdx", text);
	if (!r.msg || strcmp(r.msg, msg) || r.d.n != 1)
		print_error("want: %s\ngot:  %s (%d messages)\n", msg, r.msg ? r.msg : "(no message)", r.d.n);
	assert_int_equal(r.rc, -1);
	assert_int_equal(r.d.n, 1);
	assert_string_equal(r.msg, msg);
	done(&r);
}

#define FRONT "---\ntitle: \"Model-X\"\nmetatags:\n  description: \"Best Practice for Model-X\"\n---\n"
#define FIELDS "**Model**: Model-X\n\n**Hardware**: Ascend A3 Series Products\n\n**Cards**: 16\n\n" \
	"**Deploy Mode**: PD Disaggregation\n\n**Quantization**: W8A8 INT8\n\n**Dataset**: 3.5k+1.5k\n\n**TPOT**: 20ms\n\n"

static void test_mdx_section(void **state)
{
	static const char page[] = FRONT
		"\n<Note>\nOn the A3 Series, each card has 2 dies.\n</Note>\n\n"
		"### Low Latency\n\n| Model | Hardware | Cards |\n| --- | --- | --- |\n| Model-X | A3 | 16 |\n\n"
		"## Optimal Configuration\n\n"
		"### Model-X W8A8 1P1D 16P IN3K5 OUT1K5 20ms\n\n" FIELDS
		"**TTFT**: 5s\n\n*Format: resolution (input tokens) + output tokens*\n\n"
		"#### Model Deployment\n\n```bash Command\nexport A=1\n# prefill\n```\n\n"
		"```shell Command\npython -m sglang_router.launch_router \\\n    --pd-disaggregation\n```\n\n"
		"#### Benchmark\n\nWe tested it based on the `RANDOM` dataset.\n\n```bash Command\npython -m sglang.bench_serving\n```\n";
	struct read r;
	const struct npl_page_section *s;

	(void)state;
	rd(&r, "x.mdx", page);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.d.n, 0);
	assert_int_equal(r.p.form, NPL_PAGE_MDX);
	assert_string_equal(r.p.title, "Model-X");
	assert_int_equal(r.p.n, 1);
	s = &r.p.v[0];
	assert_string_equal(s->title, "Model-X W8A8 1P1D 16P IN3K5 OUT1K5 20ms");
	assert_int_equal(s->loc.line, 19);
	assert_int_equal(s->loc.col, 5);
	assert_string_equal(s->field[NPL_PAGE_MODEL].value, "Model-X");
	assert_string_equal(s->field[NPL_PAGE_MODE].value, "PD Disaggregation");
	assert_string_equal(s->field[NPL_PAGE_CARDS].value, "16");
	assert_int_equal(s->field[NPL_PAGE_CARDS].loc.line, 25);
	assert_int_equal(s->field[NPL_PAGE_CARDS].loc.col, 12);
	assert_string_equal(s->field[NPL_PAGE_TPOT].value, "20ms");
	assert_string_equal(s->field[NPL_PAGE_TTFT].value, "5s");
	assert_string_equal(s->field[NPL_PAGE_FORMAT].value, "resolution (input tokens) + output tokens");
	assert_int_equal(s->ndeploy, 2);
	assert_string_equal(s->deploy[0].text, "export A=1\n# prefill\n");
	assert_int_equal(s->deploy[0].loc.line, 42);
	assert_string_equal(s->deploy[1].text, "python -m sglang_router.launch_router \\\n    --pd-disaggregation\n");
	assert_int_equal(s->nbench, 1);
	assert_string_equal(s->bench[0].text, "python -m sglang.bench_serving\n");
	assert_null(s->deploy[0].label);
	done(&r);
}

/* Parts without a titled section (MiMo-V2.5-Pro): one untitled section, blocks labelled; a
 * glossary's bold terms and prose sections are not recipes. */
static void test_mdx_untitled_and_prose(void **state)
{
	static const char page[] = FRONT
		"### NPU\n\n**NPU** stands for Neural Processing Unit.\n\n**PD Mixed**: both stages on one set.\n\n"
		"### Model Deployment\n\nProse.\n\n#### Common environment setup (both nodes)\n\n```bash Command\nexport C=1\n```\n\n"
		"#### Prefill node\n\n```bash Command\npython3 -m sglang.launch_server\n```\n\n"
		"### Benchmark\n\n#### Benchmark Decode Node (TPOT)\n\n```bash Command\npython3 -m sglang.bench_serving\n```\n";
	struct read r;
	const struct npl_page_section *s;

	(void)state;
	rd(&r, "m.mdx", page);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.p.n, 1);
	s = &r.p.v[0];
	assert_null(s->title);
	assert_int_equal(s->loc.line, 12);
	assert_int_equal(s->ndeploy, 2);
	assert_string_equal(s->deploy[0].label, "Common environment setup (both nodes)");
	assert_string_equal(s->deploy[0].text, "export C=1\n");
	assert_string_equal(s->deploy[1].label, "Prefill node");
	assert_int_equal(s->nbench, 1);
	assert_string_equal(s->bench[0].label, "Benchmark Decode Node (TPOT)");
	assert_null(s->field[NPL_PAGE_MODEL].value);
	done(&r);
}

static void test_text_form(void **state)
{
	static const char page[] =
		"Model-Y\n\n소개\n\n저지연 (Low Latency)\n\n모델\t하드웨어\nModel-Y\tA3\n\n"
		"최적 구성 (Optimal Configuration)\n\n"
		"Model-Y W8A8 8P IN3K5 OUT1K5 50ms\n\n모델: Model-Y\n\n하드웨어: Ascend A3 Series Products\n\n카드: 8\n\n"
		"배포 모드: PD Mixed\n\n양자화: W8A8 INT8\n\n데이터셋: 3.5k+1.5k\n\nTPOT: 50ms\n\n"
		"모델 배포 (Model Deployment)\n\nexport A=1\npython3 -m sglang.launch_server \\\n    --tp-size 16\n\n"
		"벤치마크 (Benchmark)\n\nRANDOM 데이터셋을 기반으로 테스트했어요.\n\npython -m sglang.bench_serving \\\n    --port 6688\n\n"
		"Model-Y W8A8 8P IN3K5 OUT1K5 20ms\n\n모델: Model-Y\n\n카드: 8\n\n"
		"모델 배포 (Model Deployment)\n\nexport B=2\n\n벤치마크 (Benchmark)\n\npython -m sglang.bench_serving\n\n"
		"더 알아보기 (Learn more)\n\nModel-Z W8A8\n\n모델: Z\n";
	struct read r;
	const struct npl_page_section *s;

	(void)state;
	rd(&r, "y.txt", page);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.p.form, NPL_PAGE_TEXT);
	assert_string_equal(r.p.title, "Model-Y");
	assert_int_equal(r.p.n, 2);
	s = &r.p.v[0];
	assert_string_equal(s->title, "Model-Y W8A8 8P IN3K5 OUT1K5 50ms");
	assert_int_equal(s->loc.line, 12);
	assert_string_equal(s->field[NPL_PAGE_MODE].value, "PD Mixed");
	/* the column counts characters: "배포 모드: " is 7 */
	assert_int_equal(s->field[NPL_PAGE_MODE].loc.col, 8);
	assert_int_equal(s->ndeploy, 1);
	assert_string_equal(s->deploy[0].text, "\nexport A=1\npython3 -m sglang.launch_server \\\n    --tp-size 16\n\n");
	assert_int_equal(s->deploy[0].loc.line, 29);
	assert_int_equal(s->nbench, 1);
	assert_string_equal(s->bench[0].text, "python -m sglang.bench_serving \\\n    --port 6688\n");
	assert_int_equal(s->bench[0].loc.line, 38);
	s = &r.p.v[1];
	assert_string_equal(s->title, "Model-Y W8A8 8P IN3K5 OUT1K5 20ms");
	assert_string_equal(s->bench[0].text, "python -m sglang.bench_serving\n");
	done(&r);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(FRONT "### T\n\n**Model**: X\n\n**Nodes**: 2\n\n#### Model Deployment\n\n```bash Command\nx\n```\n",
		     "p.mdx:10:3: error: unknown metadata 'Nodes' (known: Model, Hardware, Cards, Deploy Mode, Quantization, Dataset, TPOT, TTFT, Format)");
	expect_error(FRONT "### T\n\n**Model**: X\n**Model**: Y\n\n#### Model Deployment\n\n```bash Command\nx\n```\n",
		     "p.mdx:9:1: error: 'Model' is given twice in this section");
	expect_error(FRONT "### T\n\n**Model**: X\n\n#### Model Deployment\n\n```bash Command\nx\n",
		     "p.mdx:12:1: error: the code block opened here is never closed");
	expect_error(FRONT "### T\n\n**Model**: X\n\n#### Model Deployment\n\n```python\nx\n```\n",
		     "p.mdx:12:4: error: a 'python' block where shell (bash Command) is expected");
	expect_error(FRONT "### T\n\n**Model**: X\n\n```bash Command\nx\n```\n\n#### Model Deployment\n\n```bash\ny\n```\n",
		     "p.mdx:10:1: error: a code block outside 'Model Deployment' and 'Benchmark' in section 'T'");
	expect_error(FRONT "### T\n\n**Model**: X\n\n#### Benchmark\n\n```bash Command\nx\n```\n",
		     "p.mdx:6:5: error: section 'T' has no deployment shell");
	expect_error(FRONT "### Only prose\n\nText.\n", "p.mdx:1:1: error: no recipe section in this page");
	/* SGLang's older combined page has no front matter and writes its metadata "Model: X": its
	   fenced blocks make it MDX, so its sections are found (and a stage that needs the metadata
	   says so at the heading) rather than "no recipe section" at its first line */
	{
		struct read r;

		rd(&r, "p.mdx", "Prose first.\n\n## DeepSeek Series Models\n\n### T 8 Cards Mixed Mode\n\nModel: Deepseek R1\n\n"
				"#### Model Deployment\n\n```shell Command\nx\n```\n");
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.p.form, NPL_PAGE_MDX);
		assert_int_equal(r.p.n, 1);
		assert_string_equal(r.p.v[0].title, "T 8 Cards Mixed Mode");
		assert_int_equal(r.p.v[0].loc.line, 5);
		assert_null(r.p.v[0].field[NPL_PAGE_MODEL].value);
		done(&r);
	}
	expect_error("---\ntitle: x\n", "p.mdx:1:1: error: the front matter opened here is never closed");
	expect_error("T\n\n최적 구성 (Optimal Configuration)\n\nT 8P\n\n모델: T\n\n모델 배포 (Model Deployment)\n\nx\n\n"
		     "벤치마크 (Benchmark)\n\npython -m sglang.bench_serving \\\n",
		     "p.mdx:15:1: error: the benchmark command never ends");
	expect_error("T\n\n최적 구성 (Optimal Configuration)\n\nT 8P\n\n모델: T\n\n모델 배포 (Model Deployment)\n\nx\n",
		     "p.mdx:9:1: error: '모델 배포 (Model Deployment)' has no '벤치마크 (Benchmark)' after it");
}

static void test_nul_byte(void **state)
{
	static const char text[] = FRONT "### T\0\n";
	struct npl_arena a;
	struct npl_diag d = NPL_DIAG_INIT;
	struct npl_page p;
	char *msg;

	(void)state;
	npl_arena_init(&a);
	assert_int_equal(npl_page_read(&p, "p.mdx", text, sizeof(text) - 1, &a, &d), -1);
	assert_int_equal(d.n, 1);
	msg = npl_diag_format(&d, &d.v[0], 0);
	assert_string_equal(msg, "p.mdx:1:1: error: not a text page: it holds a NUL byte");
	free(msg);
	npl_diag_release(&d);
	npl_arena_release(&a);
}

/* Every page of the test data: the section counts of their INDEX.md files (22 seed, 36 older,
 * 61 newest), the first and last titles of some, MiMo's untitled section. */
static void test_shipped_pages(void **state)
{
	static const struct {
		const char *file;
		int n;
		const char *first, *last;
	} pages[] = {
		{"seeds/000_78a205449ed7d349.txt", 9, "Kimi-K2.6 W4A8 16P IN64K OUT1K 100ms", "Kimi-K2.6 W4A8 8P IN3K5 OUT1K5 50ms"},
		{"seeds/003_2f7fa61e4c9afacc.txt", 10, NULL, NULL},
		{"seeds/004_cbd5c8e06e814ffc.txt", 3, NULL, NULL},
		{"upstream/deepseek_r1.mdx", 7, NULL, NULL},
		{"upstream/deepseek_v3_2.mdx", 3, NULL, NULL},
		{"upstream/qwen3_235b_a22b.mdx", 2, NULL, NULL},
		{"upstream/qwen3_30b_a3b.mdx", 3, "qwen3 30b w8a8 1p in3k5 out1k5 10ms", NULL},
		{"upstream/qwen3_6_27b.mdx", 7, NULL, NULL},
		{"upstream/qwen3_6_35b_a3b.mdx", 8, NULL, NULL},
		{"upstream/qwen3_8b.mdx", 3, NULL, NULL},
		{"upstream/qwen3_next_80b_a3b_instruct.mdx", 3, NULL, NULL},
		{"upstream-2026/deepseek_r1.mdx", 7, "DeepSeek-R1 W4A8 1P1D 16P IN3K5 OUT1K5 50ms", "DeepSeek-R1 W8A8 2P1D 32P IN6K OUT1K6 20.5ms"},
		{"upstream-2026/deepseek_v3_2.mdx", 3, NULL, NULL},
		{"upstream-2026/deepseek_v4_flash.mdx", 3, NULL, NULL},
		{"upstream-2026/glm_5_2.mdx", 1, "GLM-5.2 W4A8 3P1D 32P IN16K OUT1K 50ms", NULL},
		{"upstream-2026/kimi_k2_6.mdx", 9, NULL, NULL},
		{"upstream-2026/mimo_v2_5_pro.mdx", 1, NULL, NULL},
		{"upstream-2026/qwen3_235b_a22b.mdx", 2, NULL, NULL},
		{"upstream-2026/qwen3_30b_a3b.mdx", 4, NULL, NULL},
		{"upstream-2026/qwen3_5_397b.mdx", 10, NULL, NULL},
		{"upstream-2026/qwen3_6_27b.mdx", 7, NULL, NULL},
		{"upstream-2026/qwen3_6_35b_a3b.mdx", 8, NULL, NULL},
		{"upstream-2026/qwen3_8b.mdx", 3, NULL, NULL},
		{"upstream-2026/qwen3_next_80b_a3b_instruct.mdx", 3, NULL, NULL},
	};
	int total[3] = {0, 0, 0};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char path[512];
		struct npl_arena a;
		struct npl_diag d = NPL_DIAG_INIT;
		struct npl_page p;
		size_t len;
		char *text;
		int k, rc;

		snprintf(path, sizeof(path), "%s/pages/%s", NPL_DATA_DIR, pages[i].file);
		npl_arena_init(&a);
		text = npl_read_file(path, &len, &d);
		assert_non_null(text);
		rc = npl_page_read(&p, pages[i].file, text, len, &a, &d);
		if (rc || p.n != pages[i].n)
			print_error("%s: rc %d, %d sections, %d messages\n", pages[i].file, rc, p.n, d.n);
		assert_int_equal(rc, 0);
		assert_int_equal(d.n, 0);
		assert_int_equal(p.n, pages[i].n);
		if (pages[i].first)
			assert_string_equal(p.v[0].title, pages[i].first);
		if (pages[i].last)
			assert_string_equal(p.v[p.n - 1].title, pages[i].last);
		/* every section: a model (but MiMo's), a deployment, a benchmark */
		for (k = 0; k < p.n; k++) {
			assert_true(p.v[k].ndeploy >= 1);
			assert_true(p.v[k].nbench >= 1);
			assert_true(p.v[k].title == NULL || p.v[k].field[NPL_PAGE_MODEL].value != NULL);
		}
		total[strncmp(pages[i].file, "seeds/", 6) == 0 ? 0 : strncmp(pages[i].file, "upstream/", 9) == 0 ? 1 : 2] += p.n;
		free(text);
		npl_diag_release(&d);
		npl_arena_release(&a);
	}
	assert_int_equal(total[0], 22);
	assert_int_equal(total[1], 36);
	assert_int_equal(total[2], 61);
}

/* The reference pages have no recipe: a located refusal, not an empty import. */
static void test_reference_pages(void **state)
{
	static const char *const files[] = {"upstream/glossary.mdx", "upstream-2026/glossary.mdx",
					    "upstream-2026/knowledge_base.mdx"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[512], *text, *msg, want[256];
		struct npl_arena a;
		struct npl_diag d = NPL_DIAG_INIT;
		struct npl_page p;
		size_t len;

		snprintf(path, sizeof(path), "%s/pages/%s", NPL_DATA_DIR, files[i]);
		npl_arena_init(&a);
		text = npl_read_file(path, &len, &d);
		assert_non_null(text);
		assert_int_equal(npl_page_read(&p, files[i], text, len, &a, &d), -1);
		assert_int_equal(d.n, 1);
		msg = npl_diag_format(&d, &d.v[0], 0);
		snprintf(want, sizeof(want), "%s:1:1: error: no recipe section in this page", files[i]);
		assert_string_equal(msg, want);
		free(msg);
		free(text);
		npl_diag_release(&d);
		npl_arena_release(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mdx_section),
		cmocka_unit_test(test_mdx_untitled_and_prose),
		cmocka_unit_test(test_text_form),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_shipped_pages),
		cmocka_unit_test(test_reference_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
