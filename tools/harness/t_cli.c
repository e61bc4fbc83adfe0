// SPDX-License-Identifier: GPL-2.0
/*
 * t_cli: svodctl as scripts use it. Every listing's --json parsed (a small
 * strict JSON parser below) and compared with QUERY (tiers), configfs
 * (declare) and /proc/self/fdinfo (top); -o/--raw/--noheadings; top -d;
 * the number grammar (1MiB = 1M, 1MB refused); --version; every exit status (0, 1, 2, 3) with the
 * messages that say what to do: the driver "not loaded" (seen from a mount
 * namespace that hides /dev, /sys/module and the PCI drivers) and "no
 * permission" (run as uid 65534); getopt_long's forms (-rnoNAME, -Jn,
 * -d0.5, a bad option named), `run`'s exit status, and each listing's
 * heading against the column list its --help prints. Also the kernel's "bound:" line per
 * device and the svod tracepoints (skipped without tracefs events).
 * Runs the svodctl that sits next to this binary.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "tap.h"

#define NR_CASES	36

enum { AS_ROOT, AS_UNLOADED, AS_NOBODY };


static char svodctl[4200];
static char out[65536], err[4096];

/* ---- a strict JSON parser: objects, arrays, strings, numbers, literals ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

/**
 * struct jv - a JSON value
 * @t: type
 * @u: an integer number's exact value (@is_int)
 * @is_int: the number had no fraction or exponent
 * @num: the number as a double
 * @str: a string's text (NUL-terminated, escapes decoded)
 * @kids: members of an array or object
 * @keys: keys of an object's members
 * @n: members
 */
struct jv {
	enum jtype t;
	uint64_t u;
	int is_int;
	double num;
	char *str;
	struct jv *kids;
	char **keys;
	unsigned int n;
};

static const char *jws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *jstr(const char *p, char **s)
{
	char *o = malloc(strlen(p) + 1), *w = o;

	if (!o || *p++ != '"')
		goto bad;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			goto bad;
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case '"': case '\\': case '/':
			*w++ = *p;
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'u':
			if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]) ||
			    !isxdigit((unsigned char)p[3]) || !isxdigit((unsigned char)p[4]))
				goto bad;
			*w++ = (char)strtol((char[]){ p[3], p[4], 0 }, NULL, 16);
			p += 4;
			break;
		default:
			goto bad;
		}
		p++;
	}
	*w = '\0';
	*s = o;
	return p + 1;
bad:
	free(o);
	return NULL;
}

static const char *jparse(const char *p, struct jv *v);

static const char *jlist(const char *p, struct jv *v, char close)
{
	struct jv *kids;
	char **keys;

	p = jws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		kids = realloc(v->kids, (v->n + 1) * sizeof(*kids));
		keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
		if (kids)
			v->kids = kids;
		if (keys)
			v->keys = keys;
		if (!kids || !keys)
			return NULL;
		v->keys[v->n] = NULL;
		if (close == '}') {
			p = jstr(jws(p), &v->keys[v->n]);
			if (!p || *(p = jws(p)) != ':')
				return NULL;
			p++;
		}
		p = jparse(p, &v->kids[v->n++]);
		if (!p)
			return NULL;
		p = jws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *jparse(const char *p, struct jv *v)
{
	char *end;

	memset(v, 0, sizeof(*v));
	p = jws(p);
	if (*p == '{') {
		v->t = J_OBJ;
		return jlist(p, v, '}');
	}
	if (*p == '[') {
		v->t = J_ARR;
		return jlist(p, v, ']');
	}
	if (*p == '"') {
		v->t = J_STR;
		return jstr(p, &v->str);
	}
	if (!strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
		v->t = J_BOOL;
		v->u = *p == 't';
		return p + (*p == 't' ? 4 : 5);
	}
	if (*p == '-' || isdigit((unsigned char)*p)) {
		v->t = J_NUM;
		v->num = strtod(p, &end);
		v->is_int = *p != '-' && !memchr(p, '.', (size_t)(end - p)) &&
			    !memchr(p, 'e', (size_t)(end - p)) && !memchr(p, 'E', (size_t)(end - p));
		if (v->is_int)
			v->u = strtoull(p, NULL, 10);
		return end;
	}
	return NULL;
}

static void jfree(struct jv *v)
{
	unsigned int i;

	for (i = 0; i < v->n; i++) {
		jfree(&v->kids[i]);
		free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

/* One whole document in @s (trailing blanks only): 0 or -EINVAL. */
static int jdoc(const char *s, struct jv *v)
{
	const char *p = jparse(s, v);

	if (!p || *jws(p)) {
		jfree(v);
		return -EINVAL;
	}
	return 0;
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	unsigned int i;

	for (i = 0; o && o->t == J_OBJ && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

/* The exact integer at @key, or UINT64_MAX. */
static uint64_t ju(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->t == J_NUM && v->is_int ? v->u : UINT64_MAX;
}

static const char *js(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);

	return v && v->t == J_STR ? v->str : "";
}

/* The array of a listing: {"<name>": [...]}. */
static const struct jv *jlisting(const struct jv *doc, const char *name)
{
	const struct jv *a = jget(doc, name);

	return doc->n == 1 && a && a->t == J_ARR ? a : NULL;
}

/* ---- running svodctl ---- */

static void slurp(const char *path, char *buf, size_t len)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;
	ssize_t n = 0;

	while (f >= 0 && used < len - 1 && (n = read(f, buf + used, len - 1 - used)) > 0)
		used += (size_t)n;
	buf[used] = '\0';
	if (f >= 0)
		close(f);
}

/* Hide what a loaded svod shows: its device node, module and PCI driver. */
static int unload_view(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	if (mount("tmpfs", "/dev", "tmpfs", 0, NULL) ||
	    mount("tmpfs", "/sys/module", "tmpfs", 0, NULL) ||
	    mount("tmpfs", "/sys/bus/pci/drivers", "tmpfs", 0, NULL))
		return -1;
	return 0;
}

/* Run svodctl @args (NULL-terminated) as @who; its exit status. */
static int run_as(int who, const char *const *args)
{
	const char *argv[24] = { svodctl };
	int status, i;
	pid_t pid;

	for (i = 0; args[i] && i < 22; i++)
		argv[i + 1] = args[i];
	pid = fork();
	if (pid == 0) {
		int o = open("/tmp/t_cli.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("/tmp/t_cli.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int n = open("/dev/null", O_RDONLY);
		/* Opened as root: uid 65534 may not search the initramfs's root. */
		int x = open(svodctl, O_RDONLY | O_CLOEXEC);

		dup2(n, 0);
		dup2(o, 1);
		dup2(e, 2);
		if (who == AS_UNLOADED && unload_view())
			_exit(120);
		if (who == AS_NOBODY && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			_exit(121);
		fexecve(x, (char **)argv, environ);
		_exit(127);
	}
	status = pid > 0 ? ht_wait_exit(pid) : -1;
	slurp("/tmp/t_cli.out", out, sizeof(out));
	slurp("/tmp/t_cli.err", err, sizeof(err));
	return status;
}

static int run(const char *const *args)
{
	return run_as(AS_ROOT, args);
}

#define ARGS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* ---- the cases ---- */

/* Does a "tiers" JSON row say what QUERY says of @t? */
static int tier_row_matches(const struct jv *r, const struct svod_tier_info *t)
{
	uint64_t used = t->capacity - t->reserved_bytes - t->free_bytes;

	return ju(r, "id") == t->id && !strncmp(js(r, "name"), t->name, SVOD_NAME_LEN) &&
	       !strncmp(js(r, "device"), t->device, SVOD_NAME_LEN) &&
	       ju(r, "base") == t->device_base && ju(r, "capacity") == t->capacity &&
	       ju(r, "used") == used && ju(r, "free") == t->free_bytes &&
	       ju(r, "largest_free") == t->largest_free && ju(r, "live") == t->nr_live &&
	       ju(r, "align") == t->align && ju(r, "reserved") == t->reserved_bytes &&
	       ju(r, "free_spans") == t->nr_free_spans && jget(r, "use_pct") &&
	       jget(r, "use_pct")->t == J_NUM && jget(r, "reserved_regions") &&
	       !strcmp(js(r, "usable"), t->flags & SVOD_TIER_NO_ACCESS ? "no" : "yes") &&
	       strlen(js(r, "mode")) == 4 && jget(r, "owner") && jget(r, "group") &&
	       !strcmp(js(r, "state"), t->flags & SVOD_TIER_GONE ? "gone" : "ok");
}

static void test_tiers_json(int fd)
{
	struct svod_tier_info *tiers = NULL;
	const struct jv *a;
	uint32_t nr = 0, i, j, matched = 0;
	struct jv doc;
	int st, ret;

	st = run(ARGS("tiers", "--json"));
	ret = svod_query_all(fd, &tiers, &nr);
	if (st != 0 || ret || jdoc(out, &doc)) {
		tap_ok(0, "tiers_json_parses (exit %d, query %d)", st, ret);
		tap_skip("no JSON", "tiers_json_matches_query");
		free(tiers);
		return;
	}
	a = jlisting(&doc, "tiers");
	tap_ok(a && a->n == nr, "tiers_json_parses (%u rows, %u tiers)", a ? a->n : 0, nr);
	for (i = 0; a && i < a->n; i++)
		for (j = 0; j < nr; j++)
			if (ju(&a->kids[i], "id") == tiers[j].id &&
			    tier_row_matches(&a->kids[i], &tiers[j]))
				matched++;
	tap_ok(a && matched == nr && nr > 0, "tiers_json_matches_query (%u of %u)", matched, nr);
	jfree(&doc);
	free(tiers);
}

/* "64.0 MiB": the human size svodctl prints, restated. */
static void svodctl_size_ref(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, len, " %.1f %s ", v, units[u]);
	else
		snprintf(buf, len, " %" PRIu64 " B ", bytes);
}

static void test_tiers_columns(const struct svod_tier_info *t)
{
	char want[128];
	int st;

	snprintf(want, sizeof(want), "%.*s %" PRIu64 "\n", SVOD_NAME_LEN, t->name,
		 (uint64_t)t->capacity);
	st = run(ARGS("tiers", "-o", "NAME,CAPACITY", "--raw", "--noheadings"));
	tap_ok(st == 0 && strstr(out, want) && !strstr(out, "NAME"),
	       "tiers_o_raw_noheadings_exact_bytes (%d: %.*s)", st, (int)strcspn(out, "\n"), out);
	st = run(ARGS("tiers"));
	{
		char head[160], cap[32];
		int k, w = 0;

		/* The heading's words in order, then the tier's row for humans. */
		sscanf(out, "%159[^\n]", head);
		for (k = 0; head[k]; k++)
			if (head[k] != ' ' || (k && head[k - 1] != ' '))
				head[w++] = head[k];
		head[w] = '\0';
		svodctl_size_ref(t->capacity, cap, sizeof(cap));
		tap_ok(st == 0 && !strcmp(head, "ID NAME DEVICE BASE CAPACITY USED USE% LARGEST "
					   "LIVE ALIGN RESERVED OWNER GROUP MODE STATE") && strstr(out, cap),
		       "tiers_default_table_heading_and_human_sizes (%d: %s; %s)", st, head, cap);
		tap_diag("svodctl tiers:\n%s", out);
	}
	st = run(ARGS("tiers", "-o", "+free_spans"));
	tap_ok(st == 0 && !strncmp(out, "ID ", 3) && strstr(out, " SPANS\n"),
	       "tiers_o_plus_adds_a_column (%d)", st);
	st = run(ARGS("tiers", "-o", "NAME,BOGUS"));
	tap_ok(st == 2 && strstr(err, "unknown column \"BOGUS\"") && strstr(err, "CAPACITY"),
	       "tiers_unknown_column_exit_2_lists_columns (%d)", st);
}

/* This process's row in `top --json`: bytes and handles as fdinfo says. */
static void test_top_json(int fd, const struct svod_tier_info *t)
{
	char path[64], line[256], client[32] = "", *v;
	const struct jv *a, *r;
	unsigned int i, found = 0;
	struct svod_alloc al;
	struct jv doc;
	FILE *f;
	int st;

	if (svod_alloc(fd, t->id, 3 << 20, 0, &al)) {
		tap_skip("alloc failed", "top_json_matches_fdinfo");
		tap_skip("alloc failed", "top_d_count_prints_count_documents");
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "drm-client-id:", 14)) {
			v = line + 14 + strspn(line + 14, " \t");
			snprintf(client, sizeof(client), "%.*s", (int)strcspn(v, "\n"), v);
		}
	if (f)
		fclose(f);
	st = run(ARGS("top", "--json"));
	if (st == 0 && !jdoc(out, &doc)) {
		a = jlisting(&doc, "processes");
		for (i = 0; a && i < a->n; i++) {
			r = &a->kids[i];
			if (ju(r, "pid") == (uint64_t)getpid() && ju(r, "fd") == (uint64_t)fd &&
			    !strncmp(js(r, "tier"), t->name, SVOD_NAME_LEN) &&
			    ju(r, "bytes") == al.capacity && ju(r, "handles") == 1 &&
			    ju(r, "client") == strtoull(client, NULL, 10) && !strcmp(js(r, "comm"), "t_cli"))
				found++;
		}
		jfree(&doc);
	}
	tap_ok(found == 1 && client[0], "top_json_matches_fdinfo (%d, %u rows)", st, found);
	run(ARGS("top"));
	tap_diag("svodctl top:\n%s", out);

	st = run(ARGS("top", "-d", "0.05", "-c", "2", "--json"));
	{
		const char *p = out;
		int docs = 0;

		while (st == 0 && *jws(p)) {
			p = jparse(p, &doc);
			if (!p || !jlisting(&doc, "processes")) {
				jfree(&doc);
				docs = -1;
				break;
			}
			jfree(&doc);
			docs++;
		}
		tap_ok(st == 0 && docs == 2, "top_d_count_prints_count_documents (%d, %d)", st, docs);
	}
	svod_free(fd, al.handle);
}

static void test_declare_json(void)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	char bdfs[8][SVOD_NAME_LEN];
	unsigned int rows = 0, matched = 0, i;
	const struct jv *a, *r;
	int nr, d, k, n, st;
	struct jv doc;

	nr = svod_devices(bdfs, 8);
	st = run(ARGS("declare", "--json"));
	if (st != 0 || nr <= 0 || jdoc(out, &doc)) {
		tap_ok(0, "declare_json_matches_live_tiers (%d, %d devices)", st, nr);
		return;
	}
	a = jlisting(&doc, "devices");
	for (d = 0; d < nr && d < 8; d++) {
		n = svod_decl_read(bdfs[d], decls, SVOD_DECL_MAX_TIERS);
		for (k = 0; k < n; k++, rows++)
			for (i = 0; a && i < a->n; i++) {
				r = &a->kids[i];
				if (!strcmp(js(r, "device"), bdfs[d]) &&
				    !strcmp(js(r, "name"), decls[k].name) &&
				    ju(r, "bar") == decls[k].bar && ju(r, "offset") == decls[k].offset &&
				    ju(r, "size") == decls[k].size && ju(r, "base") == decls[k].base &&
				    ju(r, "align") == decls[k].align)
					matched++;
			}
	}
	tap_ok(a && rows && matched == rows && a->n == rows,
	       "declare_json_matches_live_tiers (%u of %u rows)", matched, rows);
	jfree(&doc);
}

static void test_exit_codes(const struct svod_tier_info *t)
{
	char id[16], want[64];
	int st;

	snprintf(id, sizeof(id), "%u", t->id);
	st = run(ARGS("--version"));
	snprintf(want, sizeof(want), "svodctl %s\n", SVOD_VERSION);
	tap_ok(st == 0 && !strcmp(out, want), "version_exit_0 (%d: %.*s)", st,
	       (int)strcspn(out, "\n"), out);
	st = run(ARGS("plan", "--help"));
	tap_ok(st == 0 && strstr(out, "usage: svodctl plan"), "plan_help_exit_0 (%d)", st);
	st = run(ARGS("tiers", "--help"));
	tap_ok(st == 0 && strstr(out, "--json"), "tiers_help_exit_0 (%d)", st);
	st = run(ARGS("alloc", id));
	tap_ok(st == 2 && strstr(err, "usage: svodctl alloc"), "missing_argument_exit_2 (%d)", st);
	st = run(ARGS("alloc", id, "1XiB"));
	tap_ok(st == 2, "bad_size_suffix_exit_2 (%d)", st);
	st = run(ARGS("top", "-d", "0"));
	tap_ok(st == 2, "top_d_zero_exit_2 (%d)", st);
	st = run(ARGS("tiers", "--bogus"));
	tap_ok(st == 2, "unknown_option_exit_2 (%d)", st);
	st = run(ARGS("alloc", id, "1MiB"));
	tap_ok(st == 0 && strstr(out, " capacity 1048576\n"), "size_1MiB_is_2_pow_20 (%d: %.*s)",
	       st, (int)strcspn(out, "\n"), out);
	st = run(ARGS("alloc", id, "1M"));
	tap_ok(st == 0 && strstr(out, " capacity 1048576\n"), "size_1M_is_2_pow_20 (%d)", st);
	st = run(ARGS("alloc", id, "1MB"));
	tap_ok(st == 2 && strstr(err, "EINVAL: \"1MB\" is not a number: write ") &&
	       strstr(err, "KiB") && strstr(err, "0x"),
	       "size_1MB_refused_exit_2_naming_the_forms (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	st = run(ARGS("alloc", id, "1T"));
	tap_ok(st == 1 && strstr(err, "ENOSPC"), "failure_exit_1 (%d)", st);
}

/* The words of @text's first line, single-spaced, into @head. */
static void heading(const char *text, char *head, size_t len)
{
	size_t w = 0;
	int k;

	for (k = 0; text[k] && text[k] != '\n' && w + 1 < len; k++)
		if (text[k] != ' ' || (w && head[w - 1] != ' '))
			head[w++] = text[k];
	while (w && head[w - 1] == ' ')
		w--;
	head[w] = '\0';
}

/* Options as getopt_long takes them: bundled, attached values, bad ones named. */
static void test_getopt(const struct svod_tier_info *t)
{
	const struct jv *a;
	char want[SVOD_NAME_LEN + 2];
	const char *p;
	struct jv doc;
	int st, n = 0;

	snprintf(want, sizeof(want), "%.*s\n", SVOD_NAME_LEN, t->name);
	st = run(ARGS("tiers", "-rnoNAME"));
	tap_ok(st == 0 && strstr(out, want) && !strstr(out, "NAME"),
	       "tiers_bundled_rno_attached_value (%d: %.*s)", st, (int)strcspn(out, "\n"), out);
	st = run(ARGS("tiers", "-Jn"));
	a = st || jdoc(out, &doc) ? NULL : jlisting(&doc, "tiers");
	tap_ok(a && a->n > 0, "tiers_bundled_Jn_json (%d: %u rows)", st, a ? a->n : 0);
	if (!st && a)
		jfree(&doc);
	st = run(ARGS("top", "-d0.5", "-c1"));
	for (p = out; (p = strstr(p, "--- ")); p++)
		n++;
	tap_ok(st == 0 && n == 1 && strstr(out, "PID "), "top_d0.5_c1_one_snapshot (%d: %d)",
	       st, n);
	st = run(ARGS("tiers", "--jsn"));
	tap_ok(st == 2 && strstr(err, "svodctl: tiers: unrecognized option '--jsn'\n"
				   "usage: svodctl tiers"),
	       "tiers_bad_option_named_exit_2 (%d: %.*s)", st, (int)strcspn(err, "\n"), err);
}

/*
 * Each listing's heading is the column list its --help prints (which is the
 * man page's: tools/svodctl/check_cli.sh).
 */
static void test_columns_one_list(void)
{
	static const char *const cmds[] = { "tiers", "top", "declare" };
	char all[512], dflt[512], sel[512], head[512];
	const char *p, *tag = "Columns (default marked *): ";
	size_t na, nd, ns, k;
	unsigned int i;
	int st, ok;

	for (i = 0; i < 3; i++) {
		st = run(ARGS(cmds[i], "--help"));
		p = strstr(out, tag);
		na = nd = ns = 0;
		/* "ID* NAME* FREE ...": every name, the starred ones, and "ID,NAME,...". */
		for (p = p ? p + strlen(tag) : ""; *p && *p != '.' && *p != '\n'; p += k) {
			k = strcspn(p, " *.\n");
			if (!k) {
				k = 1;
				continue;
			}
			na += (size_t)snprintf(all + na, sizeof(all) - na, "%s%.*s", na ? " " : "",
					       (int)k, p);
			ns += (size_t)snprintf(sel + ns, sizeof(sel) - ns, "%s%.*s", ns ? "," : "",
					       (int)k, p);
			if (p[k] == '*')
				nd += (size_t)snprintf(dflt + nd, sizeof(dflt) - nd, "%s%.*s",
						       nd ? " " : "", (int)k, p);
		}
		all[na] = dflt[nd] = sel[ns] = '\0';
		ok = st == 0 && na && nd;
		st = run(ARGS(cmds[i], "-o", sel));
		heading(out, head, sizeof(head));
		ok = ok && st == 0 && !strcmp(head, all);
		if (!ok)
			tap_diag("%s -o ALL: %s; help: %s", cmds[i], head, all);
		st = run(ARGS(cmds[i], "-o+"));
		heading(out, head, sizeof(head));
		ok = ok && st == 0 && !strcmp(head, dflt);
		if (!ok)
			tap_diag("%s -o+: %s; help's defaults: %s", cmds[i], head, dflt);
		tap_ok(ok, "%s_heading_is_help_column_list", cmds[i]);
	}
}

static void test_not_loaded(void)
{
	static const char *const cmds[] = { "tiers", "top", "declare" };
	unsigned int i;
	FILE *f;
	int st;

	for (i = 0; i < 3; i++) {
		st = run_as(AS_UNLOADED, ARGS(cmds[i]));
		tap_ok(st == 3 && strstr(err, "not loaded") && strstr(err, "modprobe svod") &&
		       !out[0], "%s_driver_not_loaded_exit_3_says_modprobe (%d: %.*s)", cmds[i],
		       st, (int)strcspn(err, "\n"), err);
	}
	st = run_as(AS_UNLOADED, ARGS("alloc", "0", "4k"));
	tap_ok(st == 3 && strstr(err, "modprobe svod"), "alloc_driver_not_loaded_exit_3 (%d)", st);
	f = fopen("/tmp/t_cli.run", "we");
	if (f) {
		fputs("alloc 0 4k\n", f);
		fclose(f);
	}
	st = run_as(AS_UNLOADED, ARGS("run", "/tmp/t_cli.run"));
	tap_ok(st == 3 && strstr(err, "modprobe svod"), "run_driver_not_loaded_exit_3 (%d)", st);
}

static void test_no_permission(void)
{
	struct stat sb;
	int st;

	if (stat(SVOD_DEV_PATH, &sb) || (sb.st_mode & 0006)) {
		tap_skip("/dev/svod is world-accessible", "tiers_no_permission_exit_3_says_usermod");
		tap_skip("/dev/svod is world-accessible", "alloc_no_permission_exit_3");
		return;
	}
	st = run_as(AS_NOBODY, ARGS("tiers"));
	tap_ok(st == 3 && strstr(err, "EACCES") && strstr(err, "usermod -aG svod") &&
	       strstr(err, "group svod"), "tiers_no_permission_exit_3_says_usermod (%d: %.*s)", st,
	       (int)strcspn(err, "\n"), err);
	st = run_as(AS_NOBODY, ARGS("alloc", "0", "4k"));
	tap_ok(st == 3 && strstr(err, "usermod -aG svod"), "alloc_no_permission_exit_3 (%d)", st);
}

/* Every bound device has its "bound:" line in the kernel log. */
static void test_bound_line(void)
{
	char bdfs[8][SVOD_NAME_LEN], rec[1024], want[SVOD_NAME_LEN + 32];
	int nr, i, seen = 0, kfd;
	ssize_t n;

	nr = svod_devices(bdfs, 8);
	kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	for (i = 0; kfd >= 0 && i < nr && i < 8; i++) {
		snprintf(want, sizeof(want), "svod %.*s: bound: ", SVOD_NAME_LEN, bdfs[i]);
		lseek(kfd, 0, SEEK_SET);
		while ((n = read(kfd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
			if (n <= 0)
				continue;
			rec[n] = '\0';
			if (strstr(rec, want) && strstr(rec, " bytes (BAR ")) {
				seen++;
				break;
			}
		}
	}
	if (kfd >= 0)
		close(kfd);
	tap_ok(nr > 0 && seen == nr, "kernel_log_bound_line_per_device (%d of %d)", seen, nr);
}

static int write_str(const char *path, const char *s)
{
	int f = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	int ret = f < 0 ? -errno : ht_write_all(f, s, strlen(s));

	if (f >= 0)
		close(f);
	return ret;
}

/* svod:svod_{alloc,stage,read,free} for one session, in the trace buffer. */
static void test_tracepoints(int fd, const struct svod_tier_info *t)
{
	static const char *const ev[] = { "svod_alloc:", "svod_stage:", "svod_read:",
					  "svod_free:" };
	const char *tr = "/sys/kernel/tracing";
	char path[128], name[80], buf[64];
	struct svod_alloc al;
	unsigned int i, seen = 0;
	uint64_t done;

	snprintf(path, sizeof(path), "%s/events/svod/enable", tr);
	if (access(path, W_OK)) {
		mount("nodev", tr, "tracefs", 0, NULL);
		if (access(path, W_OK)) {
			tap_skip("no tracefs events/svod (kernel without tracepoints)",
				 "tracepoints_alloc_stage_read_free");
			return;
		}
	}
	snprintf(path, sizeof(path), "%s/trace", tr);
	write_str(path, "");
	snprintf(path, sizeof(path), "%s/events/svod/enable", tr);
	write_str(path, "1");
	memset(buf, 7, sizeof(buf));
	if (!svod_alloc(fd, t->id, 4096, 0, &al)) {
		svod_stage(fd, al.handle, 0, buf, sizeof(buf), SVOD_XFER_CPU, &done);
		svod_read(fd, al.handle, 0, buf, sizeof(buf), SVOD_XFER_CPU, &done);
		svod_free(fd, al.handle);
	}
	write_str(path, "0");
	snprintf(path, sizeof(path), "%s/trace", tr);
	slurp(path, out, sizeof(out));
	snprintf(name, sizeof(name), "name=%.*s handle=0x%" PRIx64, SVOD_NAME_LEN, t->name,
		 (uint64_t)al.handle);
	for (i = 0; i < 4; i++) {
		const char *l = strstr(out, ev[i]);

		if (l && strstr(l, name) && strstr(l, "latency_ns=") &&
		    (i == 0 || i == 3 || strstr(l, "engine=cpu")))
			seen++;
	}
	tap_ok(seen == 4, "tracepoints_alloc_stage_read_free (%u of 4)", seen);
	if (seen != 4)
		tap_diag("trace: %.400s", out);
}

int main(void)
{
	struct svod_tier_info t;
	ssize_t n;
	int fd, ret;

	tap_plan(NR_CASES);
	n = readlink("/proc/self/exe", svodctl, sizeof(svodctl) - 16);
	if (n <= 0)
		return tap_done();
	svodctl[n] = '\0';
	strcpy(strrchr(svodctl, '/') + 1, "svodctl");
	fd = ht_open();
	ret = fd < 0 ? fd : ht_first_tier(fd, &t);
	if (ret) {
		tap_diag("no tier: %s", svod_errno_name(ret));
		return tap_done();
	}
	test_tiers_json(fd);
	test_tiers_columns(&t);
	test_top_json(fd, &t);
	test_declare_json();
	test_exit_codes(&t);
	test_getopt(&t);
	test_columns_one_list();
	test_not_loaded();
	test_no_permission();
	test_bound_line();
	test_tracepoints(fd, &t);
	svod_close(fd);
	/* Live tiers are back as they were: forget the declarations made. */
	ht_undeclare_all();
	return tap_done();
}
