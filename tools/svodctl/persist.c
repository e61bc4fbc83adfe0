// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * svodctl: declarations that survive a reboot. `svodctl declare --save
 * [FILE]` writes every declaration configfs holds, read back from configfs,
 * as lines "<pci name> <tier>" (libsvod.h, svod_decl_file_parse());
 * `svodctl restore FILE` declares them again: a device declared the same is
 * left alone, one declared otherwise replaced only with --force, an absent
 * device skipped (exit 4). The file is parsed whole before anything is
 * applied. svod-restore.service runs the restore at boot.
 */
#define _GNU_SOURCE	/* asprintf() */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "svodctl.h"

#define SAVE_HEADER							\
	"# svod declarations, as `svodctl declare --save` wrote them from configfs.\n" \
	"# One tier per line, \"<pci name> <tier>\" (svodctl declare's format), or\n" \
	"# \"<pci name>\" alone: declared with no tier. `svodctl restore FILE`\n" \
	"# applies them (svodctl(1); svod-restore.service at boot).\n"

/*
 * SVOD_CONFIGFS is missing: svod is not loaded, or configfs not mounted.
 * Either way nothing can be declared (exit 3, as for /dev/svod).
 */
static int cfs_missing(const char *cmd, int err)
{
	if (access("/sys/module/svod", F_OK))
		fprintf(stderr, "svodctl: %s: %s: %s does not exist: the svod driver is not "
			"loaded (load it: modprobe svod)\n", cmd, svod_errno_name(err),
			SVOD_CONFIGFS);
	else
		fprintf(stderr, "svodctl: %s: %s: %s does not exist although svod is loaded: "
			"configfs is not mounted (mount -t configfs none /sys/kernel/config)\n",
			cmd, svod_errno_name(err), SVOD_CONFIGFS);
	return SVODCTL_NODEV;
}

/* Append @s to the growing text *@buf (*@len used, *@cap allocated). */
static int text_add(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	char *grown;

	if (*len + n + 1 > *cap) {
		*cap = (*len + n + 1) * 2;
		grown = realloc(*buf, *cap);
		if (!grown)
			return -ENOMEM;
		*buf = grown;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* The saved file's text: every declaration in configfs, or -errno. */
static int save_text(const char *cmd, char **text, size_t *len)
{
	struct svod_tier_decl decls[SVOD_DECL_MAX_TIERS];
	char (*bdfs)[SVOD_NAME_LEN] = NULL;
	char line[SVOD_NAME_LEN + SVOD_DECL_LINE_MAX + 2], tier[SVOD_DECL_LINE_MAX];
	size_t cap = 0;
	int nr, i, k, n, ret;

	*text = NULL;
	*len = 0;
	nr = svod_declared_devices(NULL, 0);
	if (nr > 0) {
		bdfs = calloc((size_t)nr, sizeof(*bdfs));
		if (!bdfs)
			return -ENOMEM;
		/* One made meanwhile waits for the next save. */
		n = svod_declared_devices(bdfs, (unsigned int)nr);
		nr = n < nr ? n : nr;
	}
	if (nr < 0) {
		free(bdfs);
		return nr;
	}
	ret = text_add(text, len, &cap, SAVE_HEADER);
	for (i = 0; !ret && i < nr; i++) {
		n = svod_declared_read(bdfs[i], decls, SVOD_DECL_MAX_TIERS);
		if (n < 0) {
			ret = n;
			svodctl_err(cmd, n, "%s (reading its declaration in %s: nothing saved)",
				    bdfs[i], SVOD_CONFIGFS);
			break;
		}
		if (n == 0) {
			snprintf(line, sizeof(line), "%s\n", bdfs[i]);
			ret = text_add(text, len, &cap, line);
		}
		for (k = 0; !ret && k < n && k < SVOD_DECL_MAX_TIERS; k++) {
			ret = svod_decl_format(&decls[k], tier, sizeof(tier));
			if (ret < 0) {
				svodctl_err(cmd, ret, "%s: tier %s (formatting it: nothing saved)",
					    bdfs[i], decls[k].name);
				break;
			}
			snprintf(line, sizeof(line), "%s %s\n", bdfs[i], tier);
			ret = text_add(text, len, &cap, line);
		}
	}
	free(bdfs);
	if (ret < 0) {
		free(*text);
		*text = NULL;
	}
	return ret < 0 ? ret : 0;
}

/*
 * Replace @path with @text whole: a new file beside it, synced, renamed
 * over it; a failure leaves the old file as it was.
 */
static int write_whole(const char *path, const char *text, size_t len)
{
	char *tmp;
	int fd, ret = 0;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	errno = 0;
	fd = mkstemp(tmp);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	if (fchmod(fd, 0644) || write(fd, text, len) != (ssize_t)len || fsync(fd))
		ret = errno ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	free(tmp);
	return ret;
}

/**
 * svodctl_declare_save() - `svodctl declare --save [FILE]`
 * @cmd: the subcommand, for messages
 * @path: the file, or NULL or "-" for stdout
 *
 * Reads every declaration from configfs first; a file is written only
 * when all of them could be read, and then replaced whole.
 *
 * Context: main thread.
 * Return: exit status: 0, 1 (a declaration unreadable, the file not
 * written), 3 (svod not loaded or configfs not mounted).
 */
int svodctl_declare_save(const char *cmd, const char *path)
{
	size_t len;
	char *text;
	int ret;

	if (access(SVOD_CONFIGFS, F_OK))
		return cfs_missing(cmd, -errno);
	ret = save_text(cmd, &text, &len);
	if (ret == -ENOENT)
		return cfs_missing(cmd, ret);
	if (ret)
		return SVODCTL_FAIL;
	if (!path || !strcmp(path, "-")) {
		ret = fwrite(text, 1, len, stdout) == len && !fflush(stdout) ? 0 : -EIO;
		free(text);
		return ret ? svodctl_err(cmd, ret, "(writing stdout)") : SVODCTL_OK;
	}
	ret = write_whole(path, text, len);
	free(text);
	return ret ? svodctl_err(cmd, ret, "(writing %s: left as it was)", path) : SVODCTL_OK;
}

/* Why svod_decl_file_parse() refused @line of @path, in one line (exit 2). */
static int restore_refused(const char *cmd, const char *path, int err, unsigned int line)
{
	const char *why;

	switch (err) {
	case -ERANGE:
		why = "a number is beyond 2^64 - 1 (bar: 2^32 - 1)";
		break;
	case -EEXIST:
		why = "a tier this device already has in the file";
		break;
	case -E2BIG:
		why = "more than 8 tiers for this device";
		break;
	default:
		why = "not \"<pci name> <name> bar=<n> offset=<off> size=<bytes> [base=<addr>] "
		      "[align=<n>] [reserved=<base>+<size>,...] [owner=<uid>] [group=<gid>] "
		      "[mode=<octal>]\", a pci name as the kernel spells it (0000:00:04.0)";
		break;
	}
	fprintf(stderr, "svodctl: %s: %s: %s:%u: %s; numbers are %s. Nothing was restored.\n",
		cmd, svod_errno_name(err), path, line, why, svod_size_forms());
	return SVODCTL_USAGE;
}

/* Restore one device; SVODCTL_OK, SVODCTL_FAIL or SVODCTL_ABSENT. */
static int restore_device(const char *cmd, const struct svod_dev_decl *dev, int force)
{
	struct svod_tier_decl cur[SVOD_DECL_MAX_TIERS];
	char path[256];
	int nr, ret;

	snprintf(path, sizeof(path), SVOD_SYSFS_DEVICES "/%s", dev->bdf);
	if (access(path, F_OK)) {
		fprintf(stderr, "svodctl: %s: ENODEV: %s is not present (no %s): skipped, the "
			"file's other devices restored\n", cmd, dev->bdf, path);
		return SVODCTL_ABSENT;
	}
	nr = svod_declared_read(dev->bdf, cur, SVOD_DECL_MAX_TIERS);
	if (nr >= 0 && nr <= SVOD_DECL_MAX_TIERS &&
	    svod_decl_equal(cur, (unsigned int)nr, dev->tiers, dev->nr)) {
		printf("%s: declared so already: left alone\n", dev->bdf);
		return SVODCTL_OK;
	}
	if (nr != -ENOENT && !force) {
		fprintf(stderr, "svodctl: %s: EEXIST: %s is declared otherwise (svodctl declare "
			"%s shows it; restore --force replaces it): left alone\n", cmd,
			dev->bdf, dev->bdf);
		return SVODCTL_FAIL;
	}
	ret = svod_decl_write(dev->bdf, dev->tiers, dev->nr);
	if (ret)
		return svodctl_err(cmd, ret, "%s: not restored, its declaration as it was (a "
				   "refused commit: the kernel log says why)", dev->bdf);
	printf("%s: %s, %u tier%s\n", dev->bdf, nr == -ENOENT ? "restored" : "replaced",
	       dev->nr, dev->nr == 1 ? "" : "s");
	return SVODCTL_OK;
}

/**
 * svodctl_cmd_restore() - `svodctl restore [-f|--force] FILE`
 * @argc: argument count
 * @argv: arguments
 *
 * Parses the whole file first (a bad line: exit 2, nothing applied), then
 * declares each device as svodctl declare would. Devices configfs
 * declares and the file does not name are left as they are.
 *
 * Context: main thread.
 * Return: exit status: 0 (every device restored or already so), 1 (a
 * present device not restored: declared otherwise without --force, or
 * refused), 2 (usage, a malformed file), 3 (svod not loaded or configfs not
 * mounted), 4 (some devices absent, every present one restored).
 */
int svodctl_cmd_restore(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct svod_dev_decl *devs;
	unsigned int cap = 1, line, i;
	int c, force = 0, nr, ret, status = SVODCTL_OK;
	const char *path;
	uint64_t len;
	char *text;

	while ((c = svodctl_getopt(argc, argv, ":hf", longopts)) != -1) {
		if (c == 'f')
			force = 1;
		else
			return svodctl_help(argv[0], c == 'h' ? 0 : SVODCTL_USAGE);
	}
	if (argc - optind != 1)
		return svodctl_help(argv[0], SVODCTL_USAGE);
	path = argv[optind];
	text = (char *)svodctl_read_file(path, &len);
	if (!text)
		return svodctl_err(argv[0], -errno, "(reading %s)", path);
	text[len] = '\0';
	if (strlen(text) != len) {
		fprintf(stderr, "svodctl: %s: EINVAL: %s has a NUL byte: not a text file. Nothing "
			"was restored.\n", argv[0], path);
		free(text);
		return SVODCTL_USAGE;
	}
	for (i = 0; i < len; i++)
		cap += text[i] == '\n';
	devs = calloc(cap, sizeof(*devs));
	if (!devs) {
		free(text);
		return svodctl_err(argv[0], -ENOMEM, NULL);
	}
	nr = svod_decl_file_parse(text, devs, cap, &line);
	free(text);
	if (nr < 0) {
		free(devs);
		return nr == -ENOMEM ? svodctl_err(argv[0], nr, NULL) :
				       restore_refused(argv[0], path, nr, line);
	}
	if (nr > 0 && access(SVOD_CONFIGFS, F_OK)) {
		ret = -errno;
		free(devs);
		return cfs_missing(argv[0], ret);
	}
	for (i = 0; i < (unsigned int)nr; i++) {
		ret = restore_device(argv[0], &devs[i], force);
		/* A failure outranks an absence: 4 only when all else went well. */
		if (ret == SVODCTL_FAIL || (ret == SVODCTL_ABSENT && status == SVODCTL_OK))
			status = ret;
		fflush(stdout);
	}
	free(devs);
	return status;
}
