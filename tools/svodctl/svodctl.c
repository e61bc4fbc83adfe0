// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * svodctl: list tiers, show who holds what, allocate/resolve/free, stage and
 * read bytes, declare tiers (save and restore them: persist.c), run a
 * scripted session, and the demo.
 *
 * A handle lives only as long as the open file of /dev/svod that issued it,
 * so alloc, resolve, free, stage and read are meant to be chained in one
 * process: `svodctl run` reads one command per line and runs them all on
 * the same open file, where "%N" names the handle of the N-th alloc and "%"
 * the latest. Run on their own they show the isolation rules (a handle
 * printed by another process is refused with ESTALE).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svodctl.h"

/* Long options without a short form: vals beyond any letter. */
enum { OPT_HOLD = 256, OPT_CPU, OPT_DMA, OPT_FILE, OPT_PATTERN, OPT_LENGTH, OPT_SAVE };

#define MAX_SESSION_HANDLES	256
#define MAX_RUN_ARGS		16

/* The open file every command of this process uses (one per process). */
static int session_fd = -1;
/* Handles allocated in this process, for "%N" in `svodctl run`. */
static uint64_t session_handles[MAX_SESSION_HANDLES];
static unsigned int nr_session_handles;

struct svodctl_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
	const struct svodctl_listing *listing;
};

static const struct svodctl_cmd cmds[] = {
	{ "tiers", svodctl_cmd_tiers, "[-J|--json] [-o COLUMNS] [-r|--raw] [-n|--noheadings]",
	  "List every tier: id, name, device, base, capacity, usage, live allocations,\n"
	  "\twho may use it (-o +COL adds to the default columns).",
	  &svodctl_tiers_listing },
	{ "top", svodctl_cmd_top,
	  "[-d SECONDS [-c COUNT]] [-J|--json] [-o COLUMNS] [-r|--raw] [-n|--noheadings]",
	  "Show which processes hold which bytes (from /proc/*/fdinfo of /dev/svod,\n"
	  "\tand debugfs svod/state when mounted); -d (--delay) repeats every SECONDS\n"
	  "\t(-c, --count: COUNT times, default until interrupted).",
	  &svodctl_top_listing },
	{ "alloc", svodctl_cmd_alloc, "TIER SIZE [ALIGN] [--hold]",
	  "Allocate SIZE bytes (1M, 1MiB, 64k, 0x1000) in TIER (id or name); ALIGN 0 or\n"
	  "\ta power of two. --hold keeps the allocation until stdin closes or a\n"
	  "\tsignal arrives (handles die with the process's open file).",
	  NULL },
	{ "free", svodctl_cmd_free, "HANDLE",
	  "Free an allocation (in `svodctl run`: a handle lives in its open file).",
	  NULL },
	{ "resolve", svodctl_cmd_resolve, "HANDLE",
	  "Print the tier, device address and capacity of a handle (in `svodctl run`).",
	  NULL },
	{ "stage", svodctl_cmd_stage,
	  "HANDLE OFFSET (--file F | --pattern SEED --length N) [--cpu|--dma]",
	  "Copy bytes into an allocation's device memory (in `svodctl run`).",
	  NULL },
	{ "read", svodctl_cmd_read, "HANDLE OFFSET LENGTH [--out F] [--cpu|--dma]",
	  "Copy bytes out of an allocation, hex dump unless --out (in `svodctl run`).",
	  NULL },
	{ "declare", svodctl_cmd_declare,
	  "[BDF [DECLARATION | -]] | --save [FILE | -] |\n"
	  "\t\t[BDF] (-J|--json | -o COLUMNS | -r|--raw | -n|--noheadings)",
	  "Show the live tiers of every device (or of BDF), or declare BDF's\n"
	  "\ttiers as DECLARATION (lines or ';'-separated; '-' reads stdin):\n"
	  "\t<name> bar=<n> offset=<off> size=<bytes> [base=<addr>] [align=<n>]\n"
	  "\t[reserved=<base>+<size>,...] [owner=<uid>] [group=<gid>] [mode=<octal>];\n"
	  "\tnumbers as below, ids decimal, mode octal (default 0 0 0666). Done in\n"
	  "\t" SVOD_CONFIGFS "/BDF/ (mkdir, rmdir, one value per file, commit):\n"
	  "\tapplied at once if BDF is bound, else when it binds, and again at\n"
	  "\tevery bind. Needs root. With an output option, a listing. --save\n"
	  "\twrites every declaration configfs holds to FILE (replaced whole; none\n"
	  "\tor '-': stdout), one \"BDF <tier>\" per line, for `svodctl restore`.",
	  &svodctl_declare_listing },
	{ "undeclare", svodctl_cmd_undeclare, "BDF",
	  "Remove BDF's declaration from configfs: its live tiers stay until it\n"
	  "\tbinds again, with its default tier. svod.ko cannot be unloaded while\n"
	  "\ta declaration exists.",
	  NULL },
	{ "restore", svodctl_cmd_restore, "[-f|--force] FILE",
	  "Declare again what `declare --save` wrote to FILE ('-': stdin), e.g. at\n"
	  "\tboot (svod-restore.service, FILE " SVODCTL_SAVED_PATH "). A device\n"
	  "\tdeclared so already is left alone; one declared otherwise is left alone\n"
	  "\tand fails (exit 1) unless --force replaces it; one not present is\n"
	  "\tskipped (exit 4 if all else went well). A malformed file is refused\n"
	  "\twhole, its line named (exit 2). Needs root.",
	  NULL },
	{ "run", svodctl_cmd_run, "[FILE]",
	  "Run commands, one per line (from FILE or stdin), on one open file;\n"
	  "\t\"%N\" is the handle of the N-th alloc, \"%\" the latest; '#' starts a comment.",
	  NULL },
	{ "demo", svodctl_cmd_demo, "",
	  "A short scripted session: tiers, alloc, resolve, a stale handle refused,\n"
	  "\tan asynchronous STAGE waited for on its fence, a mapping written to,\n"
	  "\ta dma-buf shared with a second process, a holder process seen by top.",
	  NULL },
	{ "plan", svodctl_cmd_plan, "TRACEFILE [options]",
	  "Plan an arena from an event trace (see Documentation/planner.rst).",
	  NULL },
	{ "bench", svodctl_cmd_bench, "[args]",
	  "Run the harness benchmark (t_bench) found next to svodctl or on PATH.",
	  NULL },
};

/**
 * svodctl_err() - print a one-line error naming the errno
 * @cmd: the subcommand
 * @err: -errno (or errno)
 * @fmt: printf format of the context appended to the errno's description
 *	(may be NULL)
 *
 * Prints e.g. "svodctl: alloc: ENOSPC: no space in tier 0".
 *
 * Context: any.
 * Return: 1, the exit status of a failed command.
 */
int svodctl_err(const char *cmd, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "svodctl: %s: %s: %s", cmd, svod_errno_name(err),
		svod_strerror(err));
	if (fmt) {
		fputc(' ', stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	return 1;
}

/**
 * svodctl_open_err() - explain why /dev/svod could not be opened
 * @cmd: the subcommand
 * @err: -errno of the open
 *
 * Says what to do next: load the driver (ENOENT, ENODEV, ENXIO), or join
 * group svod (EACCES, EPERM).
 *
 * Context: any.
 * Return: SVODCTL_NODEV for those, else 1.
 */
int svodctl_open_err(const char *cmd, int err)
{
	const char *dev = getenv("SVOD_DEV") ? getenv("SVOD_DEV") : SVOD_DEV_PATH;

	if (err == -ENOENT || err == -ENODEV || err == -ENXIO) {
		if (access("/sys/module/svod", F_OK))
			fprintf(stderr, "svodctl: %s: %s: %s does not exist: the svod driver is not "
				"loaded (load it: modprobe svod)\n", cmd, svod_errno_name(err), dev);
		else
			fprintf(stderr, "svodctl: %s: %s: %s does not exist although svod is loaded "
				"(is udev running? udevadm trigger --subsystem-match=misc)\n",
				cmd, svod_errno_name(err), dev);
		return SVODCTL_NODEV;
	}
	if (err == -EACCES || err == -EPERM) {
		fprintf(stderr, "svodctl: %s: %s: no permission to open %s: it belongs to group "
			"svod (add yourself: usermod -aG svod $USER, then log in again; or run "
			"as root)\n", cmd, svod_errno_name(err), dev);
		return SVODCTL_NODEV;
	}
	return svodctl_err(cmd, err, "(opening %s)", dev);
}

/*
 * "\tColumns (default marked *): ID* NAME* ...": the line svodctl(1) repeats
 * word for word (tools/svodctl/check_cli.sh compares them) and the bash
 * completion reads.
 */
static void svodctl_print_columns(FILE *out, const struct svodctl_listing *l)
{
	unsigned int c;

	fprintf(out, "\tColumns (default marked *):");
	for (c = 0; c < l->nr_cols; c++)
		fprintf(out, " %s%s", l->cols[c].name,
			l->cols[c].flags & SVODCTL_COL_DEFAULT ? "*" : "");
	fprintf(out, ".\n");
}

/**
 * svodctl_help() - print the help of one subcommand, or of all
 * @cmd: the subcommand, or NULL for the overview
 * @status: exit status to return; usage goes to stderr when nonzero
 *
 * Context: any.
 * Return: @status.
 */
int svodctl_help(const char *cmd, int status)
{
	FILE *out = status ? stderr : stdout;
	unsigned int i;

	if (!cmd)
		fprintf(out, "usage: svodctl COMMAND [ARGS]   (svodctl COMMAND --help; "
			"svodctl --version)\n\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (cmd && strcmp(cmd, cmds[i].name))
			continue;
		fprintf(out, "%ssvodctl %s %s\n\t%s\n", cmd ? "usage: " : "  ",
			cmds[i].name, cmds[i].args, cmds[i].help);
		if (cmds[i].listing)
			svodctl_print_columns(out, cmds[i].listing);
	}
	if (!cmd)
		fprintf(out, "\nListings (tiers, top, declare) take -J (--json), -o COLUMNS, -r (--raw)\n"
			"and -n (--noheadings); short options bundle (-Jn) and take values\n"
			"attached (-d0.5). Numbers (sizes, offsets, handles) are decimal or 0x hex,\n"
			"with an optional K, M, G, T, P, E or KiB, MiB, GiB, TiB, PiB, EiB: powers of\n"
			"1024 (1M = 1MiB = 1048576); 010 and 1MB are refused. Errors print the\n"
			"errno name, e.g. \"svodctl: alloc: ENOSPC: no space in tier 0\". Exit\n"
			"status: 0 ok, 1 failure, 2 usage, 3 /dev/svod missing or not permitted\n"
			"(run: the highest of its lines'), 4 restore: a device not present.\n"
			"svodctl --version; man svodctl.\n");
	return status;
}

/**
 * svodctl_wants_help() - does argv ask for --help?
 * @argc: argument count
 * @argv: arguments, argv[0] the subcommand
 *
 * Context: any.
 * Return: nonzero if -h or --help is among the arguments.
 */
int svodctl_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	return 0;
}

/**
 * svodctl_getopt() - getopt_long() that names a bad option in svodctl's words
 * @argc: argument count
 * @argv: arguments, argv[0] the subcommand
 * @shortopts: getopt's option letters, starting with ':' (a missing
 *	argument is told apart from an unknown option)
 * @longopts: the long options, ending with a zeroed entry
 *
 * Options may come before, between or after the positional arguments
 * (getopt permutes them), bundled (-Jn) and with attached values (-d0.5,
 * --output=NAME); "--" ends them. The caller's dispatcher sets optind to 0
 * before a command runs, so every line of `svodctl run` starts afresh.
 * A bad option prints one line, e.g. "svodctl: tiers: unrecognized option
 * '--jsn'"; the caller then prints its usage and exits 2.
 *
 * Context: main thread.
 * Return: the option's letter (or val), -1 after the last, '?' for a bad one.
 */
int svodctl_getopt(int argc, char **argv, const char *shortopts,
		   const struct option *longopts)
{
	const char *prev;
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	prev = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (c == ':' && !strncmp(prev, "--", 2))
		fprintf(stderr, "svodctl: %s: option '%s' requires an argument\n", argv[0], prev);
	else if (c == ':')
		fprintf(stderr, "svodctl: %s: option requires an argument -- '%c'\n", argv[0],
			optopt);
	else if (!optopt)
		fprintf(stderr, "svodctl: %s: unrecognized option '%s'\n", argv[0], prev);
	else if (!strncmp(prev, "--", 2) &&
		 (optopt > 255 || (optopt != ':' && strchr(shortopts, optopt))))
		fprintf(stderr, "svodctl: %s: option '%.*s' doesn't allow an argument\n",
			argv[0], (int)strcspn(prev, "="), prev);
	else
		fprintf(stderr, "svodctl: %s: invalid option -- '%c'\n", argv[0], optopt);
	return '?';
}

/**
 * svodctl_no_opts() - parse the options of a command that has only --help
 * @argc: argument count
 * @argv: arguments, argv[0] the subcommand
 * @status: out: the exit status when the command should stop
 *
 * Context: main thread.
 * Return: 0 with the positional arguments from argv[optind], else nonzero
 * with *@status 0 (--help printed) or 2 (a bad option, usage printed).
 */
int svodctl_no_opts(int argc, char **argv, int *status)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = svodctl_getopt(argc, argv, ":h", longopts)) != -1) {
		*status = svodctl_help(argv[0], c == 'h' ? 0 : SVODCTL_USAGE);
		return 1;
	}
	return 0;
}

/**
 * svodctl_parse_u64() - parse a number argument, or say why it is refused
 * @cmd: the subcommand, for the message
 * @s: the text, e.g. "4096", "0x1000", "64k", "16M", "1MiB"
 * @val: out: the value
 *
 * svod's one number grammar, svod_parse_size(): the same answers as
 * configfs and Python. A refusal prints one line naming the accepted forms,
 * e.g. "svodctl: alloc: EINVAL: "1MB" is not a number: write a decimal or
 * 0x-hex integer ...".
 *
 * Context: any.
 * Return: 0, -EINVAL if @s is not a number, -ERANGE if it is beyond 64 bits.
 */
int svodctl_parse_u64(const char *cmd, const char *s, uint64_t *val)
{
	int ret = svod_parse_size(s, val);

	if (ret)
		fprintf(stderr, "svodctl: %s: %s: \"%s\" is %s: write %s\n", cmd,
			svod_errno_name(ret), s,
			ret == -ERANGE ? "beyond 2^64 - 1" : "not a number",
			svod_size_forms());
	return ret;
}

/**
 * svodctl_parse_tier() - a tier id from an id or a name
 * @fd: descriptor of /dev/svod
 * @s: decimal id, or a tier name
 * @id: out: the id
 *
 * Context: any.
 * Return: 0, or -errno (-ENOENT for an unknown name).
 */
int svodctl_parse_tier(int fd, const char *s, uint32_t *id)
{
	struct svod_tier_info t;
	uint64_t v;
	int ret;

	if (!svod_parse_size(s, &v) && v <= UINT32_MAX) {
		*id = (uint32_t)v;
		return 0;
	}
	ret = svod_tier_by_name(fd, s, &t);
	if (!ret)
		*id = t.id;
	return ret;
}

static int svodctl_parse_handle(const char *s, uint64_t *h)
{
	uint64_t n;

	if (s[0] == '%') {
		if (!s[1]) {
			if (!nr_session_handles)
				return -ENOENT;
			*h = session_handles[nr_session_handles - 1];
			return 0;
		}
		if (svod_parse_size(s + 1, &n) || n == 0 || n > nr_session_handles)
			return -ENOENT;
		*h = session_handles[n - 1];
		return 0;
	}
	return svod_parse_size(s, h);
}

/**
 * svodctl_session_fd() - the open file of /dev/svod this process uses
 *
 * Opened on first use and kept until exit, so every command of one
 * `svodctl run` sees the same handle table.
 *
 * Context: main thread.
 * Return: the descriptor, or -errno.
 */
int svodctl_session_fd(void)
{
	const char *path = getenv("SVOD_DEV");

	if (session_fd < 0)
		session_fd = svod_open_path(path ? path : SVOD_DEV_PATH);
	return session_fd;
}

/**
 * svodctl_size() - a byte count for humans ("64.0 MiB")
 * @bytes: the count
 * @buf: out
 * @len: bytes at @buf
 *
 * Context: any.
 */
void svodctl_size(uint64_t bytes, char *buf, unsigned int len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

static volatile sig_atomic_t hold_done;

static void hold_signal(int sig)
{
	(void)sig;
	hold_done = 1;
}

/* Wait for EOF on stdin or SIGINT/SIGTERM/SIGHUP. */
static void hold(void)
{
	struct sigaction sa = { .sa_handler = hold_signal };
	char buf[64];

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (!hold_done && read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
}

/**
 * svodctl_cmd_alloc() - `svodctl alloc TIER SIZE [ALIGN] [--hold]`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_alloc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hold", no_argument, NULL, OPT_HOLD },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t size, align = 0;
	struct svod_alloc a;
	int c, fd, ret, do_hold = 0, nr;
	uint32_t tier;
	char **pos;

	while ((c = svodctl_getopt(argc, argv, ":h", longopts)) != -1) {
		if (c == OPT_HOLD)
			do_hold = 1;
		else
			return svodctl_help(argv[0], c == 'h' ? 0 : SVODCTL_USAGE);
	}
	pos = argv + optind;
	nr = argc - optind;
	if (nr < 2 || nr > 3 || svodctl_parse_u64(argv[0], pos[1], &size) ||
	    (nr == 3 && svodctl_parse_u64(argv[0], pos[2], &align)))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	fd = svodctl_session_fd();
	if (fd < 0)
		return svodctl_open_err(argv[0], fd);
	ret = svodctl_parse_tier(fd, pos[0], &tier);
	if (ret)
		return svodctl_err(argv[0], ret, "%s", pos[0]);
	ret = svod_alloc(fd, tier, size, align, &a);
	if (ret == -ENOSPC)
		return svodctl_err(argv[0], ret, "%u", tier);
	if (ret)
		return svodctl_err(argv[0], ret, "(tier %u, size %" PRIu64 ", align %" PRIu64 ")",
				   tier, size, align);
	if (nr_session_handles < MAX_SESSION_HANDLES)
		session_handles[nr_session_handles++] = a.handle;
	printf("handle 0x%" PRIx64 " tier %u device_addr 0x%" PRIx64 " capacity %" PRIu64 "\n",
	       (uint64_t)a.handle, tier, (uint64_t)a.device_addr, (uint64_t)a.capacity);
	fflush(stdout);
	if (do_hold)
		hold();
	return 0;
}

/* Nonzero while `svodctl run` executes its commands. */
static int in_run;

/*
 * FREE, RESOLVE, STAGE and READ name a handle, and a handle lives only in
 * the open file of /dev/svod that allocated it. A svodctl started for one
 * command opens its own file, which holds no handle: such a call could only
 * ever say ESTALE, so it says why instead (exit status 2).
 */
static int outside_run(const char *cmd)
{
	if (in_run)
		return 0;
	fprintf(stderr, "svodctl: %s: only inside `svodctl run`: a handle lives in the open file of "
		"/dev/svod that allocated it, and this svodctl opened a new one, which holds none "
		"(`svodctl run` runs alloc, %s and the rest on one open file)\n", cmd, cmd);
	return SVODCTL_USAGE;
}

/**
 * svodctl_cmd_free() - `svodctl free HANDLE`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_free(int argc, char **argv)
{
	uint64_t h;
	int fd, ret;

	if (svodctl_no_opts(argc, argv, &ret))
		return ret;
	if (argc - optind != 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (outside_run(argv[0]))
		return SVODCTL_USAGE;
	ret = svodctl_parse_handle(argv[optind], &h);
	if (ret)
		return svodctl_err(argv[0], ret, "(no handle \"%s\" in this process)",
				   argv[optind]);
	fd = svodctl_session_fd();
	if (fd < 0)
		return svodctl_open_err(argv[0], fd);
	ret = svod_free(fd, h);
	if (ret)
		return svodctl_err(argv[0], ret, "0x%" PRIx64, h);
	printf("freed 0x%" PRIx64 "\n", h);
	return 0;
}

/**
 * svodctl_cmd_resolve() - `svodctl resolve HANDLE`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_resolve(int argc, char **argv)
{
	struct svod_resolve r;
	uint64_t h;
	int fd, ret;

	if (svodctl_no_opts(argc, argv, &ret))
		return ret;
	if (argc - optind != 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (outside_run(argv[0]))
		return SVODCTL_USAGE;
	ret = svodctl_parse_handle(argv[optind], &h);
	if (ret)
		return svodctl_err(argv[0], ret, "(no handle \"%s\" in this process)",
				   argv[optind]);
	fd = svodctl_session_fd();
	if (fd < 0)
		return svodctl_open_err(argv[0], fd);
	ret = svod_resolve(fd, h, &r);
	if (ret)
		return svodctl_err(argv[0], ret, "0x%" PRIx64, h);
	printf("handle 0x%" PRIx64 " tier %u device_addr 0x%" PRIx64 " capacity %" PRIu64 "\n",
	       h, r.tier, (uint64_t)r.device_addr, (uint64_t)r.capacity);
	return 0;
}

/*
 * Parse the options shared by stage and read (@seed and @length NULL: read's,
 * which has no --pattern or --length); the positional arguments are left
 * in pos[] (at most 3).
 */
static int xfer_opts(int argc, char **argv, char **pos, int *nr_pos,
		     uint32_t *flags, const char **file, uint64_t *seed,
		     uint64_t *length)
{
	static const struct option stage_opts[] = {
		{ "cpu", no_argument, NULL, OPT_CPU },
		{ "dma", no_argument, NULL, OPT_DMA },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "out", required_argument, NULL, OPT_FILE },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "length", required_argument, NULL, OPT_LENGTH },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const struct option read_opts[] = {
		{ "cpu", no_argument, NULL, OPT_CPU },
		{ "dma", no_argument, NULL, OPT_DMA },
		{ "out", required_argument, NULL, OPT_FILE },
		{ "file", required_argument, NULL, OPT_FILE },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	while ((c = svodctl_getopt(argc, argv, ":h", seed ? stage_opts : read_opts)) != -1) {
		switch (c) {
		case OPT_CPU:
			*flags |= SVOD_XFER_CPU;
			break;
		case OPT_DMA:
			*flags |= SVOD_XFER_DMA;
			break;
		case OPT_FILE:
			*file = optarg;
			break;
		case OPT_PATTERN:
			if (svodctl_parse_u64(argv[0], optarg, seed))
				return -EINVAL;
			break;
		case OPT_LENGTH:
			if (svodctl_parse_u64(argv[0], optarg, length))
				return -EINVAL;
			break;
		case 'h':
			return 1;
		default:
			return -EINVAL;
		}
	}
	*nr_pos = argc - optind;
	if (*nr_pos > 3)
		return -EINVAL;
	for (c = 0; c < *nr_pos; c++)
		pos[c] = argv[optind + c];
	return 0;
}

/**
 * svodctl_read_file() - the whole of a file, or of stdin
 * @path: the file, or "-" for stdin
 * @len: out: bytes read
 *
 * Context: main thread.
 * Return: the bytes, with room for one more (the caller's NUL), to free();
 * NULL with errno set on a failure.
 */
unsigned char *svodctl_read_file(const char *path, uint64_t *len)
{
	unsigned char *buf = NULL, *grown;
	size_t cap = 0, used = 0;
	ssize_t n;
	int fd;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0)
		return NULL;
	for (;;) {
		if (used == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			/* One byte more than cap: room for the caller's NUL. */
			grown = realloc(buf, cap + 1);
			if (!grown)
				goto fail;
			buf = grown;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	*len = used;
	return buf ? buf : malloc(1);
fail:
	if (fd != STDIN_FILENO)
		close(fd);
	free(buf);
	return NULL;
}

/**
 * svodctl_cmd_stage() - `svodctl stage HANDLE OFFSET ...`
 * @argc: argument count
 * @argv: arguments
 *
 * With --pattern SEED the bytes are byte i = (SEED + i * 131) & 0xff.
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_stage(int argc, char **argv)
{
	uint64_t h, off, seed = 0, len = 0, done = 0, i;
	const char *file = NULL;
	uint32_t flags = 0;
	unsigned char *buf;
	char *pos[3];
	int nr_pos, fd, ret, have_seed;

	seed = UINT64_MAX;
	ret = xfer_opts(argc, argv, pos, &nr_pos, &flags, &file, &seed, &len);
	if (ret > 0)
		return svodctl_help(argv[0], 0);
	if (ret || nr_pos != 2 || svodctl_parse_handle(pos[0], &h) ||
	    svodctl_parse_u64(argv[0], pos[1], &off))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (outside_run(argv[0]))
		return SVODCTL_USAGE;
	have_seed = seed != UINT64_MAX;
	if (!!file == have_seed || (have_seed && !len))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (file) {
		buf = svodctl_read_file(file, &len);
		if (!buf)
			return svodctl_err(argv[0], -errno, "(reading %s)", file);
	} else {
		buf = malloc(len);
		if (!buf)
			return svodctl_err(argv[0], -ENOMEM, NULL);
		for (i = 0; i < len; i++)
			buf[i] = (unsigned char)(seed + i * 131);
	}
	fd = svodctl_session_fd();
	if (fd < 0) {
		free(buf);
		return svodctl_open_err(argv[0], fd);
	}
	ret = svod_stage(fd, h, off, buf, len, flags, &done);
	free(buf);
	if (ret)
		return svodctl_err(argv[0], ret, "0x%" PRIx64 " (%" PRIu64 " bytes moved)",
				   h, done);
	printf("staged %" PRIu64 " bytes at offset %" PRIu64 " of 0x%" PRIx64 "\n",
	       done, off, h);
	return 0;
}

/**
 * svodctl_cmd_read() - `svodctl read HANDLE OFFSET LENGTH ...`
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_read(int argc, char **argv)
{
	uint64_t h, off, len, done = 0, i;
	const char *file = NULL;
	uint32_t flags = 0;
	unsigned char *buf;
	char *pos[3];
	int nr_pos, fd, out, ret;

	ret = xfer_opts(argc, argv, pos, &nr_pos, &flags, &file, NULL, NULL);
	if (ret > 0)
		return svodctl_help(argv[0], 0);
	if (ret || nr_pos != 3 || svodctl_parse_handle(pos[0], &h) ||
	    svodctl_parse_u64(argv[0], pos[1], &off) ||
	    svodctl_parse_u64(argv[0], pos[2], &len))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (outside_run(argv[0]))
		return SVODCTL_USAGE;
	buf = malloc(len ? len : 1);
	if (!buf)
		return svodctl_err(argv[0], -ENOMEM, NULL);
	fd = svodctl_session_fd();
	if (fd < 0) {
		free(buf);
		return svodctl_open_err(argv[0], fd);
	}
	ret = svod_read(fd, h, off, buf, len, flags, &done);
	if (ret) {
		free(buf);
		return svodctl_err(argv[0], ret, "0x%" PRIx64, h);
	}
	if (file) {
		out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		ret = out < 0 ? -errno : 0;
		if (!ret && write(out, buf, done) != (ssize_t)done)
			ret = errno ? -errno : -EIO;
		if (out >= 0)
			close(out);
		free(buf);
		return ret ? svodctl_err(argv[0], ret, "(writing %s)", file) : 0;
	}
	for (i = 0; i < done; i++)
		printf("%02x%s", buf[i], i % 16 == 15 || i + 1 == done ? "\n" : " ");
	free(buf);
	return 0;
}

/* svod_devices() failed: the driver is not loaded, or another error. */
static int svod_nodev(const char *cmd, int err)
{
	if (err == -ENOENT) {
		fprintf(stderr, "svodctl: %s: ENOENT: %s does not exist: the svod driver is not "
			"loaded (load it: modprobe svod)\n", cmd, SVOD_SYSFS_DRIVER);
		return SVODCTL_NODEV;
	}
	return svodctl_err(cmd, err, "(listing %s)", SVOD_SYSFS_DRIVER);
}

/* What @bdf declares in configfs, for a device that is not bound. */
static int declare_show_pending(const char *bdf)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	char line[SVOD_DECL_LINE_MAX], last[160];
	int nr, i;

	nr = svod_declared_read(bdf, decls, SVOD_DECL_MAX_TIERS);
	if (nr < 0)
		return nr;
	if (svod_decl_status(bdf, last, sizeof(last)) < 0)
		snprintf(last, sizeof(last), "unknown");
	printf("%s: not bound; declared, applied when it binds (last apply: %s):\n",
	       bdf, last);
	for (i = 0; i < nr && i < SVOD_DECL_MAX_TIERS; i++) {
		if (svod_decl_format(&decls[i], line, sizeof(line)) < 0)
			return -ENOSPC;
		printf("%s\n", line);
	}
	return 0;
}

/* @bdf's live tiers; a declaration for it if it is not bound. */
static int declare_show(const char *bdf)
{
	char text[4096];
	int ret;

	ret = svod_tiers_read(bdf, text, sizeof(text));
	if (ret == -ENOENT)
		return declare_show_pending(bdf) ? -ENOENT : 0;
	if (ret < 0)
		return ret;
	printf("%s:\n", bdf);
	fputs(text, stdout);
	return 0;
}

static const struct svodctl_col decl_cols[] = {
	{ "DEVICE", "device", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "NAME", "name", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "BAR", "bar", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "OFFSET", "offset", SVODCTL_HEX, SVODCTL_COL_DEFAULT },
	{ "SIZE", "size", SVODCTL_SIZE, SVODCTL_COL_DEFAULT },
	{ "BASE", "base", SVODCTL_HEX, SVODCTL_COL_DEFAULT },
	{ "ALIGN", "align", SVODCTL_U64, SVODCTL_COL_DEFAULT },
	{ "REGIONS", "reserved_regions", SVODCTL_STR, SVODCTL_COL_DEFAULT },
	{ "OWNER", "owner", SVODCTL_U64, 0 },
	{ "GROUP", "group", SVODCTL_U64, 0 },
	{ "MODE", "mode", SVODCTL_STR, 0 },
};

const struct svodctl_listing svodctl_declare_listing = {
	.name = "devices", .cols = decl_cols, .nr_cols = ARRAY_SIZE(decl_cols),
};

/* The declared tiers of @nr devices as a listing (declare with -o/--json/...). */
static int declare_list(char (*bdfs)[SVOD_NAME_LEN], int nr, const struct svodctl_out *o)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	struct svodctl_table tbl;
	char list[SVODCTL_CELL_LEN];
	struct svodctl_cell *c;
	int i, n, k, ret = 0;
	size_t len;
	uint32_t r;

	svodctl_table_of(&tbl, &svodctl_declare_listing);
	if (svodctl_table_init(&tbl, o->columns))
		return -EINVAL;
	for (i = 0; i < nr && !ret; i++) {
		n = svod_decl_read(bdfs[i], decls, SVOD_DECL_MAX_TIERS);
		if (n < 0) {
			ret = n;
			break;
		}
		for (k = 0; k < n; k++) {
			c = svodctl_table_row(&tbl);
			if (!c) {
				ret = -ENOMEM;
				break;
			}
			svodctl_cell_str(&c[0], bdfs[i]);
			svodctl_cell_str(&c[1], decls[k].name);
			svodctl_cell_u64(&c[2], decls[k].bar);
			svodctl_cell_u64(&c[3], decls[k].offset);
			svodctl_cell_u64(&c[4], decls[k].size);
			svodctl_cell_u64(&c[5], decls[k].base);
			svodctl_cell_u64(&c[6], decls[k].align);
			len = 0;
			list[0] = '\0';
			for (r = 0; r < decls[k].nr_reserved && len < sizeof(list); r++)
				len += (size_t)snprintf(list + len, sizeof(list) - len,
							"%s0x%" PRIx64 "+0x%" PRIx64, r ? "," : "",
							(uint64_t)decls[k].reserved[r].base,
							(uint64_t)decls[k].reserved[r].size);
			svodctl_cell_str(&c[7], list);
			svodctl_cell_u64(&c[8], decls[k].has_access ? decls[k].owner : 0);
			svodctl_cell_u64(&c[9], decls[k].has_access ? decls[k].group : 0);
			snprintf(list, sizeof(list), "%04" PRIo32,
				 decls[k].has_access ? decls[k].mode : SVOD_DECL_DEFAULT_MODE);
			svodctl_cell_str(&c[10], list);
		}
	}
	svodctl_table_print(&tbl, o);
	return ret;
}

/*
 * Replace @bdf's tiers with @text. Text libsvod cannot parse never reaches
 * the kernel: the message names the format and the number grammar, where
 * the kernel log would have nothing to say.
 */
static int declare_write(const char *cmd, const char *bdf, const char *text)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	int ret;

	ret = svod_decl_parse_set(text, decls, SVOD_DECL_MAX_TIERS);
	if (ret == -ERANGE) {
		fprintf(stderr, "svodctl: %s: ERANGE: a number is beyond 2^64 - 1 (bar: "
			"2^32 - 1): write %s\n", cmd, svod_size_forms());
		return SVODCTL_USAGE;
	}
	if (ret < 0) {
		fprintf(stderr, "svodctl: %s: %s: not a declaration: write \"<name> bar=<n> "
			"offset=<off> size=<bytes> [base=<addr>] [align=<n>] "
			"[reserved=<base>+<size>,...]\" per tier (at most %d, names distinct), "
			"each number %s\n", cmd, svod_errno_name(ret), SVOD_DECL_MAX_TIERS,
			svod_size_forms());
		return SVODCTL_USAGE;
	}
	ret = svod_tiers_write(bdf, text);
	if (ret)
		return svodctl_err(cmd, ret, "%s (the kernel log says why)", bdf);
	return declare_show(bdf) ? 1 : 0;
}

/**
 * svodctl_cmd_undeclare() - `svodctl undeclare BDF`
 * @argc: argument count
 * @argv: arguments
 *
 * Removes @BDF's declaration from configfs; its live tiers stay until the
 * device binds again (with its default tier).
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_undeclare(int argc, char **argv)
{
	int ret;

	const char *bdf;

	if (svodctl_no_opts(argc, argv, &ret))
		return ret;
	if (argc - optind != 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	bdf = argv[optind];
	ret = svod_undeclare(bdf);
	if (ret == -ENOENT)
		return svodctl_err(argv[0], ret, "%s has no declaration in %s", bdf,
				   SVOD_CONFIGFS);
	return ret ? svodctl_err(argv[0], ret, "%s", bdf) : 0;
}

/**
 * svodctl_cmd_declare() - `svodctl declare [BDF [DECLARATION | -]]`, or
 *	`svodctl declare --save [FILE]` (persist.c)
 * @argc: argument count
 * @argv: arguments
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_declare(int argc, char **argv)
{
	static const struct option longopts[] = {
		SVODCTL_OUT_LONGOPTS,
		{ "save", no_argument, NULL, OPT_SAVE },
		{}
	};
	char bdfs[16][SVOD_NAME_LEN];
	struct svodctl_out o = {};
	struct svodctl_table probe;
	unsigned char *text;
	uint64_t len;
	int c, i, nr, ret, save = 0;
	char **pos;

	while ((c = svodctl_getopt(argc, argv, ":h" SVODCTL_OUT_SHORTOPTS, longopts)) != -1) {
		if (c == 'h')
			return svodctl_help(argv[0], 0);
		if (c == OPT_SAVE)
			save = 1;
		else if (!svodctl_out_opt(c, optarg, &o))
			return svodctl_help(argv[0], SVODCTL_USAGE);
	}
	pos = argv + optind;
	nr = argc - optind;
	if (save && (o.any || nr > 1))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (save)
		return svodctl_declare_save(argv[0], nr ? pos[0] : NULL);
	if (nr > 2 || (o.any && nr > 1))
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (o.any) {
		svodctl_table_of(&probe, &svodctl_declare_listing);
		if (svodctl_table_init(&probe, o.columns))
			return SVODCTL_USAGE;
		if (nr == 1) {
			snprintf(bdfs[0], sizeof(bdfs[0]), "%s", pos[0]);
		} else {
			nr = svod_devices(bdfs, 16);
			if (nr < 0)
				return svod_nodev(argv[0], nr);
		}
		ret = declare_list(bdfs, nr < 16 ? nr : 16, &o);
		return ret ? svodctl_err(argv[0], ret, NULL) : 0;
	}
	if (nr == 1) {
		ret = declare_show(pos[0]);
		return ret ? svodctl_err(argv[0], ret, "%s", pos[0]) : 0;
	}
	if (nr == 0) {
		nr = svod_devices(bdfs, 16);
		if (nr < 0)
			return svod_nodev(argv[0], nr);
		for (i = 0; i < nr && i < 16; i++) {
			ret = declare_show(bdfs[i]);
			if (ret)
				return svodctl_err(argv[0], ret, "%s", bdfs[i]);
		}
		return 0;
	}
	if (!strcmp(pos[1], "-")) {
		text = svodctl_read_file("-", &len);
		if (!text)
			return svodctl_err(argv[0], -errno, "(reading stdin)");
		text[len ? len - (text[len - 1] == '\n') : 0] = '\0';
		ret = declare_write(argv[0], pos[0], (char *)text);
		free(text);
		return ret;
	}
	return declare_write(argv[0], pos[0], pos[1]);
}

static int split_args(char *line, char **args)
{
	char *tok, *save = NULL;
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_RUN_ARGS - 1)
			return -E2BIG;
		args[n++] = tok;
	}
	args[n] = NULL;
	return n;
}

static const struct svodctl_cmd *find_cmd(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

/*
 * Run one command with getopt reset: optind 0 makes glibc start afresh,
 * also in the middle of a bundle a previous line of a run left behind.
 */
static int run_cmd(const struct svodctl_cmd *c, int argc, char **argv)
{
	optind = 0;
	return c->fn(argc, argv);
}

/**
 * svodctl_cmd_run() - `svodctl run [FILE]`: one command per line, one open file
 * @argc: argument count
 * @argv: arguments
 *
 * Every line is echoed with a "$ " prefix before it runs; a failing line
 * does not stop the script (the error line is the point of some scripts),
 * but sets the exit status: the highest of its lines' (svodctl(1), EXIT
 * STATUS), so 3 when /dev/svod cannot be used, 2 after a usage error (an
 * unknown command too), else 1 if a line failed.
 *
 * Context: main thread.
 * Return: exit status.
 */
int svodctl_cmd_run(int argc, char **argv)
{
	const struct svodctl_cmd *c;
	char line[1024], *args[MAX_RUN_ARGS];
	const char *path = "-";
	int n, ret, status = 0;
	FILE *in = stdin;

	if (svodctl_no_opts(argc, argv, &ret))
		return ret;
	if (argc - optind > 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	if (argc - optind == 1)
		path = argv[optind];
	if (strcmp(path, "-")) {
		in = fopen(path, "re");
		if (!in)
			return svodctl_err(argv[0], -errno, "(opening %s)", path);
	}
	while (fgets(line, sizeof(line), in)) {
		printf("$ %s", line);
		if (!strchr(line, '\n'))
			printf("\n");
		fflush(stdout);
		n = split_args(line, args);
		if (n < 0) {
			svodctl_err(argv[0], n, "(more than %d words)", MAX_RUN_ARGS - 1);
			status = status < SVODCTL_USAGE ? SVODCTL_USAGE : status;
		}
		if (n <= 0)
			continue;
		c = find_cmd(args[0]);
		if (!c || c->fn == svodctl_cmd_run || c->fn == svodctl_cmd_demo) {
			svodctl_err(argv[0], -EINVAL, "(no command \"%s\" in a run)", args[0]);
			status = status < SVODCTL_USAGE ? SVODCTL_USAGE : status;
			continue;
		}
		in_run = 1;
		ret = run_cmd(c, n, args);
		in_run = 0;
		/* Statuses beyond 3 (a bench's) count as failures. */
		ret = ret > SVODCTL_NODEV ? SVODCTL_FAIL : ret;
		status = ret > status ? ret : status;
		fflush(stdout);
	}
	if (in != stdin)
		fclose(in);
	return status;
}

/**
 * svodctl_cmd_bench() - `svodctl bench`: run the harness benchmark
 * @argc: argument count
 * @argv: arguments, passed on to t_bench
 *
 * Context: main thread.
 * Return: exit status (t_bench's, if it ran).
 */
int svodctl_cmd_bench(int argc, char **argv)
{
	char self[4096], path[4200];
	ssize_t n;

	(void)argc;
	if (svodctl_wants_help(argc, argv))
		return svodctl_help(argv[0], 0);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(path, sizeof(path), "%s/t_bench", self);
		argv[0] = path;
		execv(path, argv);
	}
	argv[0] = "t_bench";
	execvp("t_bench", argv);
	return svodctl_err("bench", -errno, "(t_bench not found next to svodctl or on PATH)");
}

int main(int argc, char **argv)
{
	const struct svodctl_cmd *c;

	if (argc < 2)
		return svodctl_help(NULL, SVODCTL_USAGE);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return svodctl_help(NULL, 0);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("svodctl %s\n", SVOD_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc == 2)
			return svodctl_help(NULL, 0);
		if (argc == 3 && find_cmd(argv[2]))
			return svodctl_help(argv[2], 0);
		fprintf(stderr, "svodctl: help: no command \"%s\"\n", argv[2]);
		return svodctl_help(NULL, SVODCTL_USAGE);
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "svodctl: unknown command \"%s\"\n", argv[1]);
		return svodctl_help(NULL, SVODCTL_USAGE);
	}
	return run_cmd(c, argc - 1, argv + 1);
}
